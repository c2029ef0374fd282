use std::collections::HashMap;
use std::fmt;

/// A stock-keeping unit, e.g. "TEA-GRN-250".
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sku(String);

#[derive(Debug)]
pub enum InventoryError {
    UnknownSku(Sku),
    InsufficientStock { sku: Sku, requested: u32, available: u32 },
}

impl fmt::Display for InventoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InventoryError::UnknownSku(sku) => write!(f, "no such item: {}", sku.0),
            InventoryError::InsufficientStock { sku, requested, available } => write!(
                f,
                "cannot take {requested} of {}: only {available} left",
                sku.0
            ),
        }
    }
}

impl std::error::Error for InventoryError {}

#[derive(Default)]
pub struct Inventory {
    levels: HashMap<Sku, u32>,
    reorder_at: HashMap<Sku, u32>,
}

impl Inventory {
    pub fn receive(&mut self, sku: Sku, qty: u32) {
        *self.levels.entry(sku).or_insert(0) += qty;
    }

    pub fn set_reorder_point(&mut self, sku: Sku, level: u32) {
        self.reorder_at.insert(sku, level);
    }

    /// Removes `qty` units; fails without changing anything if there are not enough.
    pub fn take(&mut self, sku: &Sku, qty: u32) -> Result<u32, InventoryError> {
        let level = self
            .levels
            .get_mut(sku)
            .ok_or_else(|| InventoryError::UnknownSku(sku.clone()))?;
        if *level < qty {
            return Err(InventoryError::InsufficientStock {
                sku: sku.clone(),
                requested: qty,
                available: *level,
            });
        }
        *level -= qty;
        Ok(*level)
    }

    /// Items at or below their reorder point, sorted so the report is stable.
    pub fn to_reorder(&self) -> Vec<(&Sku, u32)> {
        let mut out: Vec<(&Sku, u32)> = self
            .reorder_at
            .iter()
            .filter_map(|(sku, &at)| {
                let level = self.levels.get(sku).copied().unwrap_or(0);
                (level <= at).then_some((sku, level))
            })
            .collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sku(s: &str) -> Sku {
        Sku(s.to_string())
    }

    #[test]
    fn taking_more_than_available_changes_nothing() {
        let mut inv = Inventory::default();
        inv.receive(sku("TEA-GRN-250"), 12);
        let err = inv.take(&sku("TEA-GRN-250"), 20).unwrap_err();
        assert!(err.to_string().contains("only 12 left"));
        assert_eq!(inv.take(&sku("TEA-GRN-250"), 12).unwrap(), 0);
    }

    #[test]
    fn reorder_report_is_sorted() {
        let mut inv = Inventory::default();
        for (name, qty, at) in [("B-2", 3, 5), ("A-1", 1, 2), ("C-3", 9, 4)] {
            inv.receive(sku(name), qty);
            inv.set_reorder_point(sku(name), at);
        }
        let names: Vec<&str> = inv.to_reorder().iter().map(|(s, _)| s.0.as_str()).collect();
        assert_eq!(names, ["A-1", "B-2"]);
    }
}

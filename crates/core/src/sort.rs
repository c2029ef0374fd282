//! Sorting through one compiled sort. The standard `sort_by` is generic over the item and the
//! comparison, so every call site with its own closure compiles a sort of its own (driftsort
//! and its small-sort networks, 2–4 KB of wasm a site; 34 KB of the module went this way). Here
//! every caller sorts a list of positions with the same comparator type, so the standard sort
//! is compiled once, and the items are then moved into that order. The lists Tandem sorts hold
//! at most a few thousand items; the indirect comparison costs microseconds there.
//!
//! For the same reason maps (`BTreeMap`, `BTreeSet`, serde_json's `Map`) are filled with
//! `insert` rather than `collect()`: collecting sorts the pairs first, with a sort compiled for
//! each iterator type that is collected.

use std::cmp::Ordering;

/// The positions `0..len`, ordered by `cmp`; equal ones keep their order (a stable sort).
fn order(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    // The one call of the standard sort (clippy.toml disallows it everywhere else).
    #[allow(clippy::disallowed_methods)]
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Sorts `items` by `cmp`, keeping equal items in their order, as `slice::sort_by` does.
pub fn sort_by<T>(items: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    let order = order(items.len(), &|a, b| cmp(&items[a], &items[b]));
    // Each position occurs once in `order`, so every slot is taken exactly once.
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    items.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

/// Sorts `items` by `key`, keeping items with equal keys in their order.
pub fn sort_by_key<T, K: Ord>(items: &mut Vec<T>, key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` in their natural order.
pub fn sort<T: Ord>(items: &mut Vec<T>) {
    sort_by(items, T::cmp);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same order as the standard stable sort, ties included.
        #[test]
        fn same_as_the_standard_stable_sort(items in proptest::collection::vec((0u8..5, any::<u16>()), 0..300)) {
            let mut ours = items.clone();
            sort_by_key(&mut ours, |&(k, _)| k);
            let mut theirs = items;
            theirs.sort_by_key(|&(k, _)| k);
            prop_assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn sorts_owned_items_without_losing_any() {
        let mut words: Vec<String> = ["pear", "fig", "apple", "fig"].map(String::from).to_vec();
        sort(&mut words);
        assert_eq!(words, ["apple", "fig", "fig", "pear"]);
        sort_by(&mut words, |a, b| b.len().cmp(&a.len()));
        assert_eq!(words, ["apple", "pear", "fig", "fig"]);
    }
}

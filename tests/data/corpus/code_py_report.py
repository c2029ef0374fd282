"""Summarise monthly expenses from a CSV export and print a small report."""

from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path


@dataclass
class Category:
    name: str
    amounts: list[float] = field(default_factory=list)

    @property
    def total(self) -> float:
        return round(sum(self.amounts), 2)

    @property
    def median(self) -> float:
        return statistics.median(self.amounts) if self.amounts else 0.0


def parse_row(row: dict[str, str]) -> tuple[date, str, float] | None:
    """Returns None for rows we cannot use (refunds, blank amounts, bad dates)."""
    try:
        when = date.fromisoformat(row["date"].strip())
        amount = float(row["amount"].replace(",", "."))
    except (KeyError, ValueError):
        return None
    if amount <= 0:
        return None
    return when, row.get("category", "other").strip().lower() or "other", amount


def summarise(path: Path, month: str) -> dict[str, Category]:
    categories: dict[str, Category] = defaultdict(lambda: Category(name=""))
    with path.open(newline="", encoding="utf-8") as fh:
        for raw in csv.DictReader(fh):
            parsed = parse_row(raw)
            if parsed is None:
                continue
            when, name, amount = parsed
            if when.strftime("%Y-%m") != month:
                continue
            cat = categories[name]
            cat.name = name
            cat.amounts.append(amount)
    return dict(categories)


def render(categories: dict[str, Category], budget: float = 2500.0) -> str:
    lines = [f"{'category':<16}{'count':>7}{'median':>10}{'total':>11}"]
    grand = 0.0
    for cat in sorted(categories.values(), key=lambda c: c.total, reverse=True):
        lines.append(f"{cat.name:<16}{len(cat.amounts):>7}{cat.median:>10.2f}{cat.total:>11.2f}")
        grand += cat.total
    lines.append("-" * 44)
    status = "over" if grand > budget else "within"
    lines.append(f"{'total':<33}{grand:>11.2f}  ({status} budget of {budget:.0f})")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    csv_path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("expenses.csv")
    month = sys.argv[2] if len(sys.argv) > 2 else date.today().strftime("%Y-%m")
    print(render(summarise(csv_path, month)))

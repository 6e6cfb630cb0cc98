"""Money as the reaper shows it: a figure, where it came from, and when (docs/prices.md).

A dollar figure is never a bare float: it is AWS's list price read live from the Price List API,
or the shipped copy of AWS's price list, and says which and when. A resource AWS cannot price has
no Price (None, "unpriced"), never $0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

LIVE = "AWS Price List API"
SHIPPED = "shipped copy of AWS's price list"
# a figure the admin typed in (a stack parameter kept as an explicit override where AWS's price list has no
# entry the reaper can read: Bedrock's price per model-unit hour, docs/prices.md); every figure says so
ADMIN_OVERRIDE = "admin override"


@dataclass(frozen=True)
class Price:
    """An hourly (or per GB-month) list price in USD, with its source and the date it is from."""

    usd: float
    source: str  # LIVE, SHIPPED, or ADMIN_OVERRIDE (with the parameter's name)
    as_of: str | None = None  # ISO date: the price list's publication date (live) or the copy's date (shipped)
    sku: str | None = None  # the price list's SKU, when one product priced it

    @property
    def live(self) -> bool:
        return self.source == LIVE

    @property
    def label(self) -> str:
        """'AWS Price List API 2026-12-05', "shipped copy of AWS's price list (dated 2026-12-02)"."""
        if self.live:
            return f"{LIVE} {self.as_of}" if self.as_of else LIVE
        return f"{self.source} (dated {self.as_of})" if self.as_of else self.source

    def times(self, factor: float) -> Price:
        """The price of `factor` units (instances, GB-hours), to a hundredth of a cent; one unit is AWS's own figure."""
        return self if factor == 1 else replace(self, usd=round(self.usd * factor, 4))

    def to_json(self) -> dict[str, object]:
        return {"usd": self.usd, "source": self.source, "as_of": self.as_of, "sku": self.sku}


def total(prices: Iterable[Price | None]) -> Price | None:
    """The sum of several prices; None when any is unpriced (a partial sum would understate the cost).

    The sum says the weakest source among its parts (the shipped copy, if any part came from it) and
    the oldest date, with no single SKU."""
    parts = list(prices)
    if not parts or any(p is None for p in parts):
        return None
    known = [p for p in parts if p is not None]
    shipped = [p for p in known if not p.live]
    dates = sorted(p.as_of for p in known if p.as_of)
    source = shipped[0].source if shipped else LIVE
    return Price(round(sum(p.usd for p in known), 4), source, dates[0] if dates else None, known[0].sku if len(known) == 1 else None)


def source_of(price: Price | None) -> str:
    """A short word for a table column: 'live', 'shipped', 'admin', or 'unpriced'."""
    if price is None:
        return "unpriced"
    if price.source.startswith(ADMIN_OVERRIDE):
        return "admin"
    return "live" if price.live else "shipped"

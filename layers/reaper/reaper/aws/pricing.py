"""Estimated list prices from the table kept beside this module (prices.json).

Unknown region or type gives None: an estimate is shown only when it is a real list price.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

PRICE_FILE = Path(__file__).with_name("prices.json")

# price-table section for each kind of usage
NOTEBOOK = "sagemaker-notebook"
HOSTING = "sagemaker-hosting"
TRAINING = "sagemaker-training"
EC2 = "ec2"
FSX_LUSTRE = "fsx-lustre-gb-month"
STUDIO = "sagemaker-studio"  # Studio app instances (JupyterLab, Code Editor, KernelGateway)


@cache
def _table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PRICE_FILE.read_text())
    return data


def row(section: str, region: str, key: str | None) -> dict[str, Any] | None:
    """One price row: {"usd", "source", "as_of"[, "note"]}, or None when the table has none."""
    found = _table().get(section, {}).get(region, {}).get(key) if key else None
    if found is None:
        return None
    return dict(found) if isinstance(found, dict) else {"usd": found, "source": None, "as_of": _table().get("_as_of")}


def _usd(section: str, region: str, key: str | None) -> float | None:
    found = row(section, region, key)
    return None if found is None or found.get("usd") is None else float(found["usd"])


def hourly(section: str, region: str, instance_type: str | None, count: int = 1) -> float | None:
    if not instance_type:
        return None
    price = _usd(section, region, instance_type)
    return None if price is None else round(price * max(count, 0), 4)


def fsx_hourly(region: str, deployment: str, per_unit_throughput: int | None, capacity_gib: int) -> float | None:
    """FSx for Lustre storage cost per hour: GB-month price x capacity / 730."""
    key = deployment if per_unit_throughput is None or deployment.startswith("SCRATCH") else f"{deployment}/{per_unit_throughput}"
    price = _usd(FSX_LUSTRE, region, key)
    return None if price is None else round(price * capacity_gib / 730.0, 4)

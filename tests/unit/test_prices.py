"""prices.json: every row says what it costs, where that figure comes from and when it was entered."""

from __future__ import annotations

import importlib.util
import json
from datetime import date
from pathlib import Path

from reaper.aws import pricing

ROOT = Path(__file__).resolve().parents[2]


def rows():
    table = json.loads(pricing.PRICE_FILE.read_text())
    for section, regions in table.items():
        if section.startswith("_"):
            continue
        for region, entries in regions.items():
            for key, row in entries.items():
                yield section, region, key, row


def test_every_row_has_a_price_a_source_and_a_date():
    seen = 0
    for section, region, key, row in rows():
        seen += 1
        where = f"{section}/{region}/{key}"
        assert isinstance(row, dict) and set(row) <= {"usd", "source", "as_of", "note"}, where
        assert isinstance(row["usd"], int | float) and 0 < row["usd"] < 1000, where
        assert row["source"].startswith(("https://aws.amazon.com/", "AWS Price List API")), where
        assert date.fromisoformat(row["as_of"]) <= date(2027, 1, 1), where
    assert seen > 200


def test_prices_known_to_predate_the_june_2025_p4_p5_cut_say_so():
    flagged = {(s, k) for s, _, k, row in rows() if "June 2025" in row.get("note", "")}
    assert ("ec2", "p5.48xlarge") in flagged and ("sagemaker-training", "ml.p4d.24xlarge") in flagged
    assert not any(k.removeprefix("ml.").startswith("g5.") for _, k in flagged)


def test_the_reaper_still_reads_the_table():
    assert pricing.hourly(pricing.TRAINING, "us-east-1", "ml.g5.xlarge", 2) == round(
        2 * pricing.row(pricing.TRAINING, "us-east-1", "ml.g5.xlarge")["usd"], 4
    )
    assert pricing.hourly(pricing.EC2, "eu-west-3", "g5.xlarge") is None
    assert pricing.hourly(pricing.EC2, "us-east-1", None) is None
    assert pricing.fsx_hourly("us-east-1", "SCRATCH_2", None, 1200) is not None


def test_the_refresh_script_writes_rows_with_their_source_and_date():
    spec = importlib.util.spec_from_file_location("refresh_prices", ROOT / "scripts" / "refresh_prices.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    product = {
        "product": {"sku": "ABC123"},
        "terms": {"OnDemand": {"t": {"priceDimensions": {"d": {"pricePerUnit": {"USD": "1.2120000000"}}}}}},
    }
    usd = module.on_demand_usd(product)
    assert module.price_row(product, "AmazonEC2", usd, "2026-12-02") == {
        "usd": 1.212,
        "source": "AWS Price List API: AmazonEC2 SKU ABC123 (on-demand)",
        "as_of": "2026-12-02",
    }

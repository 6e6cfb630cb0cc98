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
        assert row["source"].startswith(("https://aws.amazon.com/", "AWS Price List API", "AWS price list, shipped copy")), where
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


def refresh_module():
    spec = importlib.util.spec_from_file_location("refresh_prices", ROOT / "scripts" / "refresh_prices.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prices_json_is_what_the_shipped_catalogue_builds():
    # Given the committed catalogue of AWS's price-list entries, When the same parser rebuilds
    # prices.json from it, Then the file is identical: every price-list row comes from an entry
    refresh = refresh_module()
    assert refresh.main(["--from-files", str(refresh.CATALOGUE), "--check"]) == 0
    built = refresh.build(refresh.entries_from_files(refresh.CATALOGUE), "AWS price list, shipped copy")
    shipped = [(s, r, k) for s, r, k, row in rows() if row["source"].startswith("AWS price list")]
    assert len(shipped) > 1000 and all(built[s][r][k] == pricing.row(s, r, k) for s, r, k in shipped)
    assert len(built["sagemaker-studio"]) >= 25  # regions, not the three typed in by hand


def test_rows_typed_by_hand_say_so_and_give_way_to_the_price_list():
    refresh = refresh_module()
    typed = [row for *_, row in rows() if not row["source"].startswith("AWS price list")]
    assert typed and all(refresh.TRANSCRIBED in row["note"] for row in typed)
    previous = {
        "_as_of": "2026-12-02",
        "sagemaker-studio": {
            "us-east-1": {"ml.x.large": {"usd": 9.0, "source": "https://aws.amazon.com/sagemaker/pricing/", "as_of": "2026-12-02"}}
        },
    }
    built = {
        "sagemaker-studio": {"us-east-1": {"ml.x.large": {"usd": 1.0, "source": "AWS price list, shipped copy: S", "as_of": "2025-06-16"}}}
    }
    assert refresh.merge(previous, built, keep_typed=True)["sagemaker-studio"]["us-east-1"]["ml.x.large"]["usd"] == 1.0
    kept = refresh.merge(previous, {}, keep_typed=True)["sagemaker-studio"]["us-east-1"]["ml.x.large"]
    assert kept["usd"] == 9.0 and refresh.TRANSCRIBED in kept["note"]
    assert refresh.merge(previous, {"sagemaker-studio": {}}, keep_typed=False)["sagemaker-studio"] == {}
    assert refresh.merge(previous, {}, keep_typed=False)["sagemaker-studio"]["us-east-1"]  # a section the build lacks: kept
    assert refresh.merge(previous, {}, keep_typed=False, keep_unbuilt=False)["sagemaker-studio"] == {}  # --drop-typed


def test_aws_price_page_data_becomes_get_products_entries_with_sku_and_date():
    refresh = refresh_module()
    doc = {
        "manifest": {"hawkFilePublicationDate": "2025-06-16T19:32:43Z"},
        "regions": {
            "EU (Ireland)": {
                "SKU1.JRTCKXETXF.6YS6EN2CT7": {
                    "rateCode": "SKU1.JRTCKXETXF.6YS6EN2CT7",
                    "price": "0.2300000000",
                    "Instance": "ml.m5.xlarge",
                    "Instance Type": "ml.m5.xlarge-Notebook",
                    "Component": "Studio-Notebook",
                    "VCPU": "4",
                    "Memory": "16 GiB",
                    "Clock Speed": "3.1 GHz",
                }
            },
            "AWS GovCloud (US)": {
                "SKU2.JRTCKXETXF.6YS6EN2CT7": {
                    "rateCode": "SKU2.JRTCKXETXF.6YS6EN2CT7",
                    "price": "0.3",
                    "Instance": "ml.m5.xlarge",
                    "Instance Type": "x",
                    "Component": "Studio-Notebook",
                    "VCPU": "4",
                    "Memory": "16 GiB",
                    "Clock Speed": "3.1 GHz",
                }
            },
        },
    }
    (entry,) = refresh.entries_from_price_page_data(doc)
    assert set(entry) == {"product", "serviceCode", "terms", "version", "publicationDate"}
    assert entry["product"]["sku"] == "SKU1" and entry["product"]["attributes"]["regionCode"] == "eu-west-1"
    assert "usagetype" not in entry["product"]["attributes"]
    row = refresh.build([entry], "AWS price list, shipped copy")["sagemaker-studio"]["eu-west-1"]["ml.m5.xlarge"]
    assert row == {
        "usd": 0.23,
        "source": "AWS price list, shipped copy: AmazonSageMaker SKU SKU1 (OnDemand SKU1.JRTCKXETXF.6YS6EN2CT7), "
        "publicationDate 2025-06-16T19:32:43Z",
        "as_of": "2025-06-16",
    }


def _entry(service, sku, attrs, usd, unit="Hrs"):
    dim = {"rateCode": f"{sku}.T.R", "unit": unit, "pricePerUnit": {"USD": usd}}
    return {
        "product": {"sku": sku, "attributes": attrs},
        "serviceCode": service,
        "terms": {"OnDemand": {f"{sku}.T": {"priceDimensions": {f"{sku}.T.R": dim}}}},
        "publicationDate": "2026-11-30T00:00:00Z",
    }


def test_live_usage_types_land_in_their_sections():
    refresh = refresh_module()
    sm = "AmazonSageMaker"
    entries = [
        _entry(sm, "A", {"regionCode": "ap-south-2", "usagetype": "APS3-Train:ml.r5.4xlarge", "instanceName": "ml.r5.4xlarge"}, "1.2"),
        _entry(sm, "B", {"regionCode": "us-east-1", "usagetype": "USE1-Notebk:ml.t3.medium", "instanceName": "ml.t3.medium"}, "0.05"),
        _entry(sm, "C", {"regionCode": "us-east-1", "usagetype": "USE1-Studio:ml.g4dn.xlarge", "instanceName": "ml.g4dn.xlarge"}, "0.736"),
        _entry(sm, "D", {"regionCode": "us-east-1", "usagetype": "USE1-Studio:JupyterLab-ml.g4dn.xlarge"}, "0.7364"),
        _entry(sm, "K", {"regionCode": "eu-west-1", "usagetype": "EU-Studio:KernelGateway-ml.t3.medium"}, "0.05"),
        _entry(sm, "E", {"regionCode": "us-east-1", "usagetype": "USE1-Host:ml.m5.large", "instanceName": "ml.m5.large"}, "0.0000000000"),
        _entry(sm, "F", {"regionCode": "us-east-1", "usagetype": "USE1-TrainingPlanUpfrontFee:ml.p4d.24xlarge"}, "13.57", unit="Quantity"),
        _entry("AmazonEC2", "G", {"regionCode": "us-east-1", "instanceType": "g6e.xlarge", **refresh.EC2_FILTERS}, "1.861"),
        _entry("AmazonEC2", "H", {"regionCode": "us-east-1", "instanceType": "m5.large", **refresh.EC2_FILTERS}, "0.096"),
        _entry(
            "AmazonEC2", "I", {"regionCode": "us-east-1", "instanceType": "g6e.2xlarge", **refresh.EC2_FILTERS, "tenancy": "Dedicated"}, "3"
        ),
    ]
    table = refresh.build(entries, "AWS Price List API")
    assert table["sagemaker-training"]["ap-south-2"]["ml.r5.4xlarge"]["usd"] == 1.2
    assert table["sagemaker-notebook"]["us-east-1"]["ml.t3.medium"]["as_of"] == "2026-11-30"
    assert "SKU D " in table["sagemaker-studio"]["us-east-1"]["ml.g4dn.xlarge"]["source"]  # JupyterLab's SKU wins
    assert "SKU K " in table["sagemaker-studio"]["eu-west-1"]["ml.t3.medium"]["source"]
    assert "sagemaker-hosting" not in table  # a $0 row is never a price
    assert table["ec2"] == {"us-east-1": {"g6e.xlarge": table["ec2"]["us-east-1"]["g6e.xlarge"]}}
    assert set(table) == {"sagemaker-training", "sagemaker-notebook", "sagemaker-studio", "ec2"}


def test_regions_and_locations_come_from_botocore():
    refresh = refresh_module()
    regions = refresh.sagemaker_regions()
    assert len(regions) >= 34 and {"us-east-1", "ap-south-2", "mx-central-1"} <= set(regions)
    names = refresh.region_by_location()
    assert names["EU (Ireland)"] == "eu-west-1" and names["US East (N. Virginia)"] == "us-east-1"


def test_a_coverage_read_that_never_ends_is_said_not_guessed():
    from datetime import date

    from reaper.aws import discounts

    class Endless:  # Cost Explorer answering a next token forever
        def get_savings_plans_coverage(self, **_):
            return {"SavingsPlansCoverages": [], "NextToken": "again"}

    class Idle:
        def list_enrollment_statuses(self):
            return {"items": [{"status": "Inactive"}]}

    found = discounts.read(Endless(), Idle(), date(2026, 12, 5))
    assert found.unavailable and "TooManyPages" in found.unavailable and found.after("notebook", 10.0) is None

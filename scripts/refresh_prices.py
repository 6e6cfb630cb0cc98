"""Rebuild layers/reaper/reaper/aws/prices.json from the AWS Price List API.

    AWS_PROFILE=... .venv/bin/python scripts/refresh_prices.py [--region us-east-1 ...]

Needs credentials allowed pricing:GetProducts. Keeps the table's shape: every row it writes is
{"usd", "source", "as_of"}, the source naming the Price List API service code and SKU, the date
today's (UTC). Types the API does not price in a region are left out (the reaper then says
"unknown", never guesses). FSx for Lustre storage rows are not refreshed (entered by hand from
https://aws.amazon.com/fsx/lustre/pricing/).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3

PRICES = Path(__file__).resolve().parent.parent / "layers" / "reaper" / "reaper" / "aws" / "prices.json"
LOCATIONS = {
    "us-east-1": "US East (N. Virginia)",
    "us-east-2": "US East (Ohio)",
    "us-west-2": "US West (Oregon)",
    "eu-west-1": "EU (Ireland)",
    "eu-central-1": "EU (Frankfurt)",
    "ap-northeast-1": "Asia Pacific (Tokyo)",
}
# SageMaker's usage-type suffixes for each section of the table
SAGEMAKER_SECTIONS = {"sagemaker-notebook": "Notebk:", "sagemaker-hosting": "Host:", "sagemaker-training": "Train:"}


def products(pricing: Any, service: str, filters: dict[str, str]) -> Iterator[dict[str, Any]]:
    paginator = pricing.get_paginator("get_products")
    api_filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()]
    for page in paginator.paginate(ServiceCode=service, Filters=api_filters):
        for item in page["PriceList"]:
            yield json.loads(item)


def on_demand_usd(product: dict[str, Any]) -> float | None:
    for term in product.get("terms", {}).get("OnDemand", {}).values():
        for dim in term.get("priceDimensions", {}).values():
            usd = float(dim.get("pricePerUnit", {}).get("USD", "0") or 0)
            if usd > 0:
                return round(usd, 4)
    return None


def price_row(product: dict[str, Any], service: str, usd: float, as_of: str) -> dict[str, Any]:
    """A row of prices.json: the price, where it comes from, and when it was read."""
    sku = product.get("product", {}).get("sku", "?")
    return {"usd": usd, "source": f"AWS Price List API: {service} SKU {sku} (on-demand)", "as_of": as_of}


def refresh(regions: list[str]) -> dict[str, Any]:
    pricing = boto3.client("pricing", region_name="us-east-1")
    table: dict[str, Any] = json.loads(PRICES.read_text())
    as_of = datetime.now(UTC).date().isoformat()
    for region in regions:
        location = LOCATIONS[region]
        for section, usage in SAGEMAKER_SECTIONS.items():
            found: dict[str, dict[str, Any]] = {}
            for p in products(pricing, "AmazonSageMaker", {"location": location}):
                attrs = p["product"]["attributes"]
                itype, usage_type = attrs.get("instanceName") or attrs.get("instanceType"), attrs.get("usagetype", "")
                price = on_demand_usd(p)
                if itype and price and usage in usage_type and itype.startswith("ml."):
                    found[itype] = price_row(p, "AmazonSageMaker", price, as_of)
            table.setdefault(section, {})[region] = dict(sorted(found.items()))
        gpu_families = ("g4dn.", "g5.", "g6.", "g6e.", "p3.", "p4d.", "p5.", "inf2.", "trn1.")
        ec2: dict[str, dict[str, Any]] = {}
        filters = {"location": location, "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}
        for p in products(pricing, "AmazonEC2", filters):
            itype = p["product"]["attributes"].get("instanceType", "")
            price = on_demand_usd(p)
            if itype.startswith(gpu_families) and price:
                ec2[itype] = price_row(p, "AmazonEC2", price, as_of)
        table.setdefault("ec2", {})[region] = dict(sorted(ec2.items()))
        print(f"{region}: {sum(len(table[s][region]) for s in (*SAGEMAKER_SECTIONS, 'ec2'))} prices", file=sys.stderr)
    return table


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--region", action="append", choices=sorted(LOCATIONS))
    args = p.parse_args()
    table = refresh(args.region or ["us-east-1", "us-east-2", "us-west-2"])
    table["_as_of"] = datetime.now(UTC).date().isoformat()
    PRICES.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"written {PRICES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Build layers/reaper/reaper/aws/prices.json from AWS's price list, live or from a shipped copy.

    # a release step, with credentials allowed pricing:GetProducts: every SageMaker region
    AWS_PROFILE=... .venv/bin/python scripts/refresh_prices.py --from-api [--region eu-west-1 ...]
    # offline: the shipped catalogue (or AWS's public price data file it was built from)
    .venv/bin/python scripts/refresh_prices.py --from-files devkit/reaper_devkit/price_catalogue
    # rebuild and compare with the committed prices.json (exit 1 when they differ)
    .venv/bin/python scripts/refresh_prices.py --from-files devkit/reaper_devkit/price_catalogue --check

One parser (`build`) reads GetProducts `PriceList` entries, whichever way they arrived, and writes
rows {"usd", "source", "as_of"}: the source names the service, SKU, OnDemand rate code and the
offer's publicationDate; as_of is that publication date. Rows typed in by hand that the price
list does not cover are kept with a note saying so (offline), or dropped (`--from-api`, which
prices every region). What neither covers is missing, and the reaper says "unpriced".
docs/prices-shipped-copy.md says what the shipped copy covers.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PRICES = ROOT / "layers" / "reaper" / "reaper" / "aws" / "prices.json"
CATALOGUE = ROOT / "devkit" / "reaper_devkit" / "price_catalogue"
SAGEMAKER, EC2, FSX = "AmazonSageMaker", "AmazonEC2", "AmazonFSx"
NOTEBOOK, HOSTING, TRAINING, STUDIO = "sagemaker-notebook", "sagemaker-hosting", "sagemaker-training", "sagemaker-studio"
# SageMaker's usage-type operation (the part before ':') and component attribute for each section
USAGE_SECTIONS = {"Notebk": NOTEBOOK, "Host": HOSTING, "Train": TRAINING, "Studio": STUDIO}
COMPONENT_SECTIONS = {"Notebook": NOTEBOOK, "Hosting": HOSTING, "Training": TRAINING, "Studio-Notebook": STUDIO}
# one Studio row per instance type: JupyterLab's SKU first, then Code Editor's, then the Studio
# Classic (KernelGateway) SKU, whichever the price list has (docs/prices-shipped-copy.md)
STUDIO_RANK = ("JupyterLab-", "CodeEditor-", "KernelGateway-", "")
ACCELERATED = re.compile(r"^(g\d|gr\d|p\d|inf\d|trn\d|dl\d)[a-z0-9-]*\.")
EC2_FILTERS = {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}
TRANSCRIBED = "typed in by hand from the AWS price page; not in the shipped copy of AWS's price list (docs/prices-shipped-copy.md)"


def sagemaker_regions() -> list[str]:
    """The regions botocore says SageMaker runs in (the aws partition)."""
    import boto3

    return sorted(boto3.session.Session().get_available_regions("sagemaker"))


def region_by_location() -> dict[str, str]:
    """Price-list location name -> region code, from botocore's region descriptions.

    The price list writes "EU (Ireland)" where botocore writes "Europe (Ireland)".
    """
    from botocore.loaders import Loader

    endpoints = Loader().load_data("endpoints")
    found: dict[str, str] = {}
    for partition in endpoints["partitions"]:
        for code, region in partition["regions"].items():
            name = region.get("description", "")
            found[name] = code
            found[re.sub(r"^Europe \(", "EU (", name)] = code
    return found


def products(pricing: Any, service: str, filters: dict[str, str]) -> Iterator[dict[str, Any]]:
    """Every GetProducts entry that matches, page by page."""
    api_filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()]
    for page in pricing.get_paginator("get_products").paginate(ServiceCode=service, Filters=api_filters):
        for item in page["PriceList"]:
            yield json.loads(item)


def entries_from_api(regions: Iterable[str]) -> Iterator[dict[str, Any]]:
    import boto3

    pricing = boto3.client("pricing", region_name="us-east-1")
    for region in regions:
        yield from products(pricing, SAGEMAKER, {"regionCode": region})
        yield from products(pricing, EC2, {"regionCode": region, **EC2_FILTERS})


def entries_from_price_page_data(doc: dict[str, Any], service: str = SAGEMAKER) -> Iterator[dict[str, Any]]:
    """GetProducts-shaped entries from AWS's public price data file (the JSON behind its pricing pages).

    Each row's rateCode is "<SKU>.<offer term code>.<rate code>", the keys a GetProducts entry
    has; attributes are only those the file states (no usagetype). Locations outside the
    regions botocore lists for SageMaker (GovCloud) are skipped.
    """
    published = doc["manifest"]["hawkFilePublicationDate"]
    wanted = set(sagemaker_regions())
    regions = {name: code for name, code in region_by_location().items() if code in wanted}
    for location, rows in sorted(doc["regions"].items()):
        region = regions.get(location)
        if region is None:
            continue
        for rate_code, row in sorted(rows.items()):
            sku, term, _ = rate_code.split(".")
            attributes = {
                "servicecode": service,
                "location": location,
                "regionCode": region,
                "instanceName": row["Instance"],
                "instanceType": row["Instance Type"],
                "component": row["Component"],
                "vcpu": row["VCPU"],
                "memory": row["Memory"],
                "clockSpeed": row["Clock Speed"],
            }
            dimension = {"rateCode": rate_code, "unit": "Hrs", "pricePerUnit": {"USD": row["price"]}}
            yield {
                "product": {"productFamily": "ML Instance", "attributes": attributes, "sku": sku},
                "serviceCode": service,
                "terms": {"OnDemand": {f"{sku}.{term}": {"offerTermCode": term, "sku": sku, "priceDimensions": {rate_code: dimension}}}},
                "version": re.sub(r"\D", "", published),
                "publicationDate": published,
            }


def entries_from_files(directory: Path) -> Iterator[dict[str, Any]]:
    """Entries from a directory: `<ServiceCode>.jsonl.gz` catalogues, or AWS's price data `*.json` files."""
    for path in sorted(directory.iterdir()):
        if path.name.endswith(".jsonl.gz"):
            with gzip.open(path, "rt") as lines:
                yield from (json.loads(line) for line in lines if line.strip())
        elif path.suffix == ".json":
            yield from entries_from_price_page_data(json.loads(path.read_text()))


def on_demand(entry: dict[str, Any]) -> tuple[float, str] | None:
    """The hourly on-demand USD price and its rate code, or None (free, not hourly, not USD)."""
    for term in entry.get("terms", {}).get("OnDemand", {}).values():
        for code, dim in term.get("priceDimensions", {}).items():
            usd = float(dim.get("pricePerUnit", {}).get("USD", "0") or 0)
            if usd > 0 and dim.get("unit", "Hrs").startswith("Hr"):
                return round(usd, 4), dim.get("rateCode", code)
    return None


def sagemaker_cell(attrs: dict[str, str]) -> tuple[str, str, int] | None:
    """(section, instance type, preference) of a SageMaker ML-instance entry, or None."""
    usage = attrs.get("usagetype", "")
    operation, _, detail = usage.partition(":")
    section = USAGE_SECTIONS.get(operation.rsplit("-", 1)[-1]) if usage else COMPONENT_SECTIONS.get(attrs.get("component", ""))
    itype = attrs.get("instanceName") or detail
    if section is None or not itype:
        return None
    rank = next((i for i, prefix in enumerate(STUDIO_RANK) if detail.startswith(prefix)), len(STUDIO_RANK))
    itype = re.sub(r"^[A-Za-z]+-(?=ml\.)", "", itype)  # "JupyterLab-ml.t3.medium" -> "ml.t3.medium"
    return (section, itype, rank) if itype.startswith("ml.") else None


def ec2_cell(attrs: dict[str, str]) -> tuple[str, str, int] | None:
    itype = attrs.get("instanceType", "")
    if any(attrs.get(k) != v for k, v in EC2_FILTERS.items()) or not ACCELERATED.match(itype):
        return None
    return ("ec2", itype, 0) if attrs.get("licenseModel", "No License required") == "No License required" else None


def cell(entry: dict[str, Any]) -> tuple[str, str, str, int] | None:
    """(section, region, key, preference) of one entry, or None when mlreaper does not price it."""
    attrs: dict[str, str] = entry.get("product", {}).get("attributes", {})
    service = entry.get("serviceCode")
    found = sagemaker_cell(attrs) if service == SAGEMAKER else ec2_cell(attrs) if service == EC2 else None
    region = attrs.get("regionCode")
    return None if found is None or not region else (found[0], region, found[1], found[2])


def price_row(entry: dict[str, Any], usd: float, rate: str, origin: str) -> dict[str, Any]:
    """A row of prices.json: the price, which entry of which offer it comes from, and its date."""
    published = entry.get("publicationDate", "")
    sku = entry.get("product", {}).get("sku", "?")
    source = f"{origin}: {entry.get('serviceCode')} SKU {sku} (OnDemand {rate}), publicationDate {published}"
    return {"usd": usd, "source": source, "as_of": published[:10]}


def build(entries: Iterable[dict[str, Any]], origin: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Sections of prices.json from price-list entries; the preferred SKU wins, then the lower SKU."""
    best: dict[tuple[str, str, str], tuple[int, str, dict[str, Any]]] = {}
    for entry in entries:
        where, price = cell(entry), on_demand(entry)
        if where is None or price is None:
            continue
        section, region, key, rank = where
        candidate = (rank, entry["product"]["sku"], price_row(entry, price[0], price[1], origin))
        if (section, region, key) not in best or candidate[:2] < best[(section, region, key)][:2]:
            best[(section, region, key)] = candidate
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for (section, region, key), (_, _, row) in sorted(best.items()):
        table.setdefault(section, {}).setdefault(region, {})[key] = row
    return table


def transcribed(row: dict[str, Any]) -> dict[str, Any]:
    note = row.get("note", "")
    return row if TRANSCRIBED in note else {**row, "note": f"{note}; {TRANSCRIBED}" if note else TRANSCRIBED}


def from_price_list(row: dict[str, Any]) -> bool:
    return str(row.get("source", "")).lower().startswith("aws price list")


def merge(
    previous: dict[str, Any], built: dict[str, dict[str, dict[str, Any]]], keep_typed: bool, keep_unbuilt: bool = True
) -> dict[str, Any]:
    """The new table: every price-list row, plus hand-typed rows the price list lacks, marked.

    Hand-typed rows are kept offline (keep_typed), and in sections the build does not price at
    all (keep_unbuilt; FSx for Lustre: not parsed from the API yet); a price-list row always
    replaces them.
    """
    table = {k: v for k, v in previous.items() if k.startswith("_")}
    sections = {k for k in previous if not k.startswith("_")} | set(built)
    for section in sorted(sections):
        merged: dict[str, dict[str, Any]] = {}
        for region, rows in previous.get(section, {}).items() if keep_typed or (keep_unbuilt and section not in built) else ():
            for key, row in rows.items():
                if not from_price_list(row):
                    merged.setdefault(region, {})[key] = transcribed(row)
        for region, rows in built.get(section, {}).items():
            merged.setdefault(region, {}).update(rows)
        table[section] = {r: dict(sorted(rows.items())) for r, rows in sorted(merged.items())}
    return table


def write_catalogue(entries: Iterable[dict[str, Any]], directory: Path) -> dict[str, int]:
    """The entries mlreaper prices, as `<ServiceCode>.jsonl.gz` (what the kit's Pricing API serves)."""
    by_service: dict[str, list[str]] = {}
    for entry in entries:
        if cell(entry) is not None and on_demand(entry) is not None:
            by_service.setdefault(entry["serviceCode"], []).append(json.dumps(entry, sort_keys=True, separators=(",", ":")))
    directory.mkdir(parents=True, exist_ok=True)
    for service, lines in by_service.items():
        body = ("\n".join(sorted(lines)) + "\n").encode()
        (directory / f"{service}.jsonl.gz").write_bytes(gzip.compress(body, mtime=0))
    return {service: len(lines) for service, lines in by_service.items()}


def render(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--from-api", action="store_true", help="read the live Price List API (credentials)")
    source.add_argument("--from-files", type=Path, metavar="DIR", help="read a shipped copy: catalogue or AWS's price data files")
    p.add_argument("--region", action="append", help="with --from-api: only these regions (default: every SageMaker region)")
    p.add_argument("--catalogue-out", type=Path, metavar="DIR", help="also write the entries mlreaper prices as <ServiceCode>.jsonl.gz")
    p.add_argument("--check", action="store_true", help="compare with the committed prices.json instead of writing it")
    p.add_argument("--drop-typed", action="store_true", help="offline too: drop the rows typed in by hand that the copy lacks")
    args = p.parse_args(argv)
    if args.from_api:
        entries = list(entries_from_api(args.region or sagemaker_regions()))
        origin = "AWS Price List API"
    else:
        entries, origin = list(entries_from_files(args.from_files)), "AWS price list, shipped copy"
    if args.catalogue_out:
        print(f"catalogue: {write_catalogue(entries, args.catalogue_out)}", file=sys.stderr)
    keep_typed = not (args.from_api or args.drop_typed)
    table = merge(json.loads(PRICES.read_text()), build(entries, origin), keep_typed, keep_unbuilt=not args.drop_typed)
    if args.check:
        same = render(table) == PRICES.read_text()
        print("prices.json is what the copy builds" if same else "prices.json differs from what the copy builds", file=sys.stderr)
        return 0 if same else 1
    PRICES.write_text(render(table))
    print(f"written {PRICES}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

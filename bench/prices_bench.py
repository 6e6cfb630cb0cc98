"""Pricing calls per sweep (docs/prices.md, docs/performance.md): the first sweep in a new region makes at most
one Price List API request per distinct instance type; a sweep of a region already priced makes none.

    PYTHONPATH=layers/reaper:devkit:. .venv/bin/python bench/prices_bench.py [--apps 1000] [--region eu-west-1]

Runs the real CLI (`reaper sweep --kind studio-app --json`) against moto in-process with the kit's Price List API
serving its catalogue (AWS's own entries, devkit/reaper_devkit/price_catalogue), the action log as the cache.
Counts requests, never times them. Writes bench/results/prices-<apps>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

for var in [v for v in os.environ if v.startswith(("REAPER_", "AWS_"))]:
    del os.environ[var]
os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1", AWS_REGION="us-east-1")

import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

from reaper.cli.main import main  # noqa: E402
from reaper.record.actionlog import create_table  # noqa: E402
from reaper_devkit import moto_ext, seed_studio  # noqa: E402
from reaper_devkit.moto_ext import pricing as price_api  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
TABLE = "mlreaper-bench-log"


def offered(region: str) -> list[str]:
    """The Studio instance types the catalogue prices in the region (what a team can run there)."""
    types = {
        e["product"]["attributes"]["instanceName"]
        for e in price_api.entries("AmazonSageMaker") or []
        if e["product"]["attributes"].get("regionCode") == region
    }
    return sorted(types)


def sweep(region: str) -> tuple[list[dict[str, Any]], int]:
    price_api.requests.clear()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["sweep", "--kind", "studio-app", "--region", region, "--json"])
    if code != 0:
        raise SystemExit(f"sweep exited {code}")
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()], len(price_api.requests)


def run(apps: int, region: str) -> dict[str, Any]:
    moto_ext.apply()
    with mock_aws():
        session = boto3.session.Session(region_name="us-east-1")
        create_table(session.client("dynamodb", region_name=region), TABLE)  # the CLI's home region is the swept one
        os.environ["REAPER_TABLE"] = TABLE
        sm = session.client("sagemaker", region_name=region)
        domain = seed_studio.domain(sm, "bench")
        types = offered(region)
        for i in range(apps):
            seed_studio.space(sm, domain, f"s{i}")
            seed_studio.app(sm, domain, space_name=f"s{i}", instance_type=types[i % len(types)], tags={"ml:owner": "ana@example.com"})
        first, first_calls = sweep(region)
        second, second_calls = sweep(region)
    apps_seen = [r for r in first if r["kind"] == "studio-app" and r.get("instance_type")]
    priced = [r for r in apps_seen if r["hourly_usd"] is not None]
    return {
        "what": "Price List API requests per sweep of Studio apps (kit catalogue, action log as cache)",
        "region": region,
        "apps": len(apps_seen),
        "distinct_types": len({r["instance_type"] for r in apps_seen}),
        "first_sweep_requests": first_calls,
        "second_sweep_requests": second_calls,
        "priced_share": round(len(priced) / len(apps_seen), 4) if apps_seen else None,
        "zero_figures": sum(1 for r in apps_seen if r["hourly_usd"] == 0),
        "sources": sorted({str(r["price_source"]) for r in apps_seen}),
        "second_sweep_same_figures": [r["hourly_usd"] for r in first] == [r["hourly_usd"] for r in second],
    }


def cli() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--apps", type=int, default=1000)
    p.add_argument("--region", default="eu-west-1")
    args = p.parse_args()
    result = run(args.apps, args.region)
    path = RESULTS / f"prices-{args.apps}.json"
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(json.dumps(result, indent=1, sort_keys=True))
    print(f"written {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(cli())

"""How much of what mlreaper may meet prices.json prices, per SageMaker region (a Markdown table).

    .venv/bin/python scripts/price_coverage.py      # the table in docs/prices-shipped-copy.md

For each region botocore lists for SageMaker: of the instance types botocore's models name
(SageMaker InstanceType for notebooks, ProductionVariantInstanceType for hosting,
TrainingInstanceType for training, AppInstanceType for Studio apps; EC2's accelerated types),
how many have a row, and how many of those come from the shipped copy of AWS's price list.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import boto3

PRICES = Path(__file__).resolve().parent.parent / "layers" / "reaper" / "reaper" / "aws" / "prices.json"
ACCELERATED = re.compile(r"^(g\d|gr\d|p\d|inf\d|trn\d|dl\d)[a-z0-9-]*\.")
COLUMNS = {
    "sagemaker-notebook": ("sagemaker", "InstanceType"),
    "sagemaker-hosting": ("sagemaker", "ProductionVariantInstanceType"),
    "sagemaker-training": ("sagemaker", "TrainingInstanceType"),
    "sagemaker-studio": ("sagemaker", "AppInstanceType"),
    "ec2": ("ec2", "InstanceType"),
}


def enum(service: str, shape: str) -> set[str]:
    model = boto3.client(service, region_name="us-east-1").meta.service_model
    values = set(model.shape_for(shape).enum)
    if service == "ec2":
        return {v for v in values if ACCELERATED.match(v)}
    return {v for v in values if v.startswith("ml.")}


def table() -> str:
    prices = json.loads(PRICES.read_text())
    types = {section: enum(*where) for section, where in COLUMNS.items()}
    head = " | ".join(f"{s} (of {len(t)})" for s, t in types.items())
    lines = [f"| region | {head} |", "|---" * (len(types) + 1) + "|"]
    for region in sorted(boto3.session.Session().get_available_regions("sagemaker")):
        cells = []
        for section, wanted in types.items():
            rows = prices.get(section, {}).get(region, {})
            priced = [k for k in rows if k in wanted]
            shipped = sum(1 for k in priced if rows[k]["source"].startswith("AWS price list"))
            cells.append(f"{len(priced)} ({shipped} copy)" if priced else "0")
        lines.append(f"| {region} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table())

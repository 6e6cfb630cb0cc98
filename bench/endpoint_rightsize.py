"""Right-size advice's reads (reaper/kinds/endpoint/usage.py), against moto: what `reaper plan` adds to the sweep.

n classic endpoints a week old with a week of hourly metrics: one in ten sparse (requests in 3 hours), one in
ten under-used (every hour, 5% CPU), the rest busy and right-sized. Counted: the calls the advice makes after
the sweep, beside their floor: ceil(6 queries x variants / 500) GetMetricData, and one DescribeEndpointConfig
per endpoint its week may advise whose configuration the sweep did not read already.

    .venv/bin/python bench/endpoint_rightsize.py [--n 200] [--out bench/results/endpoint-rightsize.json]
"""

from __future__ import annotations

import argparse
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

from reaper.core.settings import Settings
from reaper.kinds.endpoint import usage
from reaper.kinds.endpoint.model import EndpointFacts
from reaper.sweep import pipeline
from reaper.wiring import build_runtime
from reaper_devkit import moto_ext, seed, seed_endpoint
from reaper_devkit.calls import recording

REGION = "us-east-1"


def _seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    sm, cw = session.client("sagemaker"), session.client("cloudwatch")
    top = now.replace(minute=0, second=0, microsecond=0)
    hours = [top - timedelta(hours=h, minutes=30) for h in range(1, 168)]
    for i in range(n):
        name = f"rs-{i:04d}"
        seed_endpoint.classic(sm, name, {"ml:owner": "a@example.com"}, instance_type="ml.c5.xlarge")
        seed_endpoint.age(name, now, 10 * 24 * 60)
        dims = {"EndpointName": name, "VariantName": "AllTraffic"}
        calls = hours[:3] if i % 10 == 0 else hours
        seed.put_series(cw, "AWS/SageMaker", "Invocations", dims, [(t, 100.0) for t in calls])
        cpu, memory = (20.0, 30.0) if i % 10 == 1 else (240.0, 70.0)
        seed.put_series(cw, usage.INSTANCE_NAMESPACE, "CPUUtilization", dims, [(t, cpu) for t in hours])
        seed.put_series(cw, usage.INSTANCE_NAMESPACE, "MemoryUtilization", dims, [(t, memory) for t in hours])


def run(n: int) -> dict[str, Any]:
    moto_ext.apply()
    now = datetime.now(UTC)
    with mock_aws():
        session = boto3.session.Session(region_name=REGION)
        _seed(session, n, now)
        rt = build_runtime(Settings(regions=(REGION,), live_prices=False), session=session)
        outcomes = pipeline.sweep(rt, ["endpoint"], now, event_id="bench-rightsize")
        resources = [o.resource for o in outcomes]
        read_already = sum(1 for r in resources if r.facts_as(EndpointFacts).details is not None)
        with recording() as calls:
            advice = usage.advise_all(resources, rt.clients, now)
    by_op = calls.by_operation()
    looked = sum(1 for i in range(n) if i % 10 in (0, 1))
    floor = {"cloudwatch:GetMetricData": math.ceil(6 * n / 500), "sagemaker:DescribeEndpointConfig": looked}
    made = sum(by_op.values())
    return {
        "n": n,
        "calls": by_op,
        "floor": floor,
        "configs_read_by_the_sweep": read_already,
        "ratio": round(made / max(sum(floor.values()), 1), 3),
        "advice": {c: sum(1 for a in advice.values() if a.change == c) for c in ("serverless", "async", "smaller")},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    result = run(args.n)
    text = json.dumps(result, indent=2, sort_keys=True)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()

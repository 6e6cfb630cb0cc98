"""MlflowReads=on at N tracking servers: the dry-run sweep's AWS calls (and the requests to the servers' own
MLflow APIs, which are not AWS API calls AWS bills or throttles as such) against a local moto server and the
kit's MLflow REST stand-in (reaper_devkit.mlflow_api, each request's SigV4 signature checked).

    .venv/bin/python bench/mlflow_reads.py [--n 1000] [--out bench/results/mlflow.json]

The account: bench/kinds/mlflow.py's servers (a third past a kill date), each with one experiment and a run that
ended 2 days ago; every fifth with a run 1 h ago, every seventh with its UI opened 2 h ago (CloudTrail). The
figures are merged into the output file under "reads_on" (the reads-off sweep's figures stay as measured).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.kinds import mlflow as seeder  # noqa: E402
from reaper.core.settings import Settings  # noqa: E402
from reaper.kinds.mlflow.settings import MlflowSettings  # noqa: E402
from reaper.sweep import pipeline  # noqa: E402
from reaper.wiring import build_runtime  # noqa: E402
from reaper_devkit import mlflow_api, seed_mlflow  # noqa: E402
from reaper_devkit.calls import recording  # noqa: E402
from reaper_devkit.local_aws import local_account, session  # noqa: E402
from reaper_devkit.moto_ext.mlflow import set_created  # noqa: E402


def seed(n: int, now: datetime) -> None:
    seeder.seed(session(), n, now)
    sm = session().client("sagemaker")
    old = now - timedelta(days=3)
    for i in range(n):
        name = f"ts-{i:05d}"
        set_created(name, old, "us-east-1")
        seed_mlflow.run(sm, name, "baseline", start=old, end=now - timedelta(days=2))
        if i % 5 == 0:
            seed_mlflow.run(sm, name, "baseline", start=now - timedelta(hours=1), end=now - timedelta(minutes=10))
        if i % 7 == 0:
            seed_mlflow.ui_opened(sm, name, now - timedelta(hours=2))


def measure(n: int) -> dict[str, Any]:
    with local_account(), mlflow_api.serving() as api:
        now = datetime.now(UTC)
        t0 = time.monotonic()
        seed(n, now)
        seeded = time.monotonic() - t0
        rt = build_runtime(Settings().with_kind(MlflowSettings(mlflow_reads=True)), region="us-east-1")
        with recording() as calls:
            t1 = time.monotonic()
            outcomes = pipeline.sweep(rt, ["mlflow"], now, event_id="bench-reads")
            elapsed = time.monotonic() - t1
    verdicts: dict[str, int] = {}
    for o in outcomes:
        verdicts[o.verdict.value] = verdicts.get(o.verdict.value, 0) + 1
    unknown: dict[str, int] = {}
    for o in outcomes:
        if o.decision.unknown:
            unknown[o.decision.unknown] = unknown.get(o.decision.unknown, 0) + 1
    paths: dict[str, int] = {}
    for _, path in api.requests:
        paths[path] = paths.get(path, 0) + 1
    return {
        "kind": "mlflow",
        "mlflow_reads": True,
        "n": n,
        "resources": len(outcomes),
        "verdicts": verdicts,
        "unknown": unknown,
        "calls": calls.by_operation(),
        "calls_total": calls.total(),
        "calls_per_resource": round(calls.total() / max(n, 1), 4),
        "mlflow_api_requests": paths,
        "mlflow_api_requests_total": len(api.requests),
        "sweep_seconds": round(elapsed, 2),
        "seed_seconds": round(seeded, 1),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "mlflow.json"))
    args = p.parse_args()
    r = measure(args.n)
    out = Path(args.out)
    kept = json.loads(out.read_text()) if out.exists() else {}
    kept["reads_on"] = r
    out.write_text(json.dumps(kept, indent=1) + "\n")
    print(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: API calls per resource by operation and sweep time against a local moto server,
plus each function's cold import time.

    .venv/bin/python bench/sweep_bench.py [--kind K]... [--n 100 1000] [--out bench/results/latest.json]

moto's GetMetricData is indexed by metric (reaper_devkit.moto_ext.cloudwatch_index) so its own
scan does not hide the client's figures. Times are of the client against a local moto server,
not of AWS: read them as relative figures; the call counts are what AWS would see.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import pkgutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import kinds as bench_kinds  # noqa: E402
from reaper import pipeline  # noqa: E402
from reaper.runtime import Runtime  # noqa: E402
from reaper.settings import Settings  # noqa: E402
from reaper_devkit.calls import recording  # noqa: E402
from reaper_devkit.local_aws import local_account, session  # noqa: E402


def seeders() -> dict[str, Any]:
    out = {}
    for info in pkgutil.iter_modules(bench_kinds.__path__):
        module = importlib.import_module(f"bench.kinds.{info.name}")
        out[module.KIND] = module
    return out


def measure(kind: str, module: Any, n: int) -> dict[str, Any]:
    with local_account():
        now = datetime.now(UTC)
        t0 = time.monotonic()
        module.seed(session(), n, now)
        seeded = time.monotonic() - t0
        rt = Runtime.build(Settings(), region="us-east-1")  # dry-run, no log, no Slack: the sweep's own calls
        with recording() as calls:
            t1 = time.monotonic()
            outcomes = pipeline.sweep(rt, [kind], now, event_id="bench")
            elapsed = time.monotonic() - t1
    verdicts: dict[str, int] = {}
    for o in outcomes:
        verdicts[o.verdict.value] = verdicts.get(o.verdict.value, 0) + 1
    return {
        "kind": kind,
        "n": n,
        "resources": len(outcomes),
        "verdicts": verdicts,
        "calls": calls.by_operation(),
        "calls_total": calls.total(),
        "calls_per_resource": round(calls.total() / max(n, 1), 4),
        "metric_call_budget": math.ceil(n / 500),
        "sweep_seconds": round(elapsed, 2),
        "seed_seconds": round(seeded, 1),
    }


def cold_import(function: str, runs: int = 5) -> float:
    """Median seconds to import a function's module in a fresh interpreter (the cold start's share)."""
    code = (
        "import time,importlib.util,sys;t=time.perf_counter();"
        f"s=importlib.util.spec_from_file_location('app','{ROOT}/functions/{function}/app.py');"
        "m=importlib.util.module_from_spec(s);s.loader.exec_module(m);print(time.perf_counter()-t)"
    )
    env = {**os.environ, "AWS_REGION": "us-east-1", "REAPER_TABLE": "t", "REAPER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/1/q"}
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return round(statistics.median(times), 3)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", action="append", default=[])
    p.add_argument("--n", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "latest.json"))
    p.add_argument("--no-cold-start", action="store_true")
    args = p.parse_args()
    available = seeders()
    kinds = args.kind or sorted(available)
    results: dict[str, Any] = {"measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "sweeps": [], "cold_import_seconds": {}}
    for kind in kinds:
        if kind not in available:
            print(f"no bench seeder for {kind!r} (have: {', '.join(sorted(available))})", file=sys.stderr)
            return 2
        for n in args.n:
            print(f"… {kind} N={n}: seeding and sweeping", file=sys.stderr, flush=True)
            r = measure(kind, available[kind], n)
            results["sweeps"].append(r)
            per = ", ".join(f"{op} {c} ({c / n:.3f}/res)" for op, c in r["calls"].items())
            print(f"{kind:13} N={n:5}  {r['calls_total']:5} calls = {r['calls_per_resource']:.3f}/resource  sweep {r['sweep_seconds']:6.2f} s  [{per}]")
    if not args.no_cold_start:
        for fn in sorted(d.name for d in (ROOT / "functions").iterdir() if (d / "app.py").exists()):
            results["cold_import_seconds"][fn] = cold_import(fn)
            print(f"cold import {fn:14} {results['cold_import_seconds'][fn]:.3f} s (median of 5)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

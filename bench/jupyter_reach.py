"""How many Jupyter servers one sweep's reading phase reaches within its budget, each request taking L seconds.

    .venv/bin/python bench/jupyter_reach.py [--n 1000] [--latency 0.1 0.2 0.5] [--workers W] [--out bench/results/jupyter-reach.json]

The reader itself (`reaper.aws.jupyter.read_all`, its BUDGET, REQUEST_TIMEOUT and WORKERS unless --workers
says otherwise) reads N keys, each through a presign that waits L seconds (the SageMaker call) and a local
Jupyter server that answers each request L seconds after it (`reaper_devkit.jupyter_hostile.FakeJupyter`:
the landing page, api/status, api/kernels, api/terminals). Counted: the readings that came back read, and
those `jupyter-not-reached` at the budget's end. This is a wall-clock measurement on a shared machine
(threads mostly asleep: the figure is bounded by the budget, not the CPU); no test asserts it.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reaper.aws import jupyter as reader  # noqa: E402
from reaper_devkit.jupyter_hostile import FakeJupyter  # noqa: E402

DOOR = reader.Door("CreatePresignedNotebookInstanceUrl", "the notebook's presigned URL", "no fix")


def measure(n: int, latency: float, workers: int) -> dict[str, Any]:
    server = FakeJupyter(delay=latency)
    try:

        def presign() -> str:
            threading.Event().wait(latency)  # the SageMaker call, at the same latency
            return f"{server.origin}/?authToken=T"

        presigns: dict[str, Callable[[], str]] = {f"nb-{i:05d}": presign for i in range(n)}
        started = time.monotonic()
        readings = reader.read_all(DOOR, presigns, workers=workers)
        seconds = time.monotonic() - started
    finally:
        server.close()
    read = sum(1 for r in readings.values() if r.started is not None)
    codes: dict[str, int] = {}
    for r in readings.values():
        if r.unknown:
            codes[r.unknown] = codes.get(r.unknown, 0) + 1
    alive = [t.name for t in threading.enumerate() if t.name.startswith("jupyter-read") and t.is_alive()]
    return {
        "n": n,
        "latency_s": latency,
        "workers": workers,
        "budget_s": reader.BUDGET,
        "read": read,
        "unknown": codes,
        "requests": len(server.requests),
        "wall_seconds": round(seconds, 1),
        "reader_threads_alive_after": len(alive),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--latency", type=float, nargs="+", default=[0.1, 0.2, 0.5])
    p.add_argument("--workers", type=int, default=reader.WORKERS)
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "jupyter-reach.json"))
    args = p.parse_args()
    out = Path(args.out)
    results: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {"runs": []}
    for latency in args.latency:
        r = measure(args.n, latency, args.workers)
        r["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
        results["runs"].append(r)
        print(
            f"N={r['n']} at {latency} s a request, {r['workers']} at a time: {r['read']} read, {r['unknown']} "
            f"({r['requests']} requests, {r['wall_seconds']} s)",
            flush=True,
        )
        out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

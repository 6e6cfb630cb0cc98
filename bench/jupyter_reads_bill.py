"""What JupyterReads costs against the activity agent's custom metric, per 1,000 running notebooks a month.

    .venv/bin/python bench/jupyter_reads_bill.py [--n 1000] [--fleet F]... [--out bench/results/jupyter-reads-bill.json]
    .venv/bin/python bench/jupyter_reads_bill.py --table bench/results/jupyter-reads-bill.json   # the docs' table

Each fleet is seeded in a local moto server and swept once in dry-run, two hours after the seeding (every
notebook idle, so every fleet has the same findings and the same action-log and queue lines):

- `agent`: every notebook runs the activity agent (AgentChannel=metric, the default), JupyterReads off;
- `jupyter`: no notebook runs the agent (the custom metric dropped), JupyterReads on;
- `both`: the agent everywhere and JupyterReads on: nothing to read (only notebooks without the agent are);
- `mixed`: the agent on 90 % and JupyterReads on for the other 10 %.

The Jupyter readings go through the test kit's presigned hop (`reaper_devkit.jupyter_hop`) to one real
`jupyter_server`; every HTTP request they make (redirects included) and the bytes of every answer are
counted at urllib's transport. The bill is bench/cost_model.py's: the sweep's calls at their stated latencies,
the reading phase as jupyter_phase_seconds (WORKERS at a time, at most BUDGET), the agent's metric and puts
for the notebooks that run it. Calls and requests are what AWS would see; times against moto are not AWS's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import cost_model  # noqa: E402
from bench.floor import counting  # noqa: E402
from reaper.core.settings import Settings  # noqa: E402
from reaper.sweep import pipeline  # noqa: E402
from reaper.wiring import build_runtime  # noqa: E402
from reaper_devkit import seed  # noqa: E402
from reaper_devkit.calls import recording  # noqa: E402
from reaper_devkit.jupyter_hop import JupyterServer, PresignedHop, jupyter_server  # noqa: E402
from reaper_devkit.local_aws import local_account, session  # noqa: E402

LATER = timedelta(hours=2)  # the sweep's clock: every notebook quiet for two hours (the idle window is 1 h)
FLEETS = {"agent": (1.0, False), "jupyter": (0.0, True), "both": (1.0, True), "mixed": (0.9, True)}  # agent share, JupyterReads
TARGET = 1_000


@dataclass
class Transport:
    requests: int = 0
    received: int = 0  # bytes of the answers' bodies (Content-Length)


@contextmanager
def transport() -> Iterator[Transport]:
    """Every HTTP request urllib sends in the block (each redirect is one), and the bytes of the answers."""
    seen = Transport()
    original = urllib.request.HTTPHandler.http_open

    def counted(self: urllib.request.HTTPHandler, req: urllib.request.Request) -> Any:
        resp = original(self, req)
        seen.requests += 1
        seen.received += int(resp.headers.get("Content-Length") or 0)
        return resp

    urllib.request.HTTPHandler.http_open = counted  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        urllib.request.HTTPHandler.http_open = original  # type: ignore[method-assign]


def seed_fleet(n: int, agent_share: float, server: JupyterServer, hop: PresignedHop, now: datetime) -> int:
    """n dev notebooks, the first agent_share of them with the agent and 3 h of zero NotebookActivity; the rest
    served by the quiet Jupyter server. Returns how many run the agent."""
    sm, cw = session().client("sagemaker"), session().client("cloudwatch")
    agents = round(n * agent_share)
    for i in range(n):
        name = f"bench-nb-{i:05d}"
        seed.notebook(sm, name, {"ml:owner": f"user{i % 37}@example.com", "ml:stage": "dev"}, agent=i < agents)
        if i < agents:
            seed.activity(cw, name, now, [0.0] * 36)
        else:
            hop.serve(name, server)
    return agents


def measure(fleet: str, n: int, server: JupyterServer) -> dict[str, Any]:
    agent_share, reads_on = FLEETS[fleet]
    with local_account():
        now = datetime.now(UTC) + LATER
        hop = PresignedHop()
        try:
            agents = seed_fleet(n, agent_share, server, hop, now)
            rt = build_runtime(Settings(jupyter_reads=reads_on), region="us-east-1")
            with recording() as calls, counting() as items, transport() as http:
                started = time.monotonic()
                outcomes = pipeline.sweep(rt, ["notebook"], now, event_id=f"bench-{fleet}")
                elapsed = time.monotonic() - started
        finally:
            hop.close()
    by_op = calls.by_operation()
    verdicts: dict[str, int] = {}
    for o in outcomes:
        verdicts[o.verdict.value] = verdicts.get(o.verdict.value, 0) + 1
    unknown: dict[str, int] = {}
    for o in outcomes:
        if o.decision.unknown:
            unknown[o.decision.unknown] = unknown.get(o.decision.unknown, 0) + 1
    reads = by_op.get(cost_model.PRESIGN, 0)
    per_reading = {"calls": 1.0, "requests": round(http.requests / reads, 3), "bytes": round(http.received / reads, 1)} if reads else None
    return {
        "fleet": fleet,
        "n": n,
        "agents": agents,
        "jupyter_reads": reads_on,
        "verdicts": verdicts,
        "unknown": unknown,
        "calls": by_op,
        "metric_queries": items.queries["cloudwatch:GetMetricData"],
        "jupyter_readings": reads,  # readings started within the sweep's BUDGET on this machine
        "jupyter_not_reached": unknown.get("jupyter-not-reached", 0),
        "http_requests": http.requests,
        "http_bytes_received": http.received,
        "per_reading": per_reading,
        "moto_sweep_seconds": round(elapsed, 2),
    }


def bill(r: dict[str, Any], target: int = TARGET) -> dict[str, Any]:
    """The measured sweep scaled to `target` notebooks (its calls, queries, findings, readings and agents), its
    reading phase at the stated latencies and at BUDGET (the bound), and the monthly bill per `target`."""
    scale = target / r["n"]
    calls = {op: round(c * scale) for op, c in r["calls"].items()}
    verdicts = {v: round(c * scale) for v, c in r["verdicts"].items()}
    # every notebook without the agent is to be read (all are dev, none exempt): those the budget cut off in the
    # measured sweep (`jupyter-not-reached`, this machine's speed, not AWS's) are counted at the per-reading figures
    to_read = r["n"] - r["agents"] if r["jupyter_reads"] else 0
    reads, agents = round(to_read * scale), round(r["agents"] * scale)
    out: dict[str, Any] = {"n": target, "agents": agents, "reads": reads}
    reading_s = 0.0
    if r["per_reading"]:
        reading_s = cost_model.jupyter_reading_seconds(r["per_reading"]["calls"], r["per_reading"]["requests"])
        out["reading_seconds"] = round(reading_s, 3)
        out["phase_seconds"] = round(cost_model.jupyter_phase_seconds(reads, reading_s), 1)
        out["reach_per_sweep"] = cost_model.jupyter_reach(reading_s)
        out["data"] = cost_model.jupyter_data_bound(reads, r["per_reading"]["bytes"])
    queries = round(r["metric_queries"] * scale)
    for case, seconds in (("stated", cost_model.jupyter_phase_seconds(reads, reading_s)), ("bound", cost_model.JUPYTER_BUDGET_S)):
        if case == "bound" and not reads:
            continue
        b = cost_model.monthly_bill("notebook", target, calls, queries, verdicts, agents=agents, jupyter_seconds=seconds)
        out[f"monthly_usd_{case}"] = b
    return out


def report(r: dict[str, Any], b: dict[str, Any]) -> str:
    lines = "  ".join(f"{k} ${v:,.2f}" for k, v in b["monthly_usd_stated"].items() if k != "total" and v)
    head = (
        f"{r['fleet']:8} N={r['n']} agents={r['agents']} JupyterReads={'on' if r['jupyter_reads'] else 'off'}: "
        f"verdicts {r['verdicts']} unknown {r['unknown'] or '{}'}; calls {r['calls']}"
    )
    if r["per_reading"]:
        p = r["per_reading"]
        head += (
            f"\n    read here within the {cost_model.JUPYTER_BUDGET_S:.0f} s budget: {r['jupyter_readings']} started, "
            f"{r['jupyter_not_reached']} not reached (this machine's speed: local moto and one Jupyter server for all)"
            f"\n    per reading: {p['calls']:.0f} SageMaker call, {p['requests']:.2f} HTTP requests, {p['bytes']:,.0f} bytes received; "
            f"at {TARGET:,}: {b['reads']} readings of {b['reading_seconds']} s, phase {b['phase_seconds']} s "
            f"(reach {b['reach_per_sweep']:,} a sweep within {cost_model.JUPYTER_BUDGET_S:.0f} s); data {b['data']['gb_month']} GB/month "
            f"(${b['data']['usd_at_egress_rate']:.2f} at the egress rate, not billed here)"
        )
    total = f"${b['monthly_usd_stated']['total']:,.2f}"
    if "monthly_usd_bound" in b:
        total += f" (bound: every sweep's phase at {cost_model.JUPYTER_BUDGET_S:.0f} s: ${b['monthly_usd_bound']['total']:,.2f})"
    return f"{head}\n    bill per {TARGET:,} a month: {total}\n    {lines}"


ROWS = {
    "agent": "the agent on every notebook (`AgentChannel=metric`), `JupyterReads` off",
    "jupyter": "no agent (the custom metric dropped), `JupyterReads` on",
    "both": "the agent on every notebook and `JupyterReads` on (nothing to read)",
    "mixed": "the agent on 90 %, `JupyterReads` on for the other 10 %",
}


def money(bill: dict[str, float], *keys: str) -> str:
    return f"${sum(bill.get(k, 0.0) for k in keys):,.2f}"


def table(path: str) -> str:
    """The docs' table (docs/performance.md) from a results file."""
    head = (
        "| notebooks (per 1,000 running all month) | custom metric + puts | Jupyter reading phase (Lambda) | the sweep (GetMetricData, "
        "Lambda, DynamoDB, SQS) | total / month | total, phase at its 90 s bound |\n| --- | ---: | ---: | ---: | ---: | ---: |"
    )
    lines = [head]
    for r in json.loads(Path(path).read_text())["fleets"]:
        b = r["bill_per_1000"]
        stated, bound = b["monthly_usd_stated"], b.get("monthly_usd_bound", b["monthly_usd_stated"])
        lines.append(
            f"| {ROWS[r['fleet']]} | {money(stated, 'agent_metric', 'agent_puts')} | {money(stated, 'jupyter_reads_lambda')} | "
            f"{money(stated, 'getmetricdata', 'cloudwatch_api', 'lambda', 'dynamodb', 'sqs')} | **{money(stated, 'total')}** | "
            f"{money(bound, 'total')} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=TARGET)
    parser.add_argument("--fleet", action="append", choices=list(FLEETS))
    parser.add_argument("--out", default="bench/results/jupyter-reads-bill.json")
    parser.add_argument("--table", metavar="RESULTS", help="print the docs' table from a results file, and measure nothing")
    args = parser.parse_args()
    if args.table:
        print(table(args.table))
        return
    results = []
    with jupyter_server() as server:
        for fleet in args.fleet or list(FLEETS):
            r = measure(fleet, args.n, server)
            b = bill(r)
            results.append({**r, "bill_per_1000": b})
            print(report(r, b), flush=True)
    out = {"measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "assumptions": assumptions(), "fleets": results}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.out}")


def assumptions() -> dict[str, Any]:
    return {
        "api_call_s": cost_model.DEFAULT_LATENCY_S,
        "getmetricdata_s": cost_model.LATENCY_S["cloudwatch:GetMetricData"],
        "jupyter_http_request_s": cost_model.JUPYTER_HTTP_S,
        "jupyter_workers": cost_model.JUPYTER_WORKERS,
        "jupyter_budget_s": cost_model.JUPYTER_BUDGET_S,
        "sweeps_per_month": cost_model.SWEEPS_PER_MONTH["notebook"],
        "lambda_gb": cost_model.MEMORY_GB,
        "lambda_gb_s_usd": cost_model.LAMBDA_GB_S,
        "custom_metric_month_usd": cost_model.CW_METRIC_MONTH,
        "put_metric_data_per_1000_usd": cost_model.CW_PUT_PER_1000,
        "agent_puts_per_month": cost_model.AGENT_PUTS_PER_MONTH,
        "presigned_url_usd": 0.0,
        "egress_gb_usd": cost_model.EGRESS_GB,
    }


if __name__ == "__main__":
    main()

"""Benchmark: API calls per resource by operation, their floor (bench/floor.py) and the ratio, sweep
time against a local moto server, peak memory, the projected time on AWS and the reaper's own monthly
bill (bench/cost_model.py: stated latencies and public prices), plus each function's cold import time.

    .venv/bin/python bench/sweep_bench.py [--kind K]... [--n 100 1000] [--out bench/results/latest.json]

moto's GetMetricData is indexed by metric (reaper_devkit.moto_ext.cloudwatch_index) so its own
scan does not hide the client's figures. Times are of the client against a local moto server,
not of AWS: read them as relative figures; the call counts are what AWS would see.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pkgutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import cost_model  # noqa: E402
from bench import kinds as bench_kinds  # noqa: E402
from bench.floor import counting  # noqa: E402
from reaper.core.deadline import RESERVE_SECONDS, Deadline  # noqa: E402
from reaper.core.settings import Settings  # noqa: E402
from reaper.kinds.notebook.settings import NotebookSettings  # noqa: E402
from reaper.record.actionlog import create_table  # noqa: E402
from reaper.record.runtime import Runtime  # noqa: E402
from reaper.sweep import pipeline  # noqa: E402
from reaper.sweep.continuation import MAX_PARTS, Cursor  # noqa: E402
from reaper.wiring import build_runtime  # noqa: E402
from reaper_devkit.calls import recording  # noqa: E402
from reaper_devkit.local_aws import local_account, session  # noqa: E402


def seeders() -> dict[str, Any]:
    out = {}
    for info in pkgutil.iter_modules(bench_kinds.__path__):
        module = importlib.import_module(f"bench.kinds.{info.name}")
        out[module.KIND] = module
    return out


def sweep_in_parts(rt: Runtime, kind: str, now: datetime, part_seconds: float) -> dict[str, Any]:
    """The same sweep again, split as a Lambda would split it, on a clock that runs at the stated AWS
    latencies of the calls made (cost_model): each part has `part_seconds` of work before its reserve.
    Returns how many parts it took, each part's projected seconds, and whether every resource was
    handled exactly once."""
    handled: list[str] = []
    seconds: list[float] = []
    resume: Cursor | None = None
    with recording() as calls:

        def clock() -> float:
            return cost_model.projected_seconds(calls.by_operation())

        def arrange(cursor: Cursor, elapsed: float) -> str:
            return f"part {cursor.part}"

        while True:
            start = clock()
            deadline = Deadline(start + part_seconds + RESERVE_SECONDS, clock)
            run = pipeline.sweep_run(rt, [kind], now, "bench-parts", deadline=deadline, resume=resume, continue_with=arrange)
            handled += [o.resource.id for o in run.outcomes if o.resource.id != "*"]
            seconds.append(round(clock() - start, 1))
            if run.next_part is None or run.arranged is None:
                break
            resume = run.next_part
    return {
        "part_seconds": part_seconds,
        "parts": len(seconds),
        "seconds_per_part": seconds,
        "handled": len(handled),
        "each_once": len(handled) == len(set(handled)),
        "errors": [o.reason for o in run.outcomes if o.resource.id == "*"],
    }


def measure(
    kind: str, module: Any, n: int, with_log: bool = False, part_seconds: float | None = None, agent_channel: str = "metric"
) -> dict[str, Any]:
    first_of_day: dict[str, int] | None = None
    with local_account():
        now = datetime.now(UTC)
        t0 = time.monotonic()
        module.seed(session(), n, now, **({"agent_channel": agent_channel} if kind == "notebook" else {}))
        seeded = time.monotonic() - t0
        settings = Settings().with_kind(NotebookSettings(agent_channel=agent_channel))  # dry-run, no log, no Slack: the sweep's own calls
        if with_log:
            # with the action log: the first sweep of the day (every message due) is counted apart,
            # and the figures are of a later sweep that day (messages told already)
            create_table(session().client("dynamodb"), "bench-log")
            settings = settings.replace(table="bench-log")
        rt = build_runtime(settings, region="us-east-1")
        kind = getattr(module, "SWEEPS", kind)  # a seeder may sweep its account as another name's kind
        if with_log:
            with recording() as first:
                pipeline.sweep(rt, [kind], now, event_id="bench-first")
            first_of_day = first.by_operation()
            now = now + timedelta(minutes=30)
        base = reset_peak_rss()
        with recording() as calls, counting() as items:
            t1 = time.monotonic()
            outcomes = pipeline.sweep(rt, [kind], now, event_id="bench")
            elapsed = time.monotonic() - t1
        peak = rss_kb("VmHWM")
        split = sweep_in_parts(rt, kind, now, part_seconds) if part_seconds else None
    verdicts: dict[str, int] = {}
    for o in outcomes:
        verdicts[o.verdict.value] = verdicts.get(o.verdict.value, 0) + 1
    by_op = calls.by_operation()
    floor = items.floor(by_op)
    floor_total = sum(floor.values())
    projected = cost_model.projected_seconds(by_op)
    queries = items.queries["cloudwatch:GetMetricData"]
    bill = cost_model.monthly_bill(kind, n, by_op, queries, verdicts, agent_channel=agent_channel)
    return {
        "kind": kind,
        "n": n,
        "agent_channel": agent_channel if kind == "notebook" else None,
        "with_log": with_log,
        "first_sweep_of_day_calls": first_of_day,
        "resources": len(outcomes),
        "verdicts": verdicts,
        "errors": sorted({o.reason[:200] for o in outcomes if o.verdict.value == "error"})[:5],
        "calls": by_op,
        "calls_total": calls.total(),
        "calls_per_resource": round(calls.total() / max(n, 1), 4),
        "floor": floor,
        "floor_total": floor_total,
        "floor_ratio": round(calls.total() / max(floor_total, 1), 3),
        "metric_queries": queries,
        "items_returned": dict(items.items),
        "sweep_seconds": round(elapsed, 2),
        "seed_seconds": round(seeded, 1),
        "peak_mb": round(peak / 1024, 1),  # the process's peak RSS during the sweep (moto runs in it too)
        "sweep_rss_growth_mb": round(max(peak - base, 0) / 1024, 1),
        "projected_aws_seconds": round(projected, 1),
        "half_timeout_exceeded": projected > cost_model.TIMEOUT_S / 2,
        "parts_at_10000": cost_model.parts(projected, n),
        "in_parts": split,
        "monthly_bill_usd": bill,
        "monthly_bill_per_1000_usd": cost_model.per_thousand(bill, n),
        "idle_spend_found_per_1000_usd_month": round(cost_model.idle_spend_found(outcomes) * 1000 / max(n, 1), 2),
    }


# what acting itself is, per kind, in the enforce sweep's calls: the change (one per action, or one per
# batch where the API takes many); everything else past the dry run's reads is the price of acting
CHANGES = ("Stop", "Delete", "Update", "Cancel", "Create", "Register", "Put", "Tag", "Untag", "Add", "Remove")
BOOKKEEPING = ("dynamodb:", "sqs:")


def measure_acting(kind: str, module: Any, n: int, agent_channel: str = "metric") -> dict[str, Any]:
    """A dry run and an enforce sweep (grace 0, action log and queue) of one seeded account: the calls
    the enforce sweep makes beyond the dry run's, apart from the changes themselves, per action."""
    with local_account():
        now = datetime.now(UTC)
        # a seeder whose floor account has nothing to act on (Studio: only Canvas apps are judged idle) seeds one that has
        seed = getattr(module, "seed_acting", module.seed)
        seed(session(), n, now, **({"agent_channel": agent_channel} if kind == "notebook" else {}))
        sweeps = getattr(module, "SWEEPS", kind)
        dry_rt = build_runtime(Settings().with_kind(NotebookSettings(agent_channel=agent_channel)), region="us-east-1")
        with recording() as dry:
            planned = pipeline.sweep(dry_rt, [sweeps], now, event_id="bench-dry")
        create_table(session().client("dynamodb"), "bench-log")
        queue = session().client("sqs").create_queue(QueueName="bench-queue")["QueueUrl"]
        settings = Settings(mode="enforce", grace_minutes=0, table="bench-log", queue_url=queue).with_kind(
            NotebookSettings(agent_channel=agent_channel)
        )
        rt = build_runtime(settings, region="us-east-1")
        with recording() as enforce:
            outcomes = pipeline.sweep(rt, [sweeps], now, event_id="bench-enforce")
    dry_calls, calls = dry.by_operation(), enforce.by_operation()
    extra = {op: c - dry_calls.get(op, 0) for op, c in calls.items() if c != dry_calls.get(op, 0)}
    changes = {op: c for op, c in extra.items() if not op.startswith(BOOKKEEPING) and op.split(":")[1].startswith(CHANGES)}
    price = {op: c for op, c in extra.items() if op not in changes}
    acted = sum(1 for o in outcomes if o.executed)
    # resources not acted on whose message the enforce sweep logs (the dry run had no log): each costs a
    # claim, a record and an unposted copy (3 PutItem), and its share of the batched queue and drop calls
    notices = sum(1 for o in outcomes if not o.executed and o.should_notify())
    notice_calls = min(price.get("dynamodb:PutItem", 0), 3 * notices) + 2 * round(notices / 10)
    return {
        "kind": sweeps,
        "n": n,
        "would_act": sum(1 for o in planned if o.verdict.value == "act"),
        "acted": acted,
        "verdicts": dict(
            sorted({v: sum(1 for o in outcomes if o.verdict.value == v) for v in {o.verdict.value for o in outcomes}}.items())
        ),
        "errors": sorted({o.reason[:200] for o in outcomes if o.verdict.value == "error"})[:5],
        "dry_run_calls": dry.total(),
        "dry_run_calls_per_resource": round(dry.total() / max(n, 1), 4),
        "enforce_calls": enforce.total(),
        "changes": changes,
        "price_of_acting": price,
        "calls_per_action": round(sum(price.values()) / max(acted, 1), 3),
        "notices_logged": notices,
        "calls_per_action_net_of_notices": round((sum(price.values()) - notice_calls) / max(acted, 1), 3),
        "changes_per_action": round(sum(changes.values()) / max(acted, 1), 3),
        "enforce_projected_aws_seconds": round(cost_model.projected_seconds(calls), 1),
    }


def backlog(r: dict[str, Any], target_n: int = 10_000) -> dict[str, Any]:
    """A first enforce sweep over `target_n` resources that are all to be acted on, projected linearly
    from a measured `measure_acting` result: the dry run's reads scaled by resources, and per action its
    change and its price, each call at the cost model's default latency (every one of them is a
    describe, a change or a DynamoDB/SQS write)."""
    reads_s = r["dry_run_calls_per_resource"] * target_n * cost_model.DEFAULT_LATENCY_S
    price = r.get("calls_per_action_net_of_notices", r["calls_per_action"])  # all to act on: no notices
    per_action_s = (price + r["changes_per_action"]) * cost_model.DEFAULT_LATENCY_S
    plan = cost_model.parts(reads_s + per_action_s * target_n, target_n, target_n)
    # the function's own part: it works until RESERVE_SECONDS before its timeout (reaper.core.deadline), not half of it
    full = cost_model.parts(reads_s + per_action_s * target_n, target_n, target_n, per_part=cost_model.TIMEOUT_S - RESERVE_SECONDS)
    return {
        **plan,
        "max_parts": MAX_PARTS,
        "within_max_parts": plan["parts"] <= MAX_PARTS,
        "parts_of_full_length": full["parts"],
        "full_part_s": cost_model.TIMEOUT_S - RESERVE_SECONDS,
    }


def report_acting(r: dict[str, Any]) -> str:
    per = "\n".join(
        f"    {op:50} {c:6} = {c / max(r['acted'], 1):.3f}/action" for op, c in {**r["changes"], **r["price_of_acting"]}.items()
    )
    b = backlog(r)
    return (
        f"{r['kind']:13} N={r['n']:6}  dry run {r['dry_run_calls_per_resource']:.4f} calls/resource; enforce acted on {r['acted']} "
        f"(dry run: {r['would_act']} would): {r['calls_per_action']:.3f} calls/action beyond the dry run's reads and the changes "
        f"({r['changes_per_action']:.3f} changes/action; net of the log's {r.get('notices_logged', 0)} notices of resources "
        f"not acted on: {r.get('calls_per_action_net_of_notices', r['calls_per_action']):.3f}); "
        f"enforce projected on AWS {r['enforce_projected_aws_seconds']:.0f} s\n"
        f"    a first enforce sweep over 10,000 to act on (linear projection): {b['projected_s']:.0f} s = {b['parts']} part(s) "
        f"of <= {cost_model.TIMEOUT_S // 2} s, done in {b['chain_min']} min ({'within' if b['within_max_parts'] else 'PAST'} "
        f"the {MAX_PARTS}-part limit; {b['parts_of_full_length']} part(s) of the function's full {b['full_part_s']} s)\n{per}"
    )


def rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def reset_peak_rss() -> int:
    """Reset the process's RSS high-water mark (Linux: clear_refs 5) and return the RSS now, in kB.
    tracemalloc is not used: it traces moto's in-process server too and slows it past boto's timeouts."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")
    return rss_kb("VmRSS")


# what the template gives every function; each value must pass the settings' own checks (a table name
# of 3 to 255 characters), or every cold import fails on its configuration, not its imports
COLD_ENV = {
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "REAPER_TABLE": "mlreaper-bench-log",
    "REAPER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/mlreaper-bench",
}


def fresh(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One fresh interpreter; a failure is said in one line (its last line of stderr), never a traceback here."""
    done = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"cold start: {' '.join(argv)[:80]} failed (exit {done.returncode}): {last}")
    return done


def cold_import(function: str, runs: int = 9) -> float:
    """Median seconds to import a function's module in a fresh interpreter (the cold start's share)."""
    code = (
        "import time,importlib.util,sys;t=time.perf_counter();"
        f"s=importlib.util.spec_from_file_location('app','{ROOT}/functions/{function}/app.py');"
        "m=importlib.util.module_from_spec(s);s.loader.exec_module(m);print(time.perf_counter()-t)"
    )
    env = {**os.environ, **COLD_ENV}
    times = [float(fresh(["-c", code], env).stdout.strip().splitlines()[-1]) for _ in range(runs)]
    return round(statistics.median(times), 3)


def cli_help(runs: int = 9) -> dict[str, float]:
    """Median wall seconds of `python -m reaper --help` and `--version` in fresh interpreters, and of a bare
    interpreter (`python -c pass`) to subtract: what the CLI's own imports cost before it answers."""
    env = {**os.environ, **COLD_ENV}

    def median_of(argv: list[str]) -> float:
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            fresh(argv, env)
            times.append(time.perf_counter() - started)
        return round(statistics.median(times), 3)

    bare = median_of(["-c", "pass"])
    helped = median_of(["-m", "reaper", "--help"])
    return {
        "python_bare": bare,
        "reaper_help": helped,
        "reaper_version": median_of(["-m", "reaper", "--version"]),
        "help_own": round(helped - bare, 3),
    }


def report(r: dict[str, Any]) -> str:
    n = r["n"]
    per = "\n".join(f"    {op:50} {c:6} = {c / n:.4f}/res   floor {r['floor'][op]:6}" for op, c in r["calls"].items())
    bill = r["monthly_bill_per_1000_usd"]
    lines = "  ".join(f"{k} ${v:,.2f}" for k, v in bill.items() if k != "total" and v)
    late = "  past half the 300 s timeout: split into parts" if r["half_timeout_exceeded"] else ""
    plan = r["parts_at_10000"]
    fits = cost_model.fits_interval(r["kind"], plan)
    interval = cost_model.SWEEP_INTERVAL_MIN.get(r["kind"], 15)
    split = (
        f"\n    at N=10,000: projected {plan['projected_s']:.0f} s on AWS = {plan['parts']} invocation(s) of <= "
        f"{cost_model.TIMEOUT_S // 2} s"
        + (
            f" (last part starts at {plan['last_part_starts_min']} min, done by {plan['chain_min']} min; "
            f"{'within' if fits else 'PAST'} the {interval}-min sweep interval"
            f"{'' if fits else ': the full sweep due meanwhile defers to the chain'})"
            if plan["parts"] > 1
            else ""
        )
    )
    if r.get("in_parts"):
        p = r["in_parts"]
        split += (
            f"\n    swept again in parts of {p['part_seconds']:.0f} s (projected clock): {p['parts']} part(s) of "
            f"{', '.join(f'{x:.0f}' for x in p['seconds_per_part'])} s; {p['handled']} handled, "
            f"{'each exactly once' if p['each_once'] and p['handled'] == r['resources'] else 'NOT each once'}"
            + (f"; errors: {p['errors']}" if p["errors"] else "")
        )
    first = r.get("first_sweep_of_day_calls")
    log_note = ""
    if first is not None:
        log_note = "\n    with the action log; a later sweep of the day. The first sweep of the day: " + ", ".join(
            f"{op} {c} = {c / n:.4f}/res" for op, c in first.items()
        )
    channel = f" (AgentChannel={r['agent_channel']})" if r.get("agent_channel") else ""
    return (
        f"{r['kind']:13} N={n:6}{channel}  {r['calls_total']:6} calls = {r['calls_per_resource']:.4f}/resource; "
        f"floor {r['floor_total']} ({r['floor_ratio']:.2f}x)  moto {r['sweep_seconds']:.1f} s  peak RSS {r['peak_mb']} MB "
        f"(+{r['sweep_rss_growth_mb']} MB in the sweep)  "
        f"projected on AWS {r['projected_aws_seconds']:.1f} s{late}{split}\n{per}\n"
        f"    reaper's own bill per 1,000 a month: ${bill['total']:,.2f} ({lines}); "
        f"idle spend found per 1,000: ${r['idle_spend_found_per_1000_usd_month']:,.2f}/month{log_note}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", action="append", default=[])
    p.add_argument("--n", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "latest.json"))
    p.add_argument("--no-cold-start", action="store_true")
    p.add_argument(
        "--with-log", action="store_true", help="sweep with an action log: count a later sweep of the day (the first is shown apart)"
    )
    p.add_argument(
        "--parts",
        type=float,
        metavar="SECONDS",
        help="also sweep again in parts of SECONDS of projected AWS time each, as a Lambda continues a long sweep",
    )
    p.add_argument(
        "--act",
        action="store_true",
        help="instead: a dry run and an enforce sweep (grace 0) of one seeded account; calls per action beside calls per resource",
    )
    p.add_argument("--cold-start-only", action="store_true", help="only the functions' cold import times (run on a quiet machine)")
    p.add_argument(
        "--agent-channel",
        choices=["metric", "logs"],
        default="metric",
        help="notebooks: where the agent reports (the template's AgentChannel; default metric, the contract)",
    )
    args = p.parse_args()
    available = seeders()
    kinds = [] if args.cold_start_only else (args.kind or sorted(available))
    results: dict[str, Any] = {"measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "sweeps": [], "cold_import_seconds": {}}
    for kind in kinds:
        if kind not in available:
            print(f"no bench seeder for {kind!r} (have: {', '.join(sorted(available))})", file=sys.stderr)
            return 2
        for n in args.n:
            print(f"… {kind} N={n}: seeding and sweeping", file=sys.stderr, flush=True)
            if args.act:
                a = measure_acting(kind, available[kind], n, agent_channel=args.agent_channel)
                results.setdefault("acting", []).append({**a, "backlog_10000": backlog(a)})
                print(report_acting(a), flush=True)
                Path(args.out).write_text(json.dumps(results, indent=1))
                continue
            r = measure(kind, available[kind], n, with_log=args.with_log, part_seconds=args.parts, agent_channel=args.agent_channel)
            results["sweeps"].append(r)
            print(report(r), flush=True)
            out = Path(args.out)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(results, indent=1))  # after each sweep: a slow N keeps what it measured
    if not args.no_cold_start:
        results["load_average_before_cold_start"] = [round(x, 2) for x in os.getloadavg()]  # 1, 5, 15 min: say how quiet it was
        for fn in sorted(d.name for d in (ROOT / "functions").iterdir() if (d / "app.py").exists()):
            results["cold_import_seconds"][fn] = cold_import(fn)
            print(f"cold import {fn:14} {results['cold_import_seconds'][fn]:.3f} s (median of 9)")
        results["cli_seconds"] = cli_help()
        print("reaper --help (wall, median of 9): " + ", ".join(f"{k} {v:.3f} s" for k, v in results["cli_seconds"].items()))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

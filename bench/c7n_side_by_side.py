"""Side by side with Cloud Custodian: the same seeded account (bench/kinds seeders, N = 1,000 each of
notebooks, EC2 boxes and endpoints), Cloud Custodian's nearest policies and the reaper's sweep, each on
a fresh seed, every AWS call counted by operation on the server's side (bench/server_count.py), the same
way for both tools; and which resources each acted on, against what the seed made busy or idle.

    python3.11 -m venv /work/c7n-venv && /work/c7n-venv/bin/pip install c7n
    .venv/bin/python bench/c7n_side_by_side.py [--n 1000] [--kind K]... [--custodian /work/c7n-venv/bin/custodian]

Writes bench/results/c7n-side-by-side-<N>.json. Not part of `make test`: it needs Cloud Custodian's venv.
docs/performance.md ("Side by side with Cloud Custodian") reads the figures.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from moto.moto_server.threaded_moto_server import ThreadedMotoServer  # noqa: E402
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from bench import c7n_policies, truth  # noqa: E402
from bench.kinds import ec2 as seed_ec2  # noqa: E402
from bench.kinds import endpoint as seed_endpoint  # noqa: E402
from bench.kinds import notebook as seed_notebook  # noqa: E402
from bench.server_count import CountingApp, Tally  # noqa: E402
from reaper.core.model import Mode  # noqa: E402
from reaper.core.settings import Settings  # noqa: E402
from reaper.record.actionlog import create_table  # noqa: E402
from reaper.sweep import pipeline  # noqa: E402
from reaper.wiring import build_runtime  # noqa: E402
from reaper_devkit import moto_ext  # noqa: E402
from reaper_devkit.calls import recording  # noqa: E402
from reaper_devkit.local_aws import FAKE_ENV, free_port, reset, session  # noqa: E402

SEEDERS: dict[str, Any] = {"notebook": seed_notebook, "ec2": seed_ec2, "endpoint": seed_endpoint}
BOOKKEEPING = ("dynamodb:", "sqs:")  # the reaper's action log and queue: no Custodian counterpart


class CountingMotoServer(ThreadedMotoServer):
    """moto's threaded server with the counting middleware in front of its app."""

    def __init__(self, port: int) -> None:
        super().__init__(ip_address="127.0.0.1", port=port, verbose=False)
        self.counter = CountingApp(DomainDispatcherApplication(create_backend_app))

    def _server_entry(self) -> None:
        self._server = make_server(self._ip_address, self._port, self.counter, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


@contextmanager
def counting_account() -> Iterator[tuple[str, CountingApp]]:
    """A local account (as reaper_devkit.local_aws.local_account) whose server counts every call."""
    moto_ext.apply()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = CountingMotoServer(free_port())
    server.start()
    url = f"http://127.0.0.1:{server._port}"
    saved = {k: os.environ.get(k) for k in [*FAKE_ENV, "AWS_ENDPOINT_URL", "AWS_PROFILE"]}
    os.environ.update({**FAKE_ENV, "AWS_ENDPOINT_URL": url})
    os.environ.pop("AWS_PROFILE", None)
    try:
        yield url, server.counter
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def fresh_seed(url: str, kind: str, n: int) -> tuple[datetime, truth.Truth]:
    """Empty the account, seed `n` of `kind` as sweep_bench does, and say what each resource is."""
    reset(url)
    now = datetime.now(UTC)
    SEEDERS[kind].seed(session(), n, now)
    return now, truth.classify(kind, session(), now)


def run_custodian(custodian: str, kind: str, now: datetime, dry_run: bool) -> int:
    """One `custodian run` of the kind's policy against the local account; how many resources it matched."""
    with tempfile.TemporaryDirectory() as out:
        policy = Path(out) / "policy.json"
        doc = c7n_policies.policy(kind, now)
        policy.write_text(json.dumps(doc))
        argv = [custodian, "run", "-s", out, "--region", "us-east-1", "--cache-period", "0", str(policy)]
        done = subprocess.run(argv + (["--dryrun"] if dry_run else []), env=dict(os.environ), capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"custodian failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
        name = doc["policies"][0]["name"]
        matched = json.loads((Path(out) / name / "resources.json").read_text())
        return len(matched)


def custodian_side(url: str, counter: CountingApp, custodian: str, kind: str, n: int) -> dict[str, Any]:
    now, seen = fresh_seed(url, kind, n)
    with counter.counting() as dry:
        would = run_custodian(custodian, kind, now, dry_run=True)
    with counter.counting() as act:
        matched = run_custodian(custodian, kind, now, dry_run=False)
    return {**summarize(dry, act, seen), "would_act": would, "matched": matched}


def reaper_side(url: str, counter: CountingApp, kind: str, n: int) -> dict[str, Any]:
    now, seen = fresh_seed(url, kind, n)
    dry_rt = build_runtime(Settings(), region="us-east-1")
    with counter.counting() as dry, recording() as client_dry:
        planned = pipeline.sweep(dry_rt, [kind], now, event_id="c7n-bench-dry")
    create_table(session().client("dynamodb"), "bench-log")
    queue = session().client("sqs").create_queue(QueueName="bench-queue")["QueueUrl"]
    rt = build_runtime(Settings(mode=Mode.ENFORCE, grace_minutes=0, table="bench-log", queue_url=queue), region="us-east-1")
    with counter.counting() as act, recording() as client_act:
        outcomes = pipeline.sweep(rt, [kind], now, event_id="c7n-bench-enforce")
    out = summarize(dry, act, seen)
    return {
        **out,
        "would_act": sum(1 for o in planned if o.verdict.value == "act"),
        "executed": sum(1 for o in outcomes if o.executed),
        "errors": sorted({o.reason[:200] for o in outcomes if o.verdict.value == "error"})[:5],
        # why resources the seed made idle (or idle with an instance store) were not acted on: the first words of each reason
        "idle_kept_reasons": kept_reasons(outcomes, seen),
        # the same calls counted in the client (reaper_devkit.calls): the server's count is checked against it
        "client_side_totals": {"dry_run": client_dry.total(), "enforce": client_act.total()},
    }


def kept_reasons(outcomes: list[Any], seen: truth.Truth) -> dict[str, int]:
    out: dict[str, int] = {}
    for o in outcomes:
        if not o.executed and seen.classes.get(o.resource.id) in (truth.IDLE, truth.IDLE_INSTANCE_STORE):
            key = f"{o.verdict.value}: {o.reason[:90]}"
            out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1])[:8])


def summarize(dry: Tally, act: Tally, seen: truth.Truth) -> dict[str, Any]:
    """One tool's figures on one seed: calls of its dry run and of its acting run, by operation; the
    resources acted on, by what the seed made them; calls per action."""
    acted = act.acted_on(seen.owner)
    by_class: dict[str, int] = {}
    for rid in acted:
        c = seen.classes.get(rid, "unknown")
        by_class[c] = by_class.get(c, 0) + 1
    idle = {r for r, c in seen.classes.items() if c == truth.IDLE}
    calls = act.by_operation()
    own = {op: c for op, c in calls.items() if not op.startswith(BOOKKEEPING)}
    changes = len(act.changed)  # with repeats: a batch call names many, a retried call names its resource again
    return {
        "resources": len(seen.classes),
        "seeded_classes": seen.counts(),
        "dry_run": {"calls_total": dry.total(), "calls": dry.by_operation()},
        "enforce": {"calls_total": act.total(), "calls": calls},
        "resources_named_by_change_calls": changes,
        "acted_on": len(acted),
        "acted_on_by_class": dict(sorted(by_class.items())),
        "busy_acted_on": by_class.get(truth.BUSY, 0),
        "not_idle_acted_on": len(acted) - by_class.get(truth.IDLE, 0),
        "idle_missed": len(idle - acted),
        "calls_per_action": per(act.total(), len(acted)),
        "calls_per_action_without_bookkeeping": per(sum(own.values()), len(acted)),
        "calls_per_action_beyond_dry_run": per(act.total() - dry.total(), len(acted)),
    }


def per(calls: int, actions: int) -> float | None:
    """Calls per action; None when nothing was acted on (not a division by zero, not 0)."""
    return round(calls / actions, 3) if actions else None


def table(results: dict[str, Any]) -> str:
    """The docs' table (docs/performance.md, "Side by side with Cloud Custodian") from a results file."""
    lines = [
        "| kind | tool | dry run: calls | acting run: calls | acted on | busy acted on | other not-idle acted on "
        "| idle missed | calls/action | without the log's calls | calls/action beyond its dry run |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def num(x: float | None) -> str:
        return "–" if x is None else f"{x:,.3f}"

    for kind, sides in results["kinds"].items():
        for tool in ("custodian", "reaper"):
            r = sides.get(tool)
            if r is None:
                continue
            lines.append(
                f"| {kind} | {tool} | {r['dry_run']['calls_total']:,} | {r['enforce']['calls_total']:,} | {r['acted_on']:,} "
                f"| {r['busy_acted_on']:,} | {r['not_idle_acted_on'] - r['busy_acted_on']:,} | {r['idle_missed']:,} "
                f"| {num(r['calls_per_action'])} | {num(r['calls_per_action_without_bookkeeping'])} "
                f"| {num(r['calls_per_action_beyond_dry_run'])} |"
            )
    return "\n".join(lines)


def custodian_version(custodian: str) -> str:
    done = subprocess.run([custodian, "version"], capture_output=True, text=True)
    return done.stdout.strip() or done.stderr.strip()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--kind", action="append", choices=sorted(SEEDERS), default=[])
    p.add_argument("--custodian", default="/work/c7n-venv/bin/custodian")
    p.add_argument("--out")
    p.add_argument("--table", metavar="RESULTS", help="instead: print the docs' table from a results file")
    args = p.parse_args()
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return 0
    out = Path(args.out or ROOT / "bench" / "results" / f"c7n-side-by-side-{args.n}.json")
    results: dict[str, Any] = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "n": args.n,
        "custodian_version": custodian_version(args.custodian),
        "counting": "server side: bench/server_count.py in front of moto's server, one method for both tools",
        "kinds": {},
    }
    sides: list[tuple[str, Callable[[str, CountingApp, str], dict[str, Any]]]] = [
        ("custodian", lambda url, c, k: custodian_side(url, c, args.custodian, k, args.n)),
        ("reaper", lambda url, c, k: reaper_side(url, c, k, args.n)),
    ]
    truth.exact_dimension_statistics()  # CloudWatch's exact dimension match, for Custodian's GetMetricStatistics (bench/truth.py)
    with counting_account() as (url, counter):
        for kind in args.kind or list(SEEDERS):
            results["kinds"][kind] = {"custodian_policy": c7n_policies.policy(kind, datetime.now(UTC))["policies"][0]}
            for tool, run in sides:
                print(f"… {kind} N={args.n}: {tool}", file=sys.stderr, flush=True)
                results["kinds"][kind][tool] = r = run(url, counter, kind)
                print(
                    f"  {tool:9} dry run {r['dry_run']['calls_total']} calls; acting run {r['enforce']['calls_total']} calls, "
                    f"acted on {r['acted_on']} ({r['acted_on_by_class']}), {r['calls_per_action']} calls/action",
                    flush=True,
                )
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(results, indent=1, default=str))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

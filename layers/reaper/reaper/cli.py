"""The `reaper` command line. It runs the same pipeline as the deployed functions.

Exit status: 0 all verdicts fine, 1 some `error`, 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from reaper import kinds as kind_registry
from reaper.errors import ConfigError, ReaperError, RestoreError, UsageError
from reaper.model import Mode, Outcome, Verdict
from reaper.runtime import Runtime
from reaper.settings import Settings

DURATION = re.compile(r"^(\d+)([mhdw])$")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="reaper", description="mlreaper: stop idle ML resources on AWS, safely.")
    sub = p.add_subparsers(dest="command", required=True)

    def scope(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--kind", action="append", default=[], help="kind to sweep (repeatable; default: all)")
        sp.add_argument("--region", action="append", default=[], help="region (repeatable; default: AWS_REGION)")
        sp.add_argument("--table", help="action-log table (default: REAPER_TABLE)")

    sw = sub.add_parser("sweep", help="decide, act (in enforce), record and notify")
    scope(sw)
    sw.add_argument("--mode", choices=[m.value for m in Mode], help="override the mode for every kind")
    sw.add_argument("--grace-minutes", type=int, help="minutes between the warning and the action (0 = act at once)")
    sw.add_argument("--json", action="store_true", help="one JSON object per resource per line")

    pl = sub.add_parser("plan", help="a dry-run sweep shown as a table; records and posts nothing")
    scope(pl)
    pl.add_argument("--json", action="store_true")

    lg = sub.add_parser("log", help="the action log")
    lg.add_argument("--since", default="7d", help="how far back: 30m, 12h, 7d, 2w (default 7d)")
    lg.add_argument("--table")
    lg.add_argument("--json", action="store_true")

    rs = sub.add_parser("restore", help="bring back a reaped endpoint (or FSx file system, by id)")
    rs.add_argument("name")
    rs.add_argument("--table")

    it = sub.add_parser("init", help="create the action-log table, to run the CLI without the stack")
    it.add_argument("--table", required=True)

    dm = sub.add_parser("demo", help="the whole loop on a local, seeded account (needs the dev install)")
    dm.add_argument("--keep", action="store_true", help="leave the local server running at the end")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except (ConfigError, UsageError, RestoreError) as exc:
        print(f"reaper: {exc}", file=sys.stderr)
        return 2
    except NoCredentialsError:
        print("reaper: no AWS credentials found (standard chain: AWS_PROFILE, environment, instance role)", file=sys.stderr)
        return 2
    except ReaperError as exc:
        print(f"reaper: {exc}", file=sys.stderr)
        return 1
    except (ClientError, BotoCoreError) as exc:
        print(f"reaper: AWS call failed: {exc}", file=sys.stderr)
        return 1


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    changes: dict[str, object] = {}
    if getattr(args, "table", None):
        changes["table"] = args.table
    if getattr(args, "region", None):
        changes["regions"] = tuple(args.region)
    mode = getattr(args, "mode", None)
    if mode:
        changes["mode"] = mode
        changes["kind_modes"] = {}
    grace = getattr(args, "grace_minutes", None)
    if grace is not None:
        if grace < 0:
            raise UsageError("--grace-minutes must be 0 or more")
        changes["grace_minutes"] = grace
        changes["kind_grace_minutes"] = {}
    return settings.replace(**changes) if changes else settings


def _kinds(args: argparse.Namespace) -> list[str]:
    names = args.kind or sorted(kind_registry.REGISTRY)
    for name in names:
        kind_registry.get(name)  # raises UsageError for an unknown kind
    return names


def _progress(line: str) -> None:
    print(f"… {line}", file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    now = datetime.now(UTC)
    if args.command == "demo":
        try:
            from reaper_devkit.demo import run_demo
        except ImportError:
            raise UsageError("reaper demo needs the development install: run `make demo` from the repository") from None
        return int(run_demo(keep=args.keep))
    if args.command == "init":
        rt = Runtime.build(_settings(args))
        from reaper.actionlog import create_table

        created = create_table(rt.clients()("dynamodb"), args.table)
        print(f"table {args.table} {'created' if created else 'already exists'} in {rt.home_region}; export REAPER_TABLE={args.table}")
        return 0
    if args.command == "log":
        return _log(args, now)
    if args.command == "restore":
        from reaper import restore as restore_mod
        rt = Runtime.build(_settings(args))
        result = restore_mod.restore(rt, args.name, now, _progress)
        print(result)
        return 0
    kinds = _kinds(args)
    settings = _settings(args)
    if args.command == "plan":
        settings = settings.replace(mode=Mode.DRY_RUN, kind_modes={}, table=None, queue_url=None, slack_webhook_url=None, slack_secret_arn=None)
    rt = Runtime.build(settings)
    from reaper.pipeline import sweep

    outcomes = sweep(rt, kinds, now, event_id=f"cli-{uuid.uuid4()}", progress=_progress)
    if args.json:
        for o in outcomes:
            print(json.dumps(o.to_json(), default=str))
    else:
        print(format_table(outcomes))
    return 1 if any(o.verdict is Verdict.ERROR for o in outcomes) else 0


def format_table(outcomes: list[Outcome]) -> str:
    if not outcomes:
        return "nothing found"
    rows = [("KIND", "REGION", "ID", "VERDICT", "ACTION", "$/H", "REASON")]
    order = {Verdict.ERROR: 0, Verdict.ACT: 1, Verdict.WARN: 2, Verdict.EXEMPT: 3, Verdict.KEEP: 4}
    for o in sorted(outcomes, key=lambda o: (order[o.verdict], o.resource.kind, o.resource.id)):
        r = o.resource
        verb = o.decision.action or "-"
        if o.verdict is Verdict.ACT and not o.executed:
            verb = f"would {verb}" if o.mode is Mode.DRY_RUN else verb
        price = "?" if r.hourly_usd is None else f"{r.hourly_usd:.2f}"
        rows.append((r.kind, r.region, r.id, o.verdict.value, verb, price, o.reason))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:6])) + "  " + row[6] for row in rows]
    total = sum(o.resource.hourly_usd or 0 for o in outcomes if o.verdict in (Verdict.ACT, Verdict.WARN))
    counts = ", ".join(f"{sum(1 for o in outcomes if o.verdict is v)} {v.value}" for v in Verdict)
    lines.append(f"\n{len(outcomes)} resources: {counts}; acting on them saves about ${total:,.2f}/h (${total * 730:,.0f}/month)")
    return "\n".join(lines)


def parse_since(text: str, now: datetime) -> datetime:
    m = DURATION.match(text.strip())
    if not m:
        raise UsageError(f"--since {text!r}: use a number and m, h, d or w, e.g. 7d")
    n, unit = int(m.group(1)), m.group(2)
    return now - timedelta(**{{"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[unit]: n})


def _log(args: argparse.Namespace, now: datetime) -> int:
    since = parse_since(args.since, now)
    settings = _settings(args)
    if not settings.table:
        raise ConfigError("no action log: set REAPER_TABLE or pass --table (reaper init --table NAME creates one)")
    rt = Runtime.build(settings)
    assert rt.log is not None
    entries = list(rt.log.entries(since, now))
    if args.json:
        for e in entries:
            print(json.dumps(e, default=str))
        return 0
    if not entries:
        print(f"no actions logged since {since:%Y-%m-%d %H:%M} UTC")
        return 0
    for e in entries:
        print(format_log_line(e))
    return 0


def format_log_line(e: dict[str, object]) -> str:
    at = str(e.get("logged_at") or "")
    where = f"{e.get('kind')} {e.get('id')} ({e.get('region')})"
    if e.get("type") == "notice":
        body = str(e.get("title") or "")
        text = str(e.get("text") or "").replace("\n", " ")
        return f"{at:20} {'notice':6} {'-':18} {where} — {body}{': ' + text if text else ''}"
    verb = str(e.get("action") or "-")
    if e.get("type") not in (None, "verdict") and not e.get("verdict"):
        return f"{at:20} {str(e.get('type')):6} {verb:18} {where} — {e.get('reason') or e.get('text') or ''}"
    if e.get("verdict") == "act" and not e.get("executed"):
        verb = f"would {verb}"
    return f"{at:20} {str(e.get('verdict', '?')):6} {verb:18} {where} — {e.get('reason')}"

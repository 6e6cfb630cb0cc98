"""The `reaper` command line. It runs the same pipeline as the deployed functions.

Like the AWS CLI: `--profile`, `--region`, `--output` and `--debug` go before or after the command.
Exit status (docs/cli.md): 0 all verdicts fine; 1 some `error`; 2 bad usage or configuration (one
line on stderr); 3 AWS credentials missing, expired or refused; 4 an AWS service error stopped the
command; 130 interrupted (Ctrl-C). The configuration is checked before the first real call
(reaper/aws/preflight.py).

This module is imported by `reaper --help` and `reaper --version`: at its top only argparse-level
code (no boto3, botocore, pydantic settings or kinds); the rest is imported when a command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from reaper import __version__
from reaper.cli.exits import AWS_ERROR, CREDENTIALS, USAGE, exit_status
from reaper.cli.formats import (
    LOG_COLUMNS,
    OUTCOME_COLUMNS,
    OUTPUTS,
    QUERY,
    as_logged,
    compile_query,
    log_row,
    matches,
    to_csv,
    to_json_lines,
)
from reaper.cli.helptext import description, examples
from reaper.cli.output import Printer, fit_log_line, format_log_line, format_table, select, silence_stdout, terminal_width
from reaper.core.errors import ConfigError, NoRestoreRecord, RestoreError, UsageError
from reaper.core.kind_names import KIND_NAMES
from reaper.core.model import Mode, Verdict
from reaper.report.summary import GROUPS

if TYPE_CHECKING:
    from reaper.aws.discounts import Discounts
    from reaper.core.settings import Settings
    from reaper.record.logentry import LogEntry
    from reaper.record.runtime import Runtime

__all__ = ["main", "format_table", "format_log_line", "parse_since", "version", "AWS_ERROR", "CREDENTIALS", "USAGE"]

DURATION = re.compile(r"^(\d{1,12})([mhdw])$", re.ASCII)  # ASCII: `٧d` is not 7 days
UNIT_MINUTES = {"m": 1, "h": 60, "d": 1440, "w": 10080}
MAX_SINCE = timedelta(days=400)  # the log keeps nothing older (actionlog.LOG_TTL; a test holds them equal)
NOTEBOOK_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
HTML_FILE = "mlreaper-report.html"
RESTORE_KINDS = (
    "endpoint",
    "fsx",
    "capacity",
    "bedrock-pt",
    "mlflow",
    "storage",
)  # the kinds with a restorer (reaper.restore.run.restorable_kinds; a test holds them equal)
SWEEPS = ("sweep", "plan", "coverage")  # reach AWS once before sweeping (preflight.check_reach)
ALL_OUTPUTS = (*OUTPUTS, "html")
# each change is recorded right after it is made (pipeline.py), so an interrupted sweep loses none
INTERRUPTED = (
    "changes already made stay made and are each in the action log (when one is configured); the next sweep posts what was not posted"
)


class _Parser(argparse.ArgumentParser):
    """argparse, with a bad flag or value said on one line (exit 2: docs/cli.md, Exit status), not a usage block."""

    def error(self, message: str) -> NoReturn:
        print(f"reaper: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(USAGE)


class _Version(argparse.Action):
    """`--version`, looked up only when asked (the distribution's metadata is a scan of sys.path)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        print(f"reaper (mlreaper) {version()}")
        parser.exit()


def version() -> str:
    """The installed distribution's version; the layer's constant when run from a checkout."""
    from importlib import metadata

    try:
        return metadata.version("mlreaper")
    except metadata.PackageNotFoundError:
        return __version__


def _global_options(p: argparse.ArgumentParser, after_command: bool, outputs: tuple[str, ...] = ()) -> None:
    """The AWS CLI's global options. After the command they default to SUPPRESS, so a value given
    before the command is kept unless the same option is given again after it (then that one wins);
    there, `--output` offers only the forms that command writes."""
    unset = argparse.SUPPRESS if after_command else None
    p.add_argument("--profile", default=unset, help="AWS profile (default: AWS_PROFILE, then the standard chain)")
    p.add_argument(
        "--region",
        action="append",
        default=unset,
        help="region (repeatable: plan, sweep and coverage sweep each; the first is where the action log is; default: AWS_REGION)",
    )
    forms = outputs or ALL_OUTPUTS
    p.add_argument(
        "--output",
        "-o",
        choices=forms,
        default=unset,
        help=", ".join(OUTPUT_HELP[f] for f in forms) + ("" if outputs else " (each command says which it writes)"),
    )
    p.add_argument(
        "--query",
        default=unset,
        metavar="JMESPATH",
        help="with --output json: a JMESPath expression applied to each object, as the AWS CLI's --query (e.g. 'id' or '{id: id, why: reason}')",
    )
    p.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS if after_command else False,
        help="log botocore's and the reaper's debug lines on stderr (secrets redacted)",
    )


OUTPUT_HELP = {
    "table": "table (default; whole reasons, wrapped)",
    "json": "json (one object per line)",
    "csv": "csv (a header row)",
    "html": "html (a page with a chart, written to --out)",
}
# the forms each command writes: `--output` after the command offers only these
COMMAND_OUTPUTS: dict[str, tuple[str, ...]] = {
    "sweep": OUTPUTS,
    "plan": OUTPUTS,
    "coverage": ("table", "json"),
    "log": OUTPUTS,
    "report": ALL_OUTPUTS,
    "restore": ("table",),
    "init": ("table",),
    "demo": ("table",),
    "iam": ("json",),
    "org": ("table", "json"),
    "org set": ("table", "json"),
}


def _command(sub: Any, name: str, help_line: str) -> argparse.ArgumentParser:
    """A command's parser: its one-line help, its description and examples (reaper/cli/helptext.py), and
    the global options after it, with `--output` limited to the forms it writes."""
    outputs = COMMAND_OUTPUTS[name]
    after = _Parser(add_help=False)
    _global_options(after, after_command=True, outputs=outputs)
    sp: argparse.ArgumentParser = sub.add_parser(
        name.split()[-1],  # "org set" is the verb `set` of `org`
        parents=[after],
        help=help_line,
        description=textwrap.fill(description(name), 96),
        epilog=examples(name),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sp.set_defaults(outputs=outputs)
    return sp


def _json_alias(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--json", action="store_true", help="same as --output json")


def _kind_option(sp: argparse.ArgumentParser, help_text: str = "kind (repeatable; default: all)") -> None:
    sp.add_argument("--kind", action="append", default=[], choices=KIND_NAMES, metavar="KIND", help=f"{help_text}: {', '.join(KIND_NAMES)}")


def _filters(sp: argparse.ArgumentParser) -> None:
    _kind_option(sp)
    sp.add_argument(
        "--verdict", action="append", default=[], choices=[v.value for v in Verdict], help="show only these verdicts (repeatable)"
    )
    sp.add_argument("--owner", action="append", default=[], help="show only resources of this ml:owner (repeatable)")


TABLE_HELP = "the action-log DynamoDB table (default: REAPER_TABLE; the stack's output ActionLogTableName)"


def _scope(sp: argparse.ArgumentParser) -> None:
    _filters(sp)
    sp.add_argument("--table", help=TABLE_HELP)
    _json_alias(sp)


def _sweep_parser(sub: Any) -> None:
    sw = _command(sub, "sweep", "decide, act (in enforce), record and notify")
    _scope(sw)
    sw.add_argument("--mode", choices=[m.value for m in Mode], help="override the mode for every kind")
    sw.add_argument("--grace-minutes", type=int, help="minutes between the warning and the action (0 = act at once)")


def _plan_parser(sub: Any) -> None:
    pl = _command(sub, "plan", "a dry-run sweep shown as a table; records and posts nothing")
    _scope(pl)


def _org_args(sp: argparse.ArgumentParser) -> None:
    """The organisation's central log (docs/deploy-organisation.md)."""
    sp.add_argument("--org", action="store_true", help="read the organisation's central log: every member account")
    sp.add_argument("--org-table", help="the central log table (default: REAPER_ORG_TABLE)")


def _coverage_parser(sub: Any) -> None:
    cv = _command(sub, "coverage", "a dry-run sweep: what it can judge, what it cannot (and its cost), and the fix")
    _kind_option(cv)
    _json_alias(cv)
    _org_args(cv)
    cv.add_argument("--since", default="1d", help="with --org: how far back each member's latest tally is looked for (default 1d)")


def _log_parser(sub: Any) -> None:
    lg = _command(sub, "log", "the action log")
    lg.add_argument("--since", default="7d", help="how far back: 30m, 12h, 7d, 2w (default 7d; at most 400d)")
    lg.add_argument("--table", help=TABLE_HELP)
    _filters(lg)
    _json_alias(lg)
    _org_args(lg)


def _report_parser(sub: Any) -> None:
    rp = _command(sub, "report", "what was reclaimed and what it saved, from the action log")
    rp.add_argument("--since", help="how far back (default 7d, with --bill 30d; at most 400d)")
    rp.add_argument(
        "--by",
        choices=GROUPS,
        default="owner",
        help="group the savings by the ml:owner tag, the kind, or the ml:project tag; with --bill, project groups the bill by ml:project",
    )
    _kind_option(rp, "only these kinds (repeatable; default: all)")
    rp.add_argument(
        "--discounts",
        action="store_true",
        help="also what the savings come to after Savings Plans / RI coverage (Cost Explorer: $0.01 a request, one read a day; "
        "REAPER_DISCOUNTS=on does the same)",
    )
    rp.add_argument(
        "--units",
        action="store_true",
        help="the week's unit costs beside last week's: per training run (by ml:project), per 1,000 inferences (per endpoint), "
        "per 1,000 Bedrock tokens (per model); table or --json",
    )
    rp.add_argument("--table", help=TABLE_HELP)
    _json_alias(rp)
    rp.add_argument("--out", help=f"the file --output html writes (default {HTML_FILE})")
    rp.add_argument(
        "--bill",
        action="store_true",
        help="what AWS billed (Cost Explorer, $0.01 a request, cached for the day) in four buckets, beside what the reaper claims",
    )
    _org_args(rp)


def _restore_parser(sub: Any) -> None:
    rs = _command(sub, "restore", "bring back a reaped endpoint (or FSx file system, by id)")
    rs.add_argument("name", metavar="NAME", help="the endpoint's name, or the FSx file system's id (fs-...), as `reaper log` shows it")
    rs.add_argument("--kind", choices=RESTORE_KINDS, help="which kind's restore record, only when NAME has records as more than one")
    rs.add_argument("--table", help=TABLE_HELP)


def _init_parser(sub: Any) -> None:
    it = _command(sub, "init", "create the action-log table, to run the CLI without the stack")
    it.add_argument("--table", required=True, help="the name of the table to create (then export REAPER_TABLE=NAME)")


def _demo_parser(sub: Any) -> None:
    dm = _command(sub, "demo", "the whole loop on a local, seeded account (needs moto: the demo extra or the dev install)")
    dm.add_argument("--keep", action="store_true", help="leave the local server running at the end, and print how to point the CLI at it")


def _iam_parser(sub: Any) -> None:
    im = _command(sub, "iam", "print the IAM policy a command needs (--read-only: plan and coverage), from what the code calls")
    im.add_argument(
        "--read-only", action="store_true", required=True, help="the policy `reaper plan` and `reaper coverage` need: reads only"
    )
    _kind_option(im, "only these kinds (repeatable; default: all)")


def _org_parser(sub: Any) -> None:
    from reaper.cli import org_set

    org_set.add_parser(sub, _command)


COMMANDS = (
    _sweep_parser,
    _plan_parser,
    _coverage_parser,
    _log_parser,
    _report_parser,
    _restore_parser,
    _init_parser,
    _demo_parser,
    _iam_parser,
    _org_parser,
)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="reaper",
        description="mlreaper: stop idle ML resources on AWS, safely. Exit statuses: docs/reference/exit-codes.md.",
    )
    p.add_argument("--version", action=_Version)
    _global_options(p, after_command=False)
    sub = p.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    return p


def output_of(args: argparse.Namespace) -> str:
    """`--output`, with `--json` as its alias; both, disagreeing, or a form the command has not, is a usage error."""
    chosen = getattr(args, "output", None)
    if getattr(args, "json", False):
        if chosen not in (None, "json"):
            raise UsageError(f"--json is --output json; it cannot go with --output {chosen}")
        chosen = "json"
    allowed = getattr(args, "outputs", OUTPUTS)
    if chosen is not None and chosen not in allowed:
        raise UsageError(f"--output {chosen}: reaper {args.command} writes {', '.join(allowed)}")
    return chosen or "table"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or a bad flag (2, said on one line)
        return exc.code if isinstance(exc.code, int) else USAGE
    _plain_logging()
    undo_debug = _debug() if args.debug else None
    try:
        with _query(args):
            return _run(args)
    except BrokenPipeError:  # the reader went away while something else was printing
        silence_stdout()
        return 0
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's 128 + SIGINT, no traceback
        print(f"reaper: interrupted; {INTERRUPTED}", file=sys.stderr)
        return 130
    except Exception as exc:
        status, line = exit_status(exc)
        if status is None:
            raise
        print(f"reaper: {line}", file=sys.stderr)
        return status
    finally:
        if undo_debug is not None:
            undo_debug()


@contextlib.contextmanager
def _query(args: argparse.Namespace) -> Iterator[None]:
    """`--query` applies to JSON output only (the AWS CLI's), for this command only."""
    expression = getattr(args, "query", None)
    if expression is None:
        yield
        return
    if output_of(args) != "json":
        raise UsageError("--query selects from JSON: add --output json")
    token = QUERY.set(compile_query(expression))
    try:
        yield
    finally:
        QUERY.reset(token)


def _debug() -> Callable[[], None]:
    from reaper.cli.debug import debug_logging

    return debug_logging()


class _StderrLines(logging.Handler):
    """One plain line per warning, on whatever sys.stderr is now (not the one at first use)."""

    def emit(self, record: logging.LogRecord) -> None:
        from reaper.cli.progress import clear_active

        clear_active()  # a warning starts on its own line, not after a progress line
        print(f"reaper: {record.getMessage()}", file=sys.stderr)


def _plain_logging() -> None:
    """The core logs through `reaper`: each problem is printed once, as one line."""
    log = logging.getLogger("reaper")
    if not any(isinstance(h, _StderrLines) for h in log.handlers):
        log.addHandler(_StderrLines(logging.WARNING))


def _settings(args: argparse.Namespace) -> Settings:
    from reaper.core.settings import MAX_GRACE_MINUTES, Settings, table_name_problem

    settings = Settings.from_env()
    changes: dict[str, object] = {}
    table = getattr(args, "table", None)
    if table is not None:
        problem = table_name_problem(table)
        if problem:
            raise UsageError(f"--table {table!r}: {problem}")
        changes["table"] = table
    if getattr(args, "region", None):
        changes["regions"] = tuple(args.region)
    mode = getattr(args, "mode", None)
    if mode:
        changes["mode"] = mode
        changes["kind_modes"] = {}
    grace = getattr(args, "grace_minutes", None)
    if grace is not None:
        if not 0 <= grace <= MAX_GRACE_MINUTES:
            raise UsageError(f"--grace-minutes {grace}: from 0 (act at once) to {MAX_GRACE_MINUTES:,} (a year)")
        changes["grace_minutes"] = grace
        changes["kind_grace_minutes"] = {}
    return settings.replace(**changes) if changes else settings


def _runtime(args: argparse.Namespace, settings: Settings, needs_table: bool = False) -> Runtime:
    """Profile, credentials (exit 3), regions, then the table (exit 2): each wrong one said in one line."""
    from reaper.aws import preflight
    from reaper.aws.clients import default_region
    from reaper.wiring import build_runtime

    if needs_table and not settings.table:
        raise ConfigError("no action log: set REAPER_TABLE or pass --table (reaper init --table NAME creates one)")
    session = preflight.session(getattr(args, "profile", None))
    preflight.check_endpoints(session, os.environ)
    preflight.check_credentials(session)
    home = settings.regions[0] if settings.regions else default_region(session)
    preflight.check_regions(session, settings.regions or ((home,) if home else ()))
    rt = build_runtime(settings, session=session)
    if args.command in SWEEPS:
        preflight.check_reach(rt.clients()("sts"))
    if settings.table and args.command != "init":
        preflight.check_table(rt.clients()("dynamodb"), settings.table, rt.home_region)
    return rt


def _kinds(args: argparse.Namespace) -> list[str]:
    from reaper import kinds

    # each kind once, however often it is named: one verdict per resource per sweep
    names = list(dict.fromkeys(args.kind)) or sorted(kinds.REGISTRY)
    _known_kinds(names)
    return names


def _known_kinds(names: list[str]) -> None:
    """An unknown kind is a usage error (not an empty log or report)."""
    from reaper import kinds

    for name in names:
        kinds.get(name)


def _progress(line: str) -> None:
    print(f"… {line}", file=sys.stderr, flush=True)


def _demo(keep: bool) -> int:
    """The demo lives in the development kit, found through its entry point: the layer never imports the kit."""
    from importlib import metadata

    found = metadata.entry_points(group="mlreaper.commands", name="demo")
    try:
        run_demo = next(iter(found)).load()
    except (StopIteration, ImportError):
        # pip install . ships reaper_devkit but not moto (the `demo` extra)
        raise UsageError("reaper demo needs moto: pip install 'mlreaper[demo]' (or run `make demo` in the repository)") from None
    return int(run_demo(keep=keep))


def _run(args: argparse.Namespace) -> int:
    now = datetime.now(UTC)
    if args.command == "demo":
        return _demo(keep=args.keep)
    if args.command == "init":
        rt = _runtime(args, _settings(args))
        from reaper.record.actionlog import create_table

        created = create_table(rt.clients()("dynamodb"), args.table)
        print(f"table {args.table} {'created' if created else 'already exists'} in {rt.home_region}; export REAPER_TABLE={args.table}")
        return 0
    reads = {"log": _log, "report": _report, "restore": _restore, "org": _org_set, "iam": _iam}
    if args.command in reads:
        return reads[args.command](args, now)
    if args.command == "coverage" and args.org:
        return _org_coverage(args, now)
    output = output_of(args)
    kinds = _kinds(args)
    settings = _settings(args)
    if args.command in ("plan", "coverage"):
        settings = settings.replace(
            mode=Mode.DRY_RUN, kind_modes={}, table=None, queue_url=None, slack_webhook_url=None, slack_secret_arn=None
        )
    rt = _runtime(args, settings)
    import uuid

    from reaper.cli.progress import on_terminal, showing
    from reaper.sweep.pipeline import sweep

    with showing(on_terminal(quiet=output == "json")) as progress:
        outcomes = sweep(rt, kinds, now, event_id=f"cli-{uuid.uuid4()}", progress=progress)
    out = Printer()
    if args.command == "coverage":
        from reaper.cli import coverage_command

        if output == "json":
            for line in to_json_lines(coverage_command.rows(outcomes, settings)):
                out(line)
        else:
            out(coverage_command.format_coverage(outcomes, settings))
        return 1 if any(o.verdict is Verdict.ERROR for o in outcomes) else 0
    shown = select(outcomes, args.verdict, args.owner)
    advice = _advice(rt, outcomes, now) if args.command == "plan" else None
    if output == "json":
        for line in to_json_lines(_with_advice(o, advice) for o in shown):
            out(line)
    elif output == "csv":
        out(to_csv(OUTCOME_COLUMNS, (o.to_json() for o in shown)))
    else:
        out(format_table(shown))
        if len(shown) < len(outcomes):
            out(f"(showing {len(shown)} of {len(outcomes)} resources: --verdict/--owner filters)")
        if advice:
            out("\nRight-size advice (advice only; nothing is changed):\n" + "\n".join(f"  {a.text()}" for _k, a in sorted(advice.items())))
    return 1 if any(o.verdict is Verdict.ERROR for o in outcomes) else 0


def _advice(rt: Runtime, outcomes: list[Any], now: datetime) -> dict[tuple[str, str], Any]:
    """`reaper plan`: right-size advice for the endpoints it found (docs/kinds/endpoint.md#right-size-advice)."""
    from botocore.exceptions import BotoCoreError, ClientError

    from reaper.kinds.endpoint import usage

    endpoints = [o.resource for o in outcomes if o.resource.kind == "endpoint"]
    try:
        return usage.advise_all(endpoints, rt.clients, now) if endpoints else {}
    except (ClientError, BotoCoreError) as exc:  # advice is extra: the plan stands without it, and says so
        print(f"right-size advice not read: {type(exc).__name__}", file=sys.stderr)
        return {}


def _with_advice(o: Any, advice: dict[tuple[str, str], Any] | None) -> dict[str, Any]:
    """An outcome's JSON; in `plan`, an endpoint's line also says its right-size advice (null: none)."""
    line: dict[str, Any] = o.to_json()
    if advice is not None and o.resource.kind == "endpoint":
        found = advice.get((o.resource.region, o.resource.id))
        line["advice"] = None if found is None else found.to_json()
    return line


def parse_since(text: str, now: datetime) -> datetime:
    m = DURATION.match(text.strip())
    if not m:
        raise UsageError(f"--since {text!r}: use a number and m, h, d or w, e.g. 7d")
    minutes = int(m.group(1)) * UNIT_MINUTES[m.group(2)]
    if minutes == 0 or minutes > MAX_SINCE.total_seconds() / 60:
        raise UsageError(f"--since {text!r}: from 1m to {MAX_SINCE.days}d (the action log keeps {MAX_SINCE.days} days)")
    return now - timedelta(minutes=minutes)


def _entries(args: argparse.Namespace, now: datetime) -> tuple[datetime, list[LogEntry]]:
    since, entries, _ = _read_log(args, now)
    return since, entries


def _read_log(args: argparse.Namespace, now: datetime) -> tuple[datetime, list[LogEntry], Runtime]:
    """The log's entries from `since`; one it cannot read (a field missing or mistyped) is said on
    stderr, with its sort key and the problem, and left out (docs/cli.md)."""
    since = parse_since(args.since, now)
    rt = _runtime(args, _org(args, _settings(args)), needs_table=True)
    assert rt.log is not None
    entries = list(rt.log.entries(since, now))
    _say_skipped(rt)
    return since, entries, rt


def _say_skipped(rt: Runtime) -> None:
    assert rt.log is not None
    for problem in rt.log.skipped:
        print(f"mlreaper: skipped a malformed log entry {problem}", file=sys.stderr)


def _discounts(rt: Runtime, now: datetime) -> Discounts:
    """Savings Plans / RI coverage and Cost Optimization Hub's figures for `reaper report`: one read a day, cached."""
    from reaper.aws import discounts

    clients = rt.clients(discounts.CE_REGION)
    account = str(clients("sts").get_caller_identity()["Account"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlreaper"
    return discounts.cached(clients("ce"), clients("cost-optimization-hub"), now, cache, account)


def _org(args: argparse.Namespace, settings: Settings) -> Settings:
    """With --org, the log read is the organisation's central table (--org-table or REAPER_ORG_TABLE)."""
    from reaper.core.settings import table_name_problem

    if not getattr(args, "org", False):
        return settings
    table = getattr(args, "org_table", None) or settings.org_table
    if not table:
        raise ConfigError("--org: no central log: set REAPER_ORG_TABLE or pass --org-table (org/central.yaml output OrgActionLogTableName)")
    problem = table_name_problem(table)
    if problem:
        raise UsageError(f"--org-table {table!r}: {problem}")
    return settings.replace(table=table)


def _iam(args: argparse.Namespace, now: datetime) -> int:
    """`reaper iam --read-only` (docs/try-read-only.md): the policy, derived from what the kinds declare; no AWS call."""
    import json

    from reaper.sweep.iam import read_only_policy

    output_of(args)
    policy = read_only_policy(_kinds(args))
    out = Printer()
    for line in to_json_lines([policy]) if QUERY.get() is not None else [json.dumps(policy, indent=2)]:
        out(line)
    return 0


def _org_set(args: argparse.Namespace, now: datetime) -> int:
    from reaper.cli import org_set

    org_set.run(args, _runtime(args, _settings(args).replace(table=None)), now, output_of(args))
    return 0


def _org_coverage(args: argparse.Namespace, now: datetime) -> int:
    from reaper.org import views

    _, entries = _entries(args, now)
    rows = views.latest_coverage(e for e in entries if matches(e, kinds=args.kind) and (not args.region or e.region in args.region))
    out = Printer()
    if output_of(args) == "json":
        for line in to_json_lines(rows):
            out(line)
    else:
        out(views.format_coverage(rows))
    return 0


def _log(args: argparse.Namespace, now: datetime) -> int:
    output = output_of(args)
    _known_kinds(args.kind)
    since, entries = _entries(args, now)
    entries = [e for e in entries if matches(e, args.kind, args.verdict, args.owner)]
    out = Printer()
    if output == "json":
        for line in to_json_lines(as_logged(e) for e in entries):
            out(line)
        return 0
    if output == "csv":
        out(to_csv(LOG_COLUMNS, (log_row(e) for e in entries)))
        return 0
    if not entries:
        filtered = " matching the filters" if args.kind or args.verdict or args.owner else ""
        out(f"no actions logged{filtered} since {since:%Y-%m-%d %H:%M} UTC")
        return 0
    width = terminal_width()
    for e in entries:
        out(f"{e.account} {fit_log_line(e, width - 13)}" if args.org else fit_log_line(e, width))
    return 0


def _report(args: argparse.Namespace, now: datetime) -> int:
    from reaper.report import summary

    output = output_of(args)
    if args.bill:
        return _bill(args, now, output)
    args.since = args.since or "7d"
    if args.units:
        if output not in ("table", "json"):
            raise UsageError("--units prints a table or --json")
        from reaper.cli import units

        return units.report(_runtime(args, _settings(args)), now, output, Printer())
    if args.out and output != "html":
        raise UsageError("--out names the file of --output html")
    _known_kinds(args.kind)
    if output == "html":
        from reaper.report.chart import require_matplotlib

        require_matplotlib()  # before reading the log: a missing extra is said at once
    since, entries, rt = _read_log(args, now)
    entries = [e for e in entries if matches(e, kinds=args.kind)]
    items = summary.reclaimed(entries, now)
    groups = summary.group(items, args.by)
    would = summary.would_act(entries)
    discounts = _discounts(rt, now) if args.discounts or rt.settings.discounts else None
    if discounts is not None:
        summary.apply_discounts(groups, items, args.by, discounts)
    out = Printer()
    if output == "json":
        for line in to_json_lines(g.to_json(args.by) for g in groups):
            out(line)
    elif output == "csv":
        after = ("saved_after_commitments_usd",) if discounts is not None and discounts.unavailable is None else ()
        columns = (args.by, "resources", "actions", "hours_off", "saved_usd", "unpriced", "jobs_stopped", *after)
        out(to_csv(columns, (g.to_json(args.by) for g in groups)))
    elif output == "html":
        from reaper.report.html import render

        path = Path(args.out or HTML_FILE)
        page = render(groups, items, args.by, since, now, would, args.kind)
        try:
            path.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
        total = sum(g.saved_usd for g in groups)
        out(f"wrote {path} ({len(groups)} group(s) by {args.by}, about ${total:,.2f} saved since {since:%Y-%m-%d %H:%M} UTC)")
    else:
        out(summary.format_report(groups, args.by, since, would, terminal_width(), items, discounts))
        begun = summary.unconfirmed(entries)
        if begun:
            out(summary.unconfirmed_line(begun))
    return 0


def _bill(args: argparse.Namespace, now: datetime, output: str) -> int:
    """`reaper report --bill` (docs/bill.md): one Cost Explorer read a day, beside the log's claims."""
    from reaper.report import bill, bill_view, reconcile

    if output not in ("table", "json") or args.out:
        raise UsageError("--bill writes table or json")
    _known_kinds(args.kind)
    tag = bill.PROJECT_TAG if args.by == "project" else bill.STAGE_TAG
    if args.org and tag == bill.PROJECT_TAG:
        raise UsageError("--org --bill groups by account and usage type (Cost Explorer takes two groupings): --by project is per account")
    args.since = args.since or "30d"
    since = parse_since(args.since, now)
    rt = _runtime(args, _org(args, _settings(args)), needs_table=True)
    assert rt.log is not None
    entries = [e for e in rt.log.entries(since, now) if matches(e, kinds=args.kind)]
    _say_skipped(rt)
    read = bill.read(rt.clients()("ce"), rt.log, since, now, org=bool(args.org), tag=tag)
    buckets = reconcile.buckets(read)
    rows = [] if read.refused else reconcile.reconcile(read, entries, now)
    to_tag = reconcile.to_tag(entries, read.tag)
    out = Printer()
    if output == "json":
        for line in to_json_lines(bill_view.json_rows(read, buckets, rows, to_tag)):
            out(line)
    else:
        out(bill_view.format_bill(read, buckets, rows, to_tag, terminal_width()))
    return 0


def _restore(args: argparse.Namespace, now: datetime) -> int:
    from reaper.restore import run

    rt = _runtime(args, _settings(args))
    try:
        result = run.restore(rt, args.name, now, _progress, kind=args.kind)
    except NoRestoreRecord as exc:
        raise RestoreError(_stopped_notebook(rt, args.name) or str(exc)) from None
    Printer()(result)
    return 0


def _stopped_notebook(rt: Runtime, name: str) -> str | None:
    """When NAME is a notebook, say it is restarted, not restored, and how (one read, CLI only)."""
    from botocore.exceptions import BotoCoreError, ClientError

    if not NOTEBOOK_NAME.match(name):
        return None
    try:
        found = rt.clients()("sagemaker").describe_notebook_instance(NotebookInstanceName=name)
    except (ClientError, BotoCoreError):
        return None
    status = found.get("NotebookInstanceStatus", "?")
    return (
        f"{name!r} is a notebook ({status}): notebooks are stopped, not deleted, so there is nothing to restore; "
        f"start it with `aws sagemaker start-notebook-instance --notebook-instance-name {name} --region {rt.home_region}`"
    )

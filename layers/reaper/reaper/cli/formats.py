"""`--output json|csv` for plan, sweep, log and report: the machine-readable forms, reasons whole.

JSON is one object per line (what `--json` always printed). CSV is one header row, then one row per
resource, log entry or report group, written by the csv module (quoting commas, quotes and newlines);
nested values (evidence) are JSON in their cell.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import JsonValue

    from reaper.record.logentry import LogEntry


OUTPUTS = ("table", "json", "csv")

OUTCOME_COLUMNS = (
    "kind",
    "id",
    "arn",
    "region",
    "account",
    "owner",
    "project",
    "stage",
    "state",
    "verdict",
    "action",
    "executed",
    "mode",
    "hourly_usd",
    "monthly_usd",
    "reason",
    "error",
    "undo",
)
LOG_COLUMNS = ("logged_at", "type", "kind", "id", "region", "owner", "project", "verdict", "action", "executed", "hourly_usd", "reason")


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, default=str)
    return str(value)


def to_csv(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """A header row and one row per mapping (missing keys empty), without the trailing newline."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([cell(row.get(c)) for c in columns])
    return buffer.getvalue().rstrip("\n")


# `--query` (a compiled JMESPath expression) for this command's JSON lines; set by the CLI's main
QUERY: ContextVar[Any] = ContextVar("reaper_query", default=None)


def to_json_lines(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """One JSON object per line; with `--query`, what the expression selects from each object (as the
    AWS CLI applies it to the JSON it prints), an object it selects nothing from left out."""
    query = QUERY.get()
    if query is None:
        return [json.dumps(row, default=str) for row in rows]
    found = (query.search(json.loads(json.dumps(row, default=str))) for row in rows)
    return [json.dumps(value) for value in found if value is not None]


def compile_query(expression: str) -> Any:
    """`--query`'s expression, compiled; a bad one is a usage error in one line. jmespath comes with botocore."""
    import jmespath
    from jmespath.exceptions import JMESPathError

    from reaper.core.errors import UsageError

    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise UsageError(f"--query {expression!r}: not a JMESPath expression ({' '.join(str(exc).split())})") from None


def as_logged(e: LogEntry) -> dict[str, JsonValue]:
    """A log entry as `reaper log` shows it, every key as stored: a change recorded ahead and never confirmed
    (`unconfirmed`) is not shown as done (`executed` false; the flag stays, so a reader knows to look at the resource)."""
    return {**e.stored, "executed": False} if e.unconfirmed else e.stored


def log_row(e: LogEntry) -> dict[str, JsonValue]:
    """A log entry flattened for CSV: a notice's title and text are its reason."""
    row = as_logged(e)
    row.setdefault("type", "verdict")
    if e.type == "notice" and not e.reason:
        row["reason"] = ": ".join(x for x in (e.title, e.text) if x)
    return row


def matches(e: LogEntry, kinds: Iterable[str] = (), verdicts: Iterable[str] = (), owners: Iterable[str] = ()) -> bool:
    """`--kind/--verdict/--owner` on a log entry (each repeatable; any value of one flag, all flags)."""
    want_k = {k.strip().lower() for k in kinds}
    want_v = {v.strip().lower() for v in verdicts}
    want_o = {o.strip().lower() for o in owners}
    return (
        (not want_k or (e.kind or "").lower() in want_k)
        and (not want_v or (e.verdict or "").lower() in want_v)
        and (not want_o or (e.owner or "").strip().lower() in want_o)
    )

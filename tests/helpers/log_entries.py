"""An action-log verdict entry as the sweep writes it (reaper.sweep.courier), for tests that seed a log or a report."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.record.actionlog import ActionLog
from reaper.record.logentry import LogEntry, from_mapping


def verdict_entry(
    rid: str,
    *,
    kind: str = "notebook",
    verdict: str = "act",
    executed: bool = True,
    hourly: float | None = 2.0,
    owner: str = "ana",
    **fields: Any,
) -> dict[str, Any]:
    """A stop of `rid` in us-east-1 (its verdict, whether it was executed, its hourly price), with `fields` added."""
    return {
        "kind": kind,
        "id": rid,
        "region": "us-east-1",
        "verdict": verdict,
        "executed": executed,
        "action": "stop",
        "hourly_usd": hourly,
        "owner": owner,
        **fields,
    }


# verdict_entry's own fields: the rest of what a test gives a stop is its evidence
ENTRY_FIELDS = frozenset({"kind", "verdict", "executed", "hourly", "owner"})


def split(given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(verdict_entry's own fields, the evidence) of what a test gives a stop."""
    return {k: v for k, v in given.items() if k in ENTRY_FIELDS}, {k: v for k, v in given.items() if k not in ENTRY_FIELDS}


def logged_stop(at: datetime, rid: str, **given: Any) -> LogEntry:
    """`verdict_entry` as the action log reads it back (a LogEntry), logged at `at`, in project llm; what `given`
    holds beyond verdict_entry's own fields is its evidence."""
    fields, evidence = split(given)
    return from_mapping(verdict_entry(rid, logged_at=at.strftime("%Y-%m-%dT%H:%M:%SZ"), project="llm", evidence=evidence, **fields))


def record_stop(log: ActionLog, at: datetime, rid: str, **fields: Any) -> None:
    """`verdict_entry` (owner ana@example.com unless given) written to the action log at `at`, as a sweep writes it."""
    log.record(verdict_entry(rid, **{"owner": "ana@example.com", **fields}), at, f"ev-{rid}-{at:%H%M%S}")


# a training job stopped at 2 of its 10 hours, $80 of its $200 ceiling, at $40 an hour (a report's job row)
JOB_UNDER_CEILING: dict[str, Any] = {
    "kind": "training-job",
    "hourly": 40.0,
    "estimated_usd": 80.0,
    "max_usd": 200.0,
    "elapsed_hours": 2.0,
    "max_hours": 10.0,
}


def endpoint_notice(at: datetime, title: str, rid: str = "ep") -> dict[str, Any]:
    """A notice the log keeps about an endpoint (its restore, or that it is back), logged at `at`."""
    logged_at = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"logged_at": logged_at, "type": "notice", "kind": "endpoint", "id": rid, "region": "us-east-1", "title": title}

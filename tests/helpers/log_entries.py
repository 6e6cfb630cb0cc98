"""An action-log verdict entry as the sweep writes it (reaper.sweep.courier), for tests that seed a log or a report."""

from __future__ import annotations

from datetime import datetime
from typing import Any

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


def logged_stop(
    at: datetime,
    rid: str,
    *,
    kind: str = "notebook",
    verdict: str = "act",
    executed: bool = True,
    hourly: float | None = 2.0,
    owner: str = "ana",
    **evidence: object,
) -> LogEntry:
    """`verdict_entry` as the action log reads it back (a LogEntry), logged at `at`, in project llm, with `evidence`."""
    fields = {"logged_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "project": "llm", "evidence": dict(evidence)}
    return from_mapping(verdict_entry(rid, kind=kind, verdict=verdict, executed=executed, hourly=hourly, owner=owner, **fields))


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

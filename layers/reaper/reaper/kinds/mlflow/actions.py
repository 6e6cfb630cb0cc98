"""Stop a running tracking server (its restore record first, when there is an action log); the state check; undo.

A sweep's stops are made up to ACT_BATCH at a time, their records written in one transaction (reaper.kinds.recorded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from reaper.aws.clients import Clients
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.core.policy import OWNER
from reaper.core.timeutil import iso
from reaper.kinds.base import ActContext, BatchAnswer, Made, Unconfirmed, action_named
from reaper.kinds.mlflow import RUNNING, ActionName
from reaper.kinds.mlflow.discover import describe
from reaper.kinds.mlflow.model import KIND, RestoreRecord, ServerFacts
from reaper.kinds.recorded import alone, record_then_change


def stop(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    """The one-resource path (an event, a button, a batch too small): a batch of one."""
    return alone(stop_many(ctx, [(r, d)]), r)


def stop_many(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """A sweep's stops: each gated alone; with an action log, their restore records written in one
    TransactWriteItems, then each stopped in its own call (reaper.kinds.recorded; docs/performance.md, *Every
    kind on one day*). Without a log there is no record to write: each is checked and stopped alone."""
    if ctx.log is not None:
        return record_then_change(ctx, KIND, items, _record, _stop)
    done: dict[str, str | None] = {}
    own: dict[str, BaseException] = {}
    for r, d in items:
        try:
            _running(ctx, r)
            done[r.id] = _stop(ctx, r, d, {})
        except Exception as exc:  # refused, an AWS error, or a bug: this server's (reaper.sweep.batch._own_error)
            own[r.id] = exc
    return BatchAnswer(done=done, own=own)


def _running(ctx: ActContext, r: Resource) -> None:
    """Refused unless it is running now, by the gate's read just now (else read again)."""
    gated: dict[str, Any] | None = ctx.gated(r.arn, "described")  # the gate's read, just now
    now = gated if gated is not None else describe(ctx.clients("sagemaker"), r.id)
    if now is None:
        raise ActionRefused("StopMlflowTrackingServer", "it is gone already; nothing was stopped")
    status = str(now.get("TrackingServerStatus"))
    if status not in RUNNING:
        raise ActionRefused("StopMlflowTrackingServer", f"it is {status} now; nothing was stopped")


def _record(ctx: ActContext, r: Resource, d: Decision) -> RestoreRecord:
    """What `reaper restore NAME` finds it by (a start needs no more), after the running check."""
    _running(ctx, r)
    return {
        "kind": KIND,
        "name": r.id,
        "arn": r.arn,
        "region": r.region,
        "account": r.account,
        "owner": next((v for k, v in r.tags.items() if k.strip().lower() == OWNER), None),
        "size": r.facts_as(ServerFacts).size,
        "hourly_usd": r.hourly_usd,
        "reason": d.reason,
        "reaped_at": iso(ctx.now),
        "event_id": ctx.event_id,
        "status": "reaped",
    }


def _stop(ctx: ActContext, r: Resource, d: Decision, record: Mapping[str, Any]) -> str:
    """After its record is written (or with no log to write it in)."""
    ctx.clients("sagemaker").stop_mlflow_tracking_server(TrackingServerName=r.id)
    return "stopping; its experiments, runs and artifacts are kept (`reaper restore` starts it again)"


def current_read(clients: Clients, resource: Resource) -> tuple[str | None, dict[str, Any] | None]:
    """Its TrackingServerStatus now and the description it came from (the gate hands it to the stop)."""
    now = describe(clients("sagemaker"), resource.id)
    return (None, None) if now is None else (str(now.get("TrackingServerStatus", "unknown")), now)


def current_state(clients: Clients, resource: Resource) -> str | None:
    return current_read(clients, resource)[0]


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A stop is made once the server is Stopping or Stopped."""
    if action_named(ActionName, change.action) is not ActionName.STOP:
        return Made(None, f"nothing reads whether {change.action} was made")
    state = current_state(clients, Resource(KIND, change.id, change.arn, "", ""))
    return Made.by_state("TrackingServerStatus", state, {"Stopping", "Stopped"}, RUNNING)


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.STOP:
            return f"reaper restore {resource.id}   # starts it again with its experiments (or: aws sagemaker start-mlflow-tracking-server)"
        case _:
            assert_never(name)

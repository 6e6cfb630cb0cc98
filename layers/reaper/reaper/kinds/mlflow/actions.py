"""Stop a running tracking server (its restore record first, when there is an action log); the state check; undo."""

from __future__ import annotations

from typing import Any, assert_never

from reaper.aws.clients import Clients
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.core.policy import OWNER
from reaper.core.timeutil import iso
from reaper.kinds.base import ActContext, Made, Unconfirmed, action_named
from reaper.kinds.mlflow import RUNNING, ActionName
from reaper.kinds.mlflow.discover import describe
from reaper.kinds.mlflow.model import KIND, RestoreRecord, ServerFacts


def stop(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    gated: dict[str, Any] | None = ctx.gated(r.arn, "described")  # the gate's read, just now
    now = gated if gated is not None else describe(ctx.clients("sagemaker"), r.id)
    if now is None:
        raise ActionRefused("StopMlflowTrackingServer", "it is gone already; nothing was stopped")
    status = str(now.get("TrackingServerStatus"))
    if status not in RUNNING:
        raise ActionRefused("StopMlflowTrackingServer", f"it is {status} now; nothing was stopped")
    if ctx.log is not None:  # what `reaper restore NAME` finds it by (a start needs no more)
        record: RestoreRecord = {
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
        ctx.log.put_restore(KIND, r.id, record, ctx.now)
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

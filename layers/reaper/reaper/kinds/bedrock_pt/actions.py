"""Delete a Provisioned Throughput without commitment, after its restore record; the state check; undo.

The delete re-reads the Provisioned Throughput and refuses if it has a commitment now, and is
refused (verdict `error`) without an action log to keep the restore record in: the record (model,
units, name, tags) is what `reaper restore NAME` recreates it from. A sweep's deletes are made up to
ACT_BATCH at a time, their records written in one transaction (reaper.kinds.recorded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import is_not_found
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.core.timeutil import iso
from reaper.kinds.base import ActContext, BatchAnswer, Made, Unconfirmed, action_named
from reaper.kinds.bedrock_pt import ActionName
from reaper.kinds.bedrock_pt.discover import tags_of
from reaper.kinds.bedrock_pt.model import KIND, RestoreRecord
from reaper.kinds.recorded import alone, record_then_change


def read(clients: Clients, name: str) -> dict[str, Any] | None:
    """GetProvisionedModelThroughput, or None when there is none of that name or ARN."""
    try:
        found: dict[str, Any] = clients("bedrock").get_provisioned_model_throughput(provisionedModelId=name)
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise
    return found


def delete(ctx: ActContext, r: Resource, d: Decision) -> str | None:
    """The one-resource path (an event, a button, a batch too small): a batch of one."""
    return alone(act_many(ctx, [(r, d)]), r)


def act_many(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """A sweep's deletes: each gated alone, their restore records written in one TransactWriteItems, then each
    deleted in its own call (reaper.kinds.recorded)."""
    return record_then_change(ctx, KIND, items, _record, _delete)


def _record(ctx: ActContext, r: Resource, d: Decision) -> RestoreRecord:
    """From what its gate read just now (its description and tags), refused if it has a commitment now."""
    if ctx.log is None:
        raise ActionRefused(
            "DeleteProvisionedModelThroughput", "no action log to keep the restore record in (set REAPER_TABLE); nothing was deleted"
        )
    gated: dict[str, Any] | None = ctx.gated(r.arn, "described")  # the gate's read, just now
    now = gated if gated is not None else read(ctx.clients, r.arn)
    if now is None:
        raise ActionRefused("DeleteProvisionedModelThroughput", "it is gone already; nothing was deleted")
    if now.get("commitmentDuration"):
        raise ActionRefused("DeleteProvisionedModelThroughput", f"it has a {now['commitmentDuration']} commitment now; nothing was deleted")
    warned = ctx.settings.tag("warned-at").lower()
    fresh: dict[str, str] | None = ctx.gated(r.arn, "tags")  # the gate's protection read, just now
    tags = {
        k: v for k, v in (fresh if fresh is not None else tags_of(ctx.clients("bedrock"), r.arn)).items() if k.strip().lower() != warned
    }
    return {
        "kind": KIND,
        "name": r.id,
        "arn": r.arn,
        "region": r.region,
        "account": r.account,
        "owner": next((v for k, v in r.tags.items() if k.strip().lower() == "ml:owner"), None),
        "model_arn": str(now.get("modelArn", "")),
        "foundation_model_arn": str(now.get("foundationModelArn", "")),
        "model_units": int(now.get("modelUnits") or r.instance_count),
        "commitment": None,
        "tags": tags,
        "hourly_usd": r.hourly_usd,
        "reason": d.reason,
        "reaped_at": iso(ctx.now),
        "event_id": ctx.event_id,
        "status": "reaped",
    }


def _delete(ctx: ActContext, r: Resource, d: Decision, record: Mapping[str, Any]) -> str:
    """After its record is written."""
    ctx.clients("bedrock").delete_provisioned_model_throughput(provisionedModelId=r.arn)
    units = int(record["model_units"])
    return (
        f"deleted; restore record written (model {record['model_arn']}, {units} model unit{'s' if units != 1 else ''}, "
        f"{len(record['tags'])} tags)"
    )


def current_read(clients: Clients, resource: Resource) -> tuple[str | None, dict[str, Any] | None]:
    """Its state now and the GetProvisionedModelThroughput it came from (the gate hands it to the delete)."""
    now = read(clients, resource.arn)
    if now is None:
        return None, None
    if now.get("commitmentDuration"):
        return f"committed ({now['commitmentDuration']}) since discovery", now
    return str(now.get("status", "unknown")), now


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A deletion is made once GetProvisionedModelThroughput finds none (or it is Deleting)."""
    now = read(clients, change.arn)
    if now is None:
        return Made(True, "gone")
    return Made.by_state("status", str(now.get("status")), {"Deleting"}, {"InService", "Updating", "Creating"})


def current_state(clients: Clients, resource: Resource) -> str | None:
    return current_read(clients, resource)[0]


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.DELETE:
            return f"reaper restore {resource.id}   # recreates it with the same model, model units and tags, without commitment"
        case _:
            assert_never(name)

"""Cancel an ODCR (never a Capacity Block, a committed reservation or a plan), the re-read just before, and undo.

The re-read is one DescribeCapacityReservations of that reservation (of a batch's reservations, one for
all of them, their tags with it: `current_many`): still `active`, still no instance in it (an instance
launched since discovery keeps it), still no commitment. Cancelling
cannot be undone: the reservation's spec and tags go to the action log first, so `reaper restore`
can make an equivalent, new reservation (subject to capacity). A sweep's cancellations are made up to
ACT_BATCH at a time, their specs written in one transaction (reaper.kinds.recorded).
https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CancelCapacityReservation.html
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import error_code
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.kinds.base import ActContext, BatchAnswer, Made, ReadNow, Unconfirmed, action_named
from reaper.kinds.capacity import ActionName
from reaper.kinds.capacity.discover import CapacityReservation, to_resource
from reaper.kinds.capacity.model import KIND, CapacityFacts, RestoreRecord
from reaper.kinds.capacity.rules import not_cancellable
from reaper.kinds.recorded import alone, record_then_change


def cancel(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """The one-resource path (an event, a button, a batch too small): a batch of one."""
    return alone(act_many(ctx, [(resource, decision)]), resource)


def act_many(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """A sweep's cancellations: each gated alone, their specs written in one TransactWriteItems, then each
    cancelled in its own call (reaper.kinds.recorded)."""
    return record_then_change(ctx, KIND, items, _record, _cancel)


def _record(ctx: ActContext, resource: Resource, decision: Decision) -> RestoreRecord:
    facts = resource.facts_as(CapacityFacts)
    if facts.source != "odcr":
        raise ActionRefused("cancel", f"a {facts.source} cannot be cancelled")
    if ctx.log is None:
        raise ActionRefused("cancel", "no action log to keep the reservation's spec in")
    return {
        "kind": KIND,
        "id": resource.id,
        "arn": resource.arn,
        "region": resource.region,
        "spec": spec(resource, facts),
        "tags": {k: v for k, v in resource.tags.items() if not k.lower().startswith(("aws:", ctx.settings.tag_prefix.lower()))},
        "status": "cancelled",
    }


def _cancel(ctx: ActContext, resource: Resource, decision: Decision, record: Mapping[str, Any]) -> str:
    """After its record is written."""
    facts = resource.facts_as(CapacityFacts)
    ctx.clients("ec2").cancel_capacity_reservation(CapacityReservationId=resource.id)
    return (
        f"cancelled: {facts.total} x {resource.instance_type} in {facts.zone} released; its spec is kept, and "
        "`reaper restore` makes a new reservation like it (subject to capacity at that time)"
    )


def spec(resource: Resource, facts: CapacityFacts) -> dict[str, Any]:
    """CreateCapacityReservation parameters for an equivalent reservation (no end date: the owner picks one)."""
    out: dict[str, Any] = {
        "InstanceType": resource.instance_type,
        "InstancePlatform": facts.platform,
        "AvailabilityZone": facts.zone,
        "InstanceCount": facts.total,
        "Tenancy": facts.tenancy or "default",
        "InstanceMatchCriteria": facts.match_criteria or "open",
        "EbsOptimized": facts.ebs_optimized,
        "EndDateType": "unlimited",
    }
    return {k: v for k, v in out.items() if v is not None}


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A cancellation is made once DescribeCapacityReservations says cancelled."""
    try:
        found = clients("ec2").describe_capacity_reservations(CapacityReservationIds=[change.id]).get("CapacityReservations", [])
    except ClientError as exc:
        if error_code(exc).startswith("InvalidCapacityReservationId"):
            return Made(None, "gone")
        raise
    state = str(found[0].get("State")) if found else None
    return Made.by_state("State", state, {"cancelled"}, {"active", "pending"})


def current_state(clients: Clients, resource: Resource) -> str | None:
    facts = resource.facts_as(CapacityFacts)
    if facts.source == "training-plan":
        return "a training plan cannot be cancelled"
    try:
        found = clients("ec2").describe_capacity_reservations(CapacityReservationIds=[resource.id]).get("CapacityReservations", [])
    except ClientError as exc:
        if error_code(exc).startswith("InvalidCapacityReservationId"):
            return None
        raise
    return _state_of(clients, resource, found[0] if found else None)


def current_many(clients: Clients, resources: Sequence[Resource]) -> dict[str, ReadNow]:
    """A batch's reservations read again in one DescribeCapacityReservations by `CapacityReservationIds` (paged),
    their tags from the same answer ("Any tags assigned to the Capacity Reservation"), so no DescribeTags.
    One id AWS does not know fails the whole call (InvalidCapacityReservationId.NotFound): the batch then reads
    each alone (reaper.sweep.batch). Training plans are not reservations: left out, each read alone.
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeCapacityReservations.html
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CapacityReservation.html
    """
    wanted = [r for r in resources if r.facts_as(CapacityFacts).source != "training-plan"]
    if not wanted:
        return {}
    found: dict[str, CapacityReservation] = {}
    pages = clients("ec2").get_paginator("describe_capacity_reservations").paginate(CapacityReservationIds=[r.id for r in wanted])
    for page in pages:
        found.update({str(cr.get("CapacityReservationId")): cr for cr in page.get("CapacityReservations", [])})
    return {r.arn: (_state_of(clients, r, found.get(r.id)), _tags(found.get(r.id))) for r in wanted}


def _tags(cr: CapacityReservation | None) -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in (cr.get("Tags", []) if cr else [])}


def _state_of(clients: Clients, resource: Resource, cr: CapacityReservation | None) -> str | None:
    """The state the gate judges: None when gone; an instance in it since discovery, a commitment or a block, said."""
    if cr is None or cr.get("State") in ("cancelled", "expired"):
        return None
    now_facts = to_resource(resource.region, cr, clients.pricer).facts_as(CapacityFacts)
    state = str(cr.get("State"))
    if state != "active":
        return state
    if now_facts.source != "odcr":
        return "a Capacity Block"
    if now_facts.used > 0:
        return f"in use since discovery ({now_facts.used} instance(s) running in it)"
    # the re-read is of AWS as it is now, so the commitment is judged at the wall clock, not the sweep's `now`
    blocked = not_cancellable(now_facts, datetime.now(UTC))
    return blocked or state


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.CANCEL:
            return (
                f"reaper restore {resource.id}   # a cancelled reservation cannot be un-cancelled: this makes a NEW one "
                "with the same type, platform, zone, count, tenancy and tags, subject to capacity"
            )
        case _:
            assert_never(name)

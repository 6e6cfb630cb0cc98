"""Stop (never terminate), one instance or many in one call, the state check just before it, and undo.

The state check reads the instance again: its state, the tags of whatever manages it (a node that
joined a group since discovery is left alone) and stop protection. Stop protection
(DisableApiStop) is not in DescribeInstances, so DescribeInstanceAttribute is called here, only for
the few instances about to be stopped:
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_StopProtection.html
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, error_code
from reaper.core.model import Decision, KindAction, Resource
from reaper.kinds.base import ActContext, BatchAnswer, Made, Unconfirmed, action_named
from reaper.kinds.ec2 import ActionName
from reaper.kinds.ec2.managed import managed_by
from reaper.kinds.ec2.model import Ec2Facts
from reaper.kinds.ec2.shapes import Instance, InstanceState, reservations

CAPACITY_NOTE = (
    "a stopped GPU instance may not get capacity back at once when started (InsufficientInstanceCapacity); "
    "an On-Demand Capacity Reservation keeps it: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-reservations.html"
)


def stop(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    hibernate = _hibernates(resource)
    ctx.clients("ec2").stop_instances(InstanceIds=[resource.id], Hibernate=hibernate)
    return _stopping(hibernate)


def stop_many(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """Many instances the gate let through, in one StopInstances per Hibernate value (the flag is the
    call's, not an instance's): its StoppingInstances list says which changed.

    The API reference sets no limit on InstanceIds; one id EC2 refuses (InvalidInstanceID.NotFound,
    IncorrectInstanceState, OperationNotPermitted for stop protection, UnsupportedOperation for a one-time
    Spot instance, UnauthorizedOperation where IAM denies one) fails the whole call with its code, naming
    that instance, and stops none (docs/aws-assumptions.md, rows E-1 to E-3): the sweep then takes
    each of them alone again (reaper.sweep.batch).
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_StopInstances.html
    """
    ec2 = ctx.clients("ec2")
    groups: dict[bool, list[str]] = {}
    for resource, _decision in items:
        groups.setdefault(_hibernates(resource), []).append(resource.id)
    done: dict[str, str | None] = {}
    failed: dict[str, BaseException] = {}
    for hibernate, ids in groups.items():
        try:
            answer = ec2.stop_instances(InstanceIds=ids, Hibernate=hibernate)
        except AwsError as exc:
            failed.update(dict.fromkeys(ids, exc))
            continue
        listed = {str(s.get("InstanceId")) for s in answer.get("StoppingInstances", [])}
        done.update({i: _stopping(hibernate) for i in ids if i in listed})
    return BatchAnswer(done=done, failed=failed)


def _hibernates(resource: Resource) -> bool:
    # Hibernate only where the instance was launched configured for it; StopInstances then keeps RAM
    # on the root volume, and falls back to a normal stop if hibernation fails:
    # https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_StopInstances.html
    facts = resource.facts_as(Ec2Facts)
    return facts.hibernation_configured and facts.lifecycle == "on-demand"


def _stopping(hibernate: bool) -> str:
    how = "hibernating (memory saved to the root volume)" if hibernate else "stopping"
    return f"{how}; EBS volumes are kept, nothing is terminated. Note: {CAPACITY_NOTE}"


def current_state(clients: Clients, resource: Resource) -> str | None:
    ec2 = clients("ec2")
    try:
        found = reservations(ec2.describe_instances(InstanceIds=[resource.id]))
    except ClientError as exc:
        if error_code(exc).startswith("InvalidInstanceID"):  # .NotFound / .Malformed: not there
            return None
        raise
    instances = [i for r in found for i in r.get("Instances", [])]
    return _state_of(ec2, resource.id, instances[0] if instances else None)


def current_many(clients: Clients, resources: Sequence[Resource]) -> dict[str, tuple[str | None, dict[str, str]]]:
    """A batch's instances read again in one DescribeInstances, by the `instance-id` filter (an id that is
    gone is left out of the answer, where InstanceIds would fail the whole call), and their tags from the
    same answer (EC2's own tags, as DescribeTags gives them); stop protection still one
    DescribeInstanceAttribute each, for those running and not managed (no API returns it for many).
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstances.html
    """
    ec2 = clients("ec2")
    ids = [r.id for r in resources]
    found: dict[str, Instance] = {}
    for page in ec2.get_paginator("describe_instances").paginate(Filters=[{"Name": "instance-id", "Values": ids}]):
        for reservation in reservations(page):
            found.update({str(i.get("InstanceId")): i for i in reservation.get("Instances", [])})
    return {r.arn: (_state_of(ec2, r.id, found.get(r.id)), _tags(found.get(r.id))) for r in resources}


def _tags(inst: Instance | None) -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in (inst.get("Tags", []) if inst else [])}


def _state_of(ec2: Any, instance_id: str, inst: Instance | None) -> str | None:
    """The state the gate judges: None when gone; what manages it since discovery, or stop protection, said."""
    if inst is None:
        return None
    state = str(inst.get("State", InstanceState()).get("Name", "unknown"))
    if state == "terminated":
        return None
    if state != "running":
        return state
    managed = managed_by(_tags(inst))
    if managed:
        return f"managed since discovery: {managed}"
    protection = ec2.describe_instance_attribute(InstanceId=instance_id, Attribute="disableApiStop")
    if (protection.get("DisableApiStop") or {}).get("Value"):
        return "stop-protected (DisableApiStop is on)"
    return state


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A stop is made once the instance is stopping or stopped (DescribeInstances' State.Name)."""
    try:
        found = reservations(clients("ec2").describe_instances(InstanceIds=[change.id]))
    except ClientError as exc:
        if error_code(exc).startswith("InvalidInstanceID"):
            return Made(None, "gone")
        raise
    instances = [i for r in found for i in r.get("Instances", [])]
    state = str(instances[0].get("State", InstanceState()).get("Name")) if instances else None
    return Made.by_state("State", state, {"stopping", "stopped"}, {"running", "pending"})


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.STOP:
            return (
                f"aws ec2 start-instances --instance-ids {resource.id} --region {resource.region}"
                "   # EBS volumes are kept; GPU capacity is not guaranteed on start (a capacity reservation holds it)"
            )
        case _:
            assert_never(name)

"""Stop (never terminate), the state check just before it, and undo.

The state check reads the instance again: its state, the tags of whatever manages it (a node that
joined a group since discovery is left alone) and stop protection. Stop protection
(DisableApiStop) is not in DescribeInstances, so DescribeInstanceAttribute is called here, only for
the few instances about to be stopped:
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_StopProtection.html
"""

from __future__ import annotations

from typing import assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import error_code
from reaper.core.model import Decision, Resource
from reaper.kinds.base import ActContext, action_named
from reaper.kinds.ec2 import ActionName
from reaper.kinds.ec2.managed import managed_by
from reaper.kinds.ec2.model import Ec2Facts

CAPACITY_NOTE = (
    "a stopped GPU instance may not get capacity back at once when started (InsufficientInstanceCapacity); "
    "an On-Demand Capacity Reservation keeps it: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-reservations.html"
)


def stop(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    facts = resource.facts_as(Ec2Facts)
    # Hibernate only where the instance was launched configured for it; StopInstances then keeps RAM
    # on the root volume, and falls back to a normal stop if hibernation fails:
    # https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_StopInstances.html
    hibernate = facts.hibernation_configured and facts.lifecycle == "on-demand"
    ctx.clients("ec2").stop_instances(InstanceIds=[resource.id], Hibernate=hibernate)
    how = "hibernating (memory saved to the root volume)" if hibernate else "stopping"
    return f"{how}; EBS volumes are kept, nothing is terminated. Note: {CAPACITY_NOTE}"


def current_state(clients: Clients, resource: Resource) -> str | None:
    ec2 = clients("ec2")
    try:
        reservations = ec2.describe_instances(InstanceIds=[resource.id]).get("Reservations", [])
    except ClientError as exc:
        if error_code(exc).startswith("InvalidInstanceID"):  # .NotFound / .Malformed: not there
            return None
        raise
    instances = [i for r in reservations for i in r.get("Instances", [])]
    if not instances:
        return None
    inst = instances[0]
    state = str(inst.get("State", {}).get("Name", "unknown"))
    if state == "terminated":
        return None
    if state != "running":
        return state
    managed = managed_by({t["Key"]: t.get("Value", "") for t in inst.get("Tags", [])})
    if managed:
        return f"managed since discovery: {managed}"
    protection = ec2.describe_instance_attribute(InstanceId=resource.id, Attribute="disableApiStop")
    if (protection.get("DisableApiStop") or {}).get("Value"):
        return "stop-protected (DisableApiStop is on)"
    return state


def undo_hint(resource: Resource, action: str | None) -> str | None:
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

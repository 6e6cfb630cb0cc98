"""A new accelerated instance that nobody owns, told to the admin channel once.

EC2 emits "EC2 Instance State-change Notification" on every state change
(https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/monitoring-instance-state-changes.html);
the stack's rule passes only `running`. An accelerated, unmanaged instance without `ml:owner` or
`ml:stage` is reported once per instance (an action-log claim), however often it is started or
the event delivered: its owner cannot be told, and production cannot be told from dev.
"""

from __future__ import annotations

from datetime import datetime

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

from reaper.aws.faults import error_code
from reaper.core.events import EventBridgeEvent, parse_model
from reaper.core.policy import OWNER, STAGE
from reaper.kinds.base import Check, EventResult
from reaper.kinds.ec2.catalog import accelerated_types
from reaper.kinds.ec2.discover import partition
from reaper.kinds.ec2.managed import manager
from reaper.record.message import NoticeMessage
from reaper.record.notices import post_notice
from reaper.record.runtime import Runtime


class StateChangeDetail(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")

    instance_id: str = Field(alias="instance-id", pattern=r"^i-[0-9a-f]{8,17}$")
    state: str = Field(min_length=1)


def route(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> EventResult:
    detail = parse_model(StateChangeDetail, ev.detail, "an EC2 instance state-change event", "detail.")
    result: EventResult = {"event_id": ev.id, "checked": detail.instance_id, "problems": [], "posted": False}
    if detail.state != "running":
        return {**result, "skipped": f"state {detail.state}, only running instances are checked"}
    region = ev.region or rt.home_region
    clients = rt.clients(region)
    try:
        reservations = clients("ec2").describe_instances(InstanceIds=[detail.instance_id]).get("Reservations", [])
    except ClientError as exc:
        if error_code(exc).startswith("InvalidInstanceID"):
            return {**result, "skipped": "the instance is gone"}
        raise
    found = [(r.get("OwnerId", ev.account), i) for r in reservations for i in r.get("Instances", [])]
    if not found:
        return {**result, "skipped": "the instance is gone"}
    owner_account, inst = found[0]
    itype = str(inst.get("InstanceType", ""))
    kind = accelerated_types(clients).get(itype)
    if kind is None:
        return {**result, "skipped": f"{itype or 'unknown type'} has no accelerator"}
    tags = {t["Key"].strip().lower(): t.get("Value", "").strip() for t in inst.get("Tags", [])}
    managed = manager({t["Key"]: t.get("Value", "") for t in inst.get("Tags", [])})
    if managed:
        return {**result, "skipped": f"{managed}: left to what manages it"}
    arn = f"arn:{partition(region)}:ec2:{region}:{owner_account or ev.account}:instance/{detail.instance_id}"
    problems = [
        f"no `{key}` tag: `aws ec2 create-tags --resources {detail.instance_id} --tags Key={key},Value=... --region {region}`"
        for key in (OWNER, STAGE)
        if not tags.get(key)
    ]
    result["problems"] = problems
    if not problems:
        return result
    if rt.log is not None and not rt.log.claim(f"ec2-untagged|{arn}", now):
        return {**result, "skipped": "already reported"}
    notice = NoticeMessage(
        kind="ec2",
        id=detail.instance_id,
        arn=arn,
        region=region,
        account=ev.account or owner_account,
        owner=None,  # nobody to tell but the admin channel
        title=f"GPU instance {detail.instance_id} ({itype}, {kind.detail}) is running without an owner or stage",
        text="\n".join(f"• {p}" for p in problems),
    )
    result["posted"] = post_notice(rt, notice, now, ev.id)
    return result

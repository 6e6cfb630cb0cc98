"""Events the capacity function takes besides its schedule.

* `AWS Health Event` with `eventTypeCode` `AWS_EC2_ODCR_UNDERUTILIZATION_NOTIFICATION`: AWS Health
  says a reservation was under 20 % used over 24 hours or 7 days
  (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-eventbridge.html). It is a reason to look
  now, never evidence: the reservations it names go through the ordinary pipeline (same rules,
  grace, claims and messages, so a re-delivered event acts and posts once).
* `Capacity Block Reservation Expiration Warning` (AWS's pages also spell it `Capacity Block
  Expiration Warning`): "Forty minutes before your Capacity Block reservation ends, you receive
  another EventBridge event that tells you that any instances running in the reservation will begin
  to terminate in 10 minutes" (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-monitor.html).
  Everyone with an instance running in it is told, once per block, so they checkpoint.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reaper.core.events import EventBridgeEvent, parse_model
from reaper.core.model import Outcome
from reaper.core.policy import OWNER
from reaper.kinds.base import Check, EventResult
from reaper.record.message import NoticeMessage
from reaper.record.notices import post_notice
from reaper.record.runtime import Runtime

UNDERUTILIZED = "AWS_EC2_ODCR_UNDERUTILIZATION_NOTIFICATION"
CR_ID = re.compile(r"cr-[0-9a-f]{8,17}")
MAX_IDS = 100


class HealthDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    eventTypeCode: str = Field(min_length=1)
    affectedEntities: list[dict[str, Any]] = Field(default_factory=list)


class BlockEndingDetail(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")

    capacity_reservation_id: str = Field(alias="capacity-reservation-id", pattern=r"^cr-[0-9a-f]{8,17}$")
    end_date: str | None = Field(default=None, alias="end-date")


def underutilized(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check) -> EventResult:
    detail = parse_model(HealthDetail, ev.detail, "an AWS Health event", "detail.")
    result: EventResult = {"event_id": ev.id, "checked": [], "acted": []}
    if detail.eventTypeCode != UNDERUTILIZED:
        return {**result, "skipped": f"{detail.eventTypeCode}: not a capacity reservation underutilisation notice"}
    named = [*ev.resources, *(str(e.get("entityValue", "")) for e in detail.affectedEntities)]
    ids = sorted({m for text in named for m in CR_ID.findall(text)})[:MAX_IDS]
    if not ids:
        return {**result, "skipped": "the event names no capacity reservation"}
    region = ev.region or rt.home_region
    outcomes: list[Outcome] = check(rt, "capacity", region, ids, now, ev.id)
    return {
        **result,
        "checked": sorted(o.resource.id for o in outcomes),
        "acted": [o.resource.id for o in outcomes if o.executed],
        "verdicts": {o.resource.id: o.verdict.value for o in outcomes},
        "reasons": {o.resource.id: o.reason for o in outcomes},
        "gone": sorted(set(ids) - {o.resource.id for o in outcomes}),  # cancelled or expired already
    }


def block_ending(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check) -> EventResult:
    detail = parse_model(BlockEndingDetail, ev.detail, "a Capacity Block expiration warning", "detail.")
    cr_id = detail.capacity_reservation_id
    region = ev.region or rt.home_region
    filters = [{"Name": "capacity-reservation-id", "Values": [cr_id]}, {"Name": "instance-state-name", "Values": ["running"]}]
    by_owner: dict[str | None, list[str]] = {}
    for page in rt.clients(region)("ec2").get_paginator("describe_instances").paginate(Filters=filters):
        for reservation in page.get("Reservations", []):
            for inst in reservation.get("Instances", []):
                tags = {t["Key"].strip().lower(): t.get("Value", "").strip() for t in inst.get("Tags", [])}
                by_owner.setdefault(tags.get(OWNER) or None, []).append(str(inst["InstanceId"]))
    result: EventResult = {"event_id": ev.id, "checked": cr_id, "instances": sorted(i for v in by_owner.values() for i in v), "told": []}
    if not by_owner:
        return {**result, "skipped": "nothing runs in it"}
    arn = next((r for r in ev.resources if cr_id in r), f"arn:aws:ec2:{region}:{ev.account}:capacity-reservation/{cr_id}")
    for owner, instances in sorted(by_owner.items(), key=lambda kv: kv[0] or ""):
        notice = NoticeMessage(
            kind="capacity",
            id=cr_id,
            arn=f"{arn}#owner={owner or '-'}",  # one notice per owner, each claimed once per event
            region=region,
            account=ev.account,
            owner=owner,
            title=f"Capacity Block {cr_id} ends {detail.end_date or 'in 40 minutes'}: checkpoint now",
            text=f"EC2 begins terminating the instances running in it in 10 minutes: {', '.join(sorted(instances))}",
        )
        if post_notice(rt, notice, now, ev.id):
            result["told"].append(owner or "admin channel")
    return result

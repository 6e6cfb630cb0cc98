"""CreateCapacityReservation, as CloudTrail records it: the creation-time notice (reaper.kinds.creation).

EC2's calls reach EventBridge as "AWS API Call via CloudTrail" with source `aws.ec2`
(https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/monitor-with-cloudtrail.html); the reservation's
`cr-` id is in the answer (`responseElements.CreateCapacityReservationResponse.capacityReservation`),
found wherever it is (events/capacity-cloudtrail-create.json).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from reaper.core.events import CloudTrailDetail, EventBridgeEvent
from reaper.kinds.base import Check
from reaper.kinds.creation import WatchedCreate, found_in, notice
from reaper.record.runtime import Runtime

CR_ID = re.compile(r"cr-[0-9a-f]{8,17}")


def locate(detail: CloudTrailDetail, region: str, account: str) -> tuple[str, str] | None:
    cr = found_in(detail, CR_ID)
    return None if cr is None else (cr, f"arn:aws:ec2:{region}:{account}:capacity-reservation/{cr}")


WATCHED = WatchedCreate(
    "capacity",
    "Capacity reservation",
    ("CreateCapacityReservation", "PurchaseCapacityBlock"),
    locate,
    "aws ec2 create-tags --resources {id} --tags Key={key},Value=...",
)


def created(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> dict[str, Any]:
    return notice(rt, ev, now, WATCHED)

"""CreateProvisionedModelThroughput, as CloudTrail records it: the creation-time notice (reaper.kinds.creation).

Bedrock's management calls reach EventBridge as "AWS API Call via CloudTrail" with source `aws.bedrock`
(https://docs.aws.amazon.com/bedrock/latest/userguide/logging-using-cloudtrail.html); the Provisioned
Throughput is `responseElements.provisionedModelArn` (events/bedrock-pt-cloudtrail-create.json).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.core.events import CloudTrailDetail, EventBridgeEvent
from reaper.kinds.base import Check
from reaper.kinds.creation import WatchedCreate, notice, param
from reaper.record.runtime import Runtime


def locate(detail: CloudTrailDetail, region: str, account: str) -> tuple[str, str] | None:
    arn = param(detail, "provisionedModelArn")
    if arn is None:
        return None
    return param(detail, "provisionedModelName") or arn.rsplit("/", 1)[-1], arn


WATCHED = WatchedCreate(
    "bedrock-pt",
    "Bedrock Provisioned Throughput",
    ("CreateProvisionedModelThroughput",),
    locate,
    "aws bedrock tag-resource --resource-arn {arn} --tags key={key},value=...",
)


def created(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> dict[str, Any]:
    return notice(rt, ev, now, WATCHED)

"""CreateApp, as CloudTrail records it: the creation-time notice (reaper.kinds.creation).

SageMaker's calls reach EventBridge as "AWS API Call via CloudTrail" with source `aws.sagemaker`
(https://docs.aws.amazon.com/sagemaker/latest/dg/logging-using-cloudtrail.html); the app is
`responseElements.appArn` (events/studio-app-cloudtrail-create.json). The notice reads the app's
own tags (a space's tags protect its apps in a sweep, but say nothing of who made this app).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.core.events import CloudTrailDetail, EventBridgeEvent
from reaper.kinds.base import Check
from reaper.kinds.creation import WatchedCreate, notice, param
from reaper.record.runtime import Runtime


def locate(detail: CloudTrailDetail, region: str, account: str) -> tuple[str, str] | None:
    arn = param(detail, "appArn")
    if arn is None:
        return None
    return param(detail, "appName") or arn.rsplit("/", 1)[-1], arn


WATCHED = WatchedCreate(
    "studio-app",
    "Studio app",
    ("CreateApp",),
    locate,
    "aws sagemaker add-tags --resource-arn {arn} --tags Key={key},Value=...",
)


def created(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> dict[str, Any]:
    return notice(rt, ev, now, WATCHED)

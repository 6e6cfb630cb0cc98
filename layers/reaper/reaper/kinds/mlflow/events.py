"""CreateMlflowTrackingServer, as CloudTrail records it: the creation-time notice (reaper.kinds.creation).

SageMaker's calls are CloudTrail management events ("CloudTrail captures all API calls for SageMaker
AI": https://docs.aws.amazon.com/sagemaker/latest/dg/logging-using-cloudtrail.html), delivered to
EventBridge with source `aws.sagemaker` and detail-type "AWS API Call via CloudTrail"
(https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-sagemaker.html). The server is found
by `responseElements.trackingServerArn`, else `requestParameters.trackingServerName`
(events/mlflow-cloudtrail-create.json).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.core.events import CloudTrailDetail, EventBridgeEvent
from reaper.kinds.base import Check
from reaper.kinds.creation import WatchedCreate, notice, param
from reaper.kinds.mlflow.model import KIND
from reaper.record.runtime import Runtime


def locate(detail: CloudTrailDetail, region: str, account: str) -> tuple[str, str] | None:
    arn = param(detail, "trackingServerArn")
    name = param(detail, "trackingServerName") or (arn.rsplit("/", 1)[-1] if arn else None)
    if name is None:
        return None
    return name, arn or f"arn:aws:sagemaker:{region}:{account}:mlflow-tracking-server/{name}"


WATCHED = WatchedCreate(
    KIND,
    "MLflow tracking server",
    ("CreateMlflowTrackingServer",),
    locate,
    "aws sagemaker add-tags --resource-arn {arn} --tags Key={key},Value=...",
)


def created(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> dict[str, Any]:
    return notice(rt, ev, now, WATCHED)

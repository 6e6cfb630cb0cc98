"""CreateMlflowTrackingServer, as CloudTrail records it: the creation-time notice (reaper.kinds.creation).

SageMaker's calls are CloudTrail management events ("CloudTrail captures all API calls for SageMaker
AI": https://docs.aws.amazon.com/sagemaker/latest/dg/logging-using-cloudtrail.html), delivered to
EventBridge with source `aws.sagemaker` and detail-type "AWS API Call via CloudTrail"
(https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-sagemaker.html). The server is found
by `requestParameters.trackingServerName` (events/mlflow-cloudtrail-create.json).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.core.events import CloudTrailDetail, EventBridgeEvent
from reaper.kinds.base import Check
from reaper.kinds.creation import Created, notice, param
from reaper.kinds.mlflow.discover import describe
from reaper.kinds.mlflow.model import KIND
from reaper.record.runtime import Runtime

WATCHED_CALLS = ("CreateMlflowTrackingServer",)


def read_created(rt: Runtime, region: str, detail: CloudTrailDetail) -> Created | None:
    name = param(detail, "trackingServerName", "TrackingServerName")
    if name is None:
        return None
    sm = rt.clients(region)("sagemaker")
    desc = describe(sm, name)
    if desc is None:
        return None
    arn = desc["TrackingServerArn"]
    tags = {t["Key"]: t["Value"] for page in sm.get_paginator("list_tags").paginate(ResourceArn=arn) for t in page.get("Tags", [])}
    command = "aws sagemaker add-tags --resource-arn {arn} --tags Key={key},Value=..."
    return Created(KIND, name, arn, "MLflow tracking server", tags, command)


def created(rt: Runtime, ev: EventBridgeEvent, now: datetime, check: Check | None = None) -> dict[str, Any]:
    return notice(rt, ev, now, WATCHED_CALLS, read_created)

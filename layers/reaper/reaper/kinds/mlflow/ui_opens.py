"""Who opened a tracking server's MLflow UI: CloudTrail's management events (MlflowReads=on).

The console's "Open MLflow" and `aws sagemaker create-presigned-mlflow-tracking-server-url` both call
CreatePresignedMlflowTrackingServerUrl, a SageMaker API call CloudTrail records as a management event.
LookupEvents reads the region's last 90 days of management events with no trail set up; one lookup per
region (LookupAttributes EventName, the window's StartTime, 50 events a page) serves every server, matched by
the event's `requestParameters.trackingServerName`. A page limit bounds the reads: when the window holds
more events than that, the servers none of the read events names are unknown, never idle.
https://docs.aws.amazon.com/awscloudtrail/latest/APIReference/API_LookupEvents.html
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from reaper.aws.faults import error_code
from reaper.core.timeutil import as_utc

EVENT = "CreatePresignedMlflowTrackingServerUrl"
PERMISSION = "cloudtrail:LookupEvents"
PAGE = 50  # LookupEvents MaxResults: "The maximum number of events to return. Possible values are 1 through 50."
MAX_PAGES = 40  # 2,000 UI opens in a window; CloudTrail allows 2 LookupEvents a second per account and region


class TrailUnreadable(Exception):
    """LookupEvents failed or was refused; the text holds the error code only."""


def _server_of(event: dict[str, Any]) -> str | None:
    try:
        detail = json.loads(event.get("CloudTrailEvent") or "{}")
    except ValueError:
        return None
    params = detail.get("requestParameters") if isinstance(detail, dict) else None
    name = params.get("trackingServerName") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


def opens(cloudtrail: Any, names: Iterable[str], start: datetime, end: datetime) -> tuple[dict[str, list[datetime]], bool]:
    """({server: the times its UI URL was asked for}, whether the window was read whole)."""
    wanted = set(names)
    found: dict[str, list[datetime]] = {n: [] for n in wanted}
    token: str | None = None
    try:
        for _ in range(MAX_PAGES):
            page = cloudtrail.lookup_events(
                LookupAttributes=[{"AttributeKey": "EventName", "AttributeValue": EVENT}],
                StartTime=start,
                EndTime=end,
                MaxResults=PAGE,
                **({"NextToken": token} if token else {}),
            )
            for event in page.get("Events", []):
                name = _server_of(event)
                if name in wanted and event.get("EventTime") is not None:
                    found[name].append(as_utc(event["EventTime"]))
            token = page.get("NextToken")
            if not token:
                return found, True
    except ClientError as exc:
        raise TrailUnreadable(f"CloudTrail LookupEvents failed ({error_code(exc)})") from None
    except BotoCoreError as exc:
        raise TrailUnreadable(f"CloudTrail LookupEvents failed ({type(exc).__name__})") from None
    return found, False

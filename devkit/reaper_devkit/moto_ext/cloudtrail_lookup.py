"""CloudTrail LookupEvents, which moto 5.2.5 lacks: the management events of the region's last 90 days.

Written from https://docs.aws.amazon.com/awscloudtrail/latest/APIReference/API_LookupEvents.html:
- LookupAttributes: "Contains a list of lookup attributes. Currently the list can contain only one item"; an
  AttributeKey outside "EventId | EventName | ReadOnly | Username | ResourceType | ResourceName | EventSource |
  AccessKeyId" or a second item is refused with InvalidLookupAttributesException.
- StartTime / EndTime: "If the specified start time is after the specified end time, an error is returned"
  (InvalidTimeRangeException); only the last 90 days are kept ("for the last 90 days").
- MaxResults: "Possible values are 1 through 50. The default is 50" (else InvalidMaxResultsException).
- NextToken: a token this service did not hand out is InvalidNextTokenException.
- Events, newest first ("Events are returned in reverse chronological order"), each with EventId, EventName,
  ReadOnly, AccessKeyId, EventTime, EventSource, Username, Resources and CloudTrailEvent (the record as a JSON string).

`record()` is the test kit's way to have an event happen (moto records no calls in CloudTrail). The events live
on moto's CloudTrail backend of the account and region, so a moto reset clears them; works in-process and in
server mode. `calls` counts the LookupEvents answered; an account in `refused` is denied them, as by an SCP.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from moto.cloudtrail import models, responses
from moto.core.exceptions import JsonRESTError

KEYS = {"EventId", "EventName", "ReadOnly", "Username", "ResourceType", "ResourceName", "EventSource", "AccessKeyId"}
KEPT = timedelta(days=90)
calls: list[dict[str, Any]] = []
refused: set[str] = set()  # accounts whose LookupEvents a test has denied (an SCP): AccessDeniedException


def _events(backend: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] | None = getattr(backend, "_reaper_events", None)
    if found is None:
        found = []
        backend._reaper_events = found
    return found


def record(
    event_name: str,
    request_parameters: dict[str, Any],
    when: datetime,
    *,
    region: str = "us-east-1",
    account: str = "123456789012",
    username: str = "ana",
    source: str = "sagemaker.amazonaws.com",
    error_code: str | None = None,
    response_elements: dict[str, Any] | None = None,
) -> None:
    """A management event CloudTrail recorded (as LookupEvents returns it)."""
    when = when.astimezone(UTC)
    detail = {
        "eventVersion": "1.09",
        "eventTime": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "eventSource": source,
        "eventName": event_name,
        "awsRegion": region,
        "userIdentity": {"type": "AssumedRole", "principalId": f"AROAEXAMPLE:{username}", "accountId": account},
        "requestParameters": request_parameters,
        "responseElements": None if error_code else (response_elements or {"authorizedUrl": "HIDDEN_DUE_TO_SECURITY_REASONS"}),
        **({"errorCode": error_code} if error_code else {}),
        "readOnly": False,
        "eventType": "AwsApiCall",
        "managementEvent": True,
        "recipientAccountId": account,
    }
    event = {
        "EventId": str(uuid.uuid4()),
        "EventName": event_name,
        "ReadOnly": "false",
        "AccessKeyId": "ASIAEXAMPLE",
        "EventTime": when,
        "EventSource": source,
        "Username": username,
        "Resources": [],
        "CloudTrailEvent": json.dumps(detail),
    }
    _events(models.cloudtrail_backends[account][region]).append(event)


def _matches(event: dict[str, Any], attribute: dict[str, Any] | None) -> bool:
    if attribute is None:
        return True
    key, value = attribute.get("AttributeKey"), attribute.get("AttributeValue")
    if key == "ResourceName":
        return any(r.get("ResourceName") == value for r in event["Resources"])
    if key == "ResourceType":
        return any(r.get("ResourceType") == value for r in event["Resources"])
    return str(event.get(str(key))) == value


def _time(value: Any, default: datetime) -> datetime:
    return default if value is None else datetime.fromtimestamp(float(value), UTC)


def lookup_events(self: Any) -> str:
    params = json.loads(self.body or "{}")
    if self.current_account in refused:
        raise JsonRESTError("AccessDeniedException", "User is not authorized to perform: cloudtrail:LookupEvents with an explicit deny")
    attributes = params.get("LookupAttributes") or []
    if len(attributes) > 1 or any(a.get("AttributeKey") not in KEYS or "AttributeValue" not in a for a in attributes):
        raise JsonRESTError("InvalidLookupAttributesException", "Only one lookup attribute, with a valid AttributeKey, is allowed")
    size = int(params.get("MaxResults") or 50)
    if not 1 <= size <= 50:
        raise JsonRESTError("InvalidMaxResultsException", "MaxResults must be 1 through 50")
    now = datetime.now(UTC)
    start, end = _time(params.get("StartTime"), now - KEPT), _time(params.get("EndTime"), now)
    if start > end:
        raise JsonRESTError("InvalidTimeRangeException", "StartTime is after EndTime")
    token = params.get("NextToken")
    if token is not None and not str(token).isdigit():
        raise JsonRESTError("InvalidNextTokenException", "Invalid NextToken")
    calls.append(params)
    oldest = max(start, now - KEPT)
    found = [
        e
        for e in sorted(_events(self.cloudtrail_backend), key=lambda e: e["EventTime"], reverse=True)
        if oldest <= e["EventTime"] <= end and _matches(e, attributes[0] if attributes else None)
    ]
    first = int(token or 0)
    page = [{**e, "EventTime": e["EventTime"].timestamp()} for e in found[first : first + size]]
    later = {"NextToken": str(first + size)} if first + size < len(found) else {}
    return json.dumps({"Events": page, **later})


def apply() -> None:
    if getattr(responses.CloudTrailResponse, "_reaper_lookup", False):
        return
    responses.CloudTrailResponse.lookup_events = lookup_events  # type: ignore[attr-defined]
    responses.CloudTrailResponse._reaper_lookup = True  # type: ignore[attr-defined]

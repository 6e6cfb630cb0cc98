"""CloudTrail LookupEvents, read one way for every kind that asks who called a SageMaker API: the MLflow UI opens
(kinds/mlflow/ui_opens.py) and the Studio spaces' app starts (kinds/storage/app_starts.py).

LookupEvents reads the region's management events of the last 90 days with no trail set up. One paged lookup per
region and event name serves every resource: it takes one lookup attribute, so it filters `EventName` and each
event's `requestParameters` say whose it is (the kind's own reading). The read is bounded (MAX_PAGES pages of 50,
newest first); a read stopped short says so (`Lookup.whole` stays False) and the kind decides what that leaves
unknown. A failed or refused lookup (throttled, denied by an SCP) raises TrailUnreadable: unknown, never idle.
https://docs.aws.amazon.com/awscloudtrail/latest/APIReference/API_LookupEvents.html
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any, TypedDict, cast

from botocore.exceptions import BotoCoreError, ClientError

from reaper.aws.faults import error_code

PERMISSION = "cloudtrail:LookupEvents"
KEPT = timedelta(days=90)  # "You can look up events that occurred in a Region within the last 90 days" (API_LookupEvents)
PAGE = 50  # MaxResults: "Possible values are 1 through 50. The default is 50."
MAX_PAGES = 40  # 2,000 events an event name and region; CloudTrail answers 2 lookups a second per account and region


class Event(TypedDict, total=False):
    """https://docs.aws.amazon.com/awscloudtrail/latest/APIReference/API_Event.html (the members read)."""

    EventName: str
    EventTime: datetime
    CloudTrailEvent: str  # the whole record, a JSON string


class LookupEventsResponse(TypedDict, total=False):
    """API_LookupEvents.html#API_LookupEvents_ResponseSyntax (above): newest first."""

    Events: list[Event]
    NextToken: str


class TrailUnreadable(Exception):
    """LookupEvents failed or was refused; the text holds the error code only."""


class Lookup:
    """The events named `event_name` in [start, end] (never before end - 90 days), newest first, page by page as they
    are iterated: a caller that stops early asks for no more pages. `whole` is True once the last page was read."""

    def __init__(self, cloudtrail: Any, event_name: str, start: datetime, end: datetime) -> None:
        self.cloudtrail, self.event_name = cloudtrail, event_name
        self.start, self.end = max(start, end - KEPT), end
        self.whole = False

    def __iter__(self) -> Iterator[Event]:
        token: str | None = None
        for _ in range(MAX_PAGES):
            page = self._page(token)
            yield from page.get("Events", [])
            token = page.get("NextToken")
            if not token:
                self.whole = True
                return

    def _page(self, token: str | None) -> LookupEventsResponse:
        try:
            page = self.cloudtrail.lookup_events(
                LookupAttributes=[{"AttributeKey": "EventName", "AttributeValue": self.event_name}],
                StartTime=self.start,
                EndTime=self.end,
                MaxResults=PAGE,
                **({"NextToken": token} if token else {}),
            )
        except ClientError as exc:
            raise TrailUnreadable(f"CloudTrail LookupEvents failed ({error_code(exc)})") from None
        except BotoCoreError as exc:
            raise TrailUnreadable(f"CloudTrail LookupEvents failed ({type(exc).__name__})") from None
        return cast(LookupEventsResponse, page)


def request_parameters(event: Event) -> dict[str, object] | None:
    """The event's `requestParameters` (from its CloudTrailEvent record), None when the record has none it can read."""
    try:
        detail = json.loads(event.get("CloudTrailEvent") or "")
    except ValueError:
        return None
    params = detail.get("requestParameters") if isinstance(detail, dict) else None
    return cast(dict[str, object], params) if isinstance(params, dict) else None

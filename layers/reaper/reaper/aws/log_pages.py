"""CloudWatch Logs FilterLogEvents, page after page: the one loop the kinds that scan logs share.

A page holds up to 1 MB or 10,000 events, and a page may be empty while `nextToken` says there is
more (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html):
the scan ends only when no token comes back. Each caller keeps its own budget (pages, seconds)
and says what an unfinished scan means for its evidence.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypedDict, cast


class FilterLogEventsRequest(TypedDict, total=False):
    """The request members the callers set (API_FilterLogEvents.html, above; logStreamNames: 1 to 100)."""

    logGroupName: str
    logStreamNames: list[str]
    startTime: int  # ms since the epoch
    endTime: int
    filterPattern: str


class FilteredLogEvent(TypedDict, total=False):
    """https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilteredLogEvent.html"""

    logStreamName: str
    timestamp: int  # ms since the epoch
    message: str
    ingestionTime: int
    eventId: str


class FilterLogEventsResponse(TypedDict, total=False):
    """API_FilterLogEvents.html#API_FilterLogEvents_ResponseSyntax (above)."""

    events: list[FilteredLogEvent]
    nextToken: str


def filter_pages(logs: Any, request: Mapping[str, object]) -> Iterator[FilterLogEventsResponse]:
    """Each page of FilterLogEvents for `request`, following nextToken; the caller may stop early."""
    params = dict(request)
    while True:
        page = cast(FilterLogEventsResponse, logs.filter_log_events(**params))
        yield page
        token = page.get("nextToken")
        if not token:
            return
        params["nextToken"] = token

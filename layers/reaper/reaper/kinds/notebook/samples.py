"""The activity agent's samples, read for every notebook at once from the stack's log group.

Each sample is one CloudWatch Logs event in stream NAME: {"notebook": NAME, "active": 0 or 1},
written every 5 minutes by agent/activity_agent.py. One FilterLogEvents scan over the group covers
every notebook: pages of up to 1 MB or 10,000 events, which may be partly full or empty and still
carry a nextToken ("If the results don't include a nextToken, then pagination is finished":
https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html), so
the scan follows nextToken to the end. FilterLogEvents is limited to 5 transactions per second per
account and Region (https://repost.aws/knowledge-center/cloudwatch-logs-throttling); a sweep makes a
few calls in a row and the client's standard retry mode absorbs a throttle.

Anyone allowed logs:PutLogEvents on the group can write any stream, so an event counts only when it
is exactly what the agent writes: small, JSON, naming the notebook of its stream, `active` 0 or 1,
inside the window. Anything else is ignored, which leaves its period missing: unknown, never idle.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import Any

from reaper.aws.faults import AwsError, is_not_found, short
from reaper.aws.log_pages import FilteredLogEvent, FilterLogEventsRequest, filter_pages
from reaper.aws.metrics import Series
from reaper.kinds.notebook.model import align

MAX_MESSAGE = 256  # the agent writes about 35 characters
MAX_PAGES = 2_000  # a budget against a runaway scan (10,000 notebooks need about 62 pages over 3 hours)
MAX_STREAMS = 100  # logStreamNames: 1 to 100 names (API_FilterLogEvents, above)


class SamplesUnreadable(Exception):
    """The log group exists but could not be read to the end: every notebook's activity is unknown."""


def parse(event: FilteredLogEvent, names: Collection[str], start: datetime, end: datetime) -> tuple[str, datetime, int] | None:
    """(notebook, period start, 0 or 1) for an event the agent could have written, else None."""
    stream, message, stamp = event.get("logStreamName"), event.get("message"), event.get("timestamp")
    if stream not in names or not isinstance(message, str) or len(message) > MAX_MESSAGE:
        return None
    if not isinstance(stamp, int) or isinstance(stamp, bool):
        return None
    try:
        body = json.loads(message)
    except ValueError:
        return None
    if not isinstance(body, dict) or body.get("notebook") != stream:
        return None
    active = body.get("active")
    if type(active) is not int or active not in (0, 1):  # not True/False, not 1.0, not 10**400
        return None
    at = datetime.fromtimestamp(stamp / 1000, tz=UTC)
    if not start <= at < end:
        return None
    return str(stream), align(at), active


def read(
    logs: Any, group: str, names: Collection[str], start: datetime, end: datetime, streams: Sequence[str] | None = None
) -> dict[str, Series]:
    """Each notebook's 5-minute series (the highest sample in each period), for the notebooks that
    have at least one valid sample; {} when the log group does not exist (no stack, or not yet).
    With `streams` (at most MAX_STREAMS), only those streams are read; else the whole group."""
    request: FilterLogEventsRequest = {
        "logGroupName": group,
        "startTime": int(start.timestamp() * 1000),
        "endTime": int(end.timestamp() * 1000) - 1,  # inclusive in the API; the window ends before `end`
    }
    if streams is not None:
        if not 0 < len(streams) <= MAX_STREAMS:
            raise ValueError(f"1 to {MAX_STREAMS} log streams per FilterLogEvents, not {len(streams)}")
        request["logStreamNames"] = list(streams)
    periods: dict[str, dict[datetime, int]] = {}
    try:
        for pages, page in enumerate(filter_pages(logs, request), start=1):
            for event in page.get("events", []):
                sample = parse(event, names, start, end)
                if sample is not None:
                    name, slot, active = sample
                    slots = periods.setdefault(name, {})
                    slots[slot] = max(active, slots.get(slot, 0))
            if page.get("nextToken") and pages >= MAX_PAGES:
                raise SamplesUnreadable(f"activity samples: {pages} pages of {group} did not reach the end of the window")
    except AwsError as exc:
        if is_not_found(exc):
            return {}
        raise SamplesUnreadable(f"activity samples unreadable ({group}): {short(exc)}") from exc
    return {name: sorted((ts, float(v)) for ts, v in slots.items()) for name, slots in periods.items()}

"""FilterLogEvents pages as AWS sizes them: at most 1 MB of events as well as 10,000.

AWS: "Each page returned can contain up to 1 MB of log events or up to 10,000 log events"
(https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html).
moto 5 cuts pages at 10,000 events only, so a scan of many small samples came back in fewer calls
than AWS would need. Here a page also ends before its events, as JSON, pass 1 MB, and its nextToken
(moto's own `group@stream@eventId` form) resumes after the last event kept. Time filtering is moto's
and matches AWS: startTime and endTime are both inclusive ("Events with a timestamp before this time
are not returned" / "later than this time are not returned").
"""

from __future__ import annotations

import json
from typing import Any

from moto.logs import models

PAGE_BYTES = 1_048_576


def apply() -> None:
    group_cls = models.LogGroup
    if getattr(group_cls, "_reaper_page_bytes", False):
        return
    original = group_cls.filter_log_events

    def filter_log_events(
        self: Any, log_group_name: str, *args: Any, **kwargs: Any
    ) -> tuple[list[dict[str, Any]], str | None, list[dict[str, Any]]]:
        events, token, searched = original(self, log_group_name, *args, **kwargs)
        size = 0
        for i, event in enumerate(events):
            size += len(json.dumps(event))
            if size > PAGE_BYTES and i > 0:
                last = events[i - 1]
                return events[:i], f"{log_group_name}@{last['logStreamName']}@{last['eventId']}", searched
        return events, token, searched

    group_cls.filter_log_events = filter_log_events
    group_cls._reaper_page_bytes = True

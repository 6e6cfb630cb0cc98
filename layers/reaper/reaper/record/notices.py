"""Notices: checks on a new or changed resource (missing owner tag, no agent), posted once."""

from __future__ import annotations

from datetime import datetime

from reaper.record.message import NoticeMessage
from reaper.record.runtime import Runtime


def post_notice(rt: Runtime, notice: NoticeMessage, now: datetime, event_id: str) -> bool:
    """Record and post one notice, once per event however often the event is delivered."""
    if rt.log is not None:
        if not rt.log.claim(f"notice|{notice.arn or notice.id}|event:{event_id}", now):
            return False
        rt.log.record(notice.as_record(), now, event_id)
    problems = rt.outbox.send([notice])
    return not problems

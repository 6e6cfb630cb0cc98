"""Notices: checks on a new or changed resource (missing owner tag, no agent), posted once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.record.runtime import Runtime


def post_notice(rt: Runtime, notice: dict[str, Any], now: datetime, event_id: str) -> bool:
    """Record and post one notice, once per event however often the event is delivered."""
    body = {"type": "notice", **notice}
    if rt.log is not None:
        if not rt.log.claim(f"notice|{notice.get('arn') or notice.get('id')}|event:{event_id}", now):
            return False
        rt.log.record(body, now, event_id)
    problems = rt.outbox.send([body])
    return not problems

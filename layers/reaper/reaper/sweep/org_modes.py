"""The modes one invocation runs with: the stack's own, or the organisation's central settings laid
over them (reaper.core.org_settings), and one notice each time that changes.

Read at the start of every invocation of a kind function (a sweep, a part of one, an event, a Stop
now), through the reader's short cache. What cannot be read or used changes nothing: the stack keeps
its own modes, logs a warning line and counts `CentralSettingsNotFollowed` each time, and says so once
(a notice in its own log and Slack, forwarded to the central log). Never a step towards enforce on
anything it could not read.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import datetime

from reaper.core.observability import MetricUnit, logger, metrics
from reaper.core.org_settings import apply, describe, notice_words, told_state
from reaper.record.message import NoticeMessage
from reaper.record.runtime import Runtime

STATE_KEY = "central-settings"  # the member log's record of what it last told


def follow(rt: Runtime, now: datetime) -> Runtime:
    """`rt` with the modes this invocation follows (the same runtime when central settings change nothing).

    One notice is recorded and posted when what the stack follows changed since it last told (once,
    whichever function sees it first: a conditional write of the state); nothing to tell before any
    central setting ever reached the stack. What to say is core (reaper.core.org_settings.notice_words).
    """
    reader = rt.central_settings
    if reader is None:
        return rt
    reading = reader.read(now)
    settings = apply(rt.settings, reading.modes, reader.policy) if reading.status == "follows" else rt.settings
    if reading.status in ("invalid", "unreadable"):
        logger.warning(
            "central settings not followed: this stack keeps its own modes",
            extra={"status": reading.status, "detail": reading.detail, "modes": describe(rt.settings)},
        )
        metrics.add_metric(name="CentralSettingsNotFollowed", unit=MetricUnit.Count, value=1)
    state = told_state(reading, reader.policy)
    if rt.log is None or state == reader.told:
        return rt if settings is rt.settings else replace(rt, settings=settings)
    changed, before = rt.log.note_state(STATE_KEY, state, now)
    reader.told = state
    if changed and not (before is None and state == "none"):
        title, text = notice_words(reading, reader.policy, rt.settings, settings)
        notice = NoticeMessage(
            kind="org-settings",
            id=f"central-settings {reader.account}",
            region=rt.home_region,
            account=reader.account,
            owner=None,  # the admin channel
            title=f"{title} in account {reader.account} ({rt.home_region})",
            text=text,
            details={"status": reading.status, "version": reading.version, "modes": describe(settings)},
        )
        rt.log.record(notice.as_record(), now, f"central-settings-{hashlib.sha256(state.encode()).hexdigest()[:16]}")
        rt.outbox.send([notice])
    return rt if settings is rt.settings else replace(rt, settings=settings)

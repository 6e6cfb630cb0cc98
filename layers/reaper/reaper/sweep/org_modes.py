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
from reaper.core.org_settings import Reading, apply, describe
from reaper.core.settings import Settings
from reaper.record.message import NoticeMessage
from reaper.record.org_settings_reader import CentralSettingsReader
from reaper.record.runtime import Runtime

STATE_KEY = "central-settings"  # the member log's record of what it last told


def follow(rt: Runtime, now: datetime) -> Runtime:
    """`rt` with the modes this invocation follows (the same runtime when central settings change nothing)."""
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
    tell(rt, reader, reading, settings, now)
    return rt if settings is rt.settings else replace(rt, settings=settings)


def state_of(reading: Reading, policy: str) -> str:
    if reading.status == "follows":
        return f"{'refused' if policy == 'ignore' else policy}:{reading.version}"
    if reading.status == "invalid":
        return f"invalid:{reading.version}:{hashlib.sha256(reading.detail.encode()).hexdigest()[:12]}"
    return reading.status  # none, unreadable


def tell(rt: Runtime, reader: CentralSettingsReader, reading: Reading, settings: Settings, now: datetime) -> bool:
    """Record and post one notice when the state changed since this stack last told (once, whichever
    function sees it first). Nothing to tell before any central setting ever reached the stack."""
    if rt.log is None:
        return False
    state = state_of(reading, reader.policy)
    if state == reader.told:
        return False
    changed, before = rt.log.note_state(STATE_KEY, state, now)
    reader.told = state
    if not changed or (before is None and state == "none"):
        return False
    title, text = words(reading, reader.policy, rt.settings, settings)
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
    return not rt.outbox.send([notice])


def words(reading: Reading, policy: str, own: Settings, now_following: Settings) -> tuple[str, str]:
    kept = f"Kept this stack's own modes: {describe(own)}; nothing was escalated."
    if reading.status == "unreadable":
        return "Central settings could not be read", f"The central settings table could not be read: {reading.detail}. {kept}"
    if reading.status == "invalid":
        return "Central settings refused as invalid", f"The central settings for this account cannot be used: {reading.detail}. {kept}"
    if reading.status == "none":
        return (
            "Central settings removed",
            f"No central setting applies to this account any more. Back to this stack's own modes: {describe(own)}.",
        )
    asked = apply(own, reading.modes, "follow")
    if policy == "ignore":
        return "Central settings refused by this stack", (
            f"Central settings v{reading.version} ask for {describe(asked)} ({reading.detail}). "
            f"This stack refuses central settings (CentralSettings=ignore) and keeps its own: {describe(own)}."
        )
    partial = ""
    if policy == "dry-run-only" and asked != now_following:
        partial = f" This stack takes only dry-run from central settings (CentralSettings=dry-run-only); they asked for {describe(asked)}."
    return (
        "Central settings apply",
        f"Modes now: {describe(now_following)} (this stack's own: {describe(own)}). From: {reading.detail}.{partial}",
    )

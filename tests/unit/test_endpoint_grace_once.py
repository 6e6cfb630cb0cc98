"""The grace of a learned rhythm, given once (reaper.kinds.endpoint.grace): each condition that brings the
warning back, alone. The whole chain runs through the functions in tests/integration/test_endpoint_grace_once.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.core.model import Decision, Verdict
from reaper.core.policy import TagView
from reaper.core.rhythm import learn_bursts
from reaper.kinds.endpoint import ActionName
from reaper.kinds.endpoint.grace import ANNOUNCE, once_per_rhythm, warned_for
from reaper.kinds.endpoint.model import WakeTrail
from reaper.kinds.endpoint.rules import BURST_TAIL

NOW = datetime(2026, 12, 10, 10, 50, tzinfo=UTC)  # 20 minutes after its usual 10:00-10:30 burst
WARNED = datetime(2026, 12, 9, 10, 50, tzinfo=UTC)
HISTORY = [(NOW.replace(hour=10, minute=5 * k) - timedelta(days=d), 3.0) for d in range(1, 15) for k in range(6)]
RHYTHM = learn_bursts(HISTORY, NOW)
TODAY = tuple(NOW.replace(hour=10, minute=5 * k) for k in range(6))
TRAIL = WakeTrail(WARNED, NOW.replace(hour=10, minute=0), NOW.replace(hour=9, minute=30), NOW.replace(hour=9, minute=38), TODAY)
SINCE = NOW.replace(hour=9, minute=38)  # its LastModifiedTime: InService after the wake
ZEROING = Decision(
    Verdict.ACT,
    "its usual burst is over; back at 09:30",
    action=ActionName.DELETE,
    evidence={"policy": "burst-over", "wake_at": "2026-12-11T09:30:00Z"},
)


def _warned(trail: WakeTrail | None = TRAIL, view: TagView | None = None, since: datetime | None = SINCE) -> datetime | None:
    return warned_for(RHYTHM, trail, view or TagView(), since, BURST_TAIL, NOW)


def test_a_zeroing_that_continues_its_rhythm_needs_no_new_warning():
    assert _warned() == WARNED
    decided = once_per_rhythm(ZEROING, RHYTHM, TRAIL, TagView(), SINCE, 60, BURST_TAIL, NOW)
    assert decided.skip_grace and decided.evidence["rhythm_warned_at"] == "2026-12-09T10:50:00Z"


def test_each_break_in_the_rhythm_brings_the_warning_back():
    assert _warned(trail=None) is None  # not the reaper's own wake (a restore by hand), or never warned of the rhythm
    early = WakeTrail(WARNED, TRAIL.usual_start, TRAIL.woken_at, TRAIL.restored_at, (NOW.replace(hour=9, minute=40), *TODAY))
    assert _warned(trail=early) is None  # a call after the wake, before its burst
    late = WakeTrail(WARNED, TRAIL.usual_start, TRAIL.woken_at, TRAIL.restored_at, (*TODAY, NOW.replace(hour=10, minute=45)))
    assert _warned(trail=late) is None  # a call after its burst's tail
    other = WakeTrail(WARNED, TRAIL.usual_start - timedelta(days=1), TRAIL.woken_at - timedelta(days=1), TRAIL.restored_at, ())
    assert _warned(trail=other) is None  # woken for an earlier burst: it stayed up through this one (none called then)
    assert _warned(since=NOW.replace(hour=10, minute=5)) is None  # updated (or recreated) after the wake brought it back
    assert _warned(since=None) is None
    assert _warned(view=TagView(snooze_until=NOW - timedelta(minutes=10))) is None  # snoozed after the warning, now over


def test_calls_within_the_burst_tail_and_a_snooze_before_the_warning_keep_it():
    tail = WakeTrail(WARNED, TRAIL.usual_start, TRAIL.woken_at, TRAIL.restored_at, (NOW.replace(hour=9, minute=50), *TODAY))
    assert _warned(trail=tail) == WARNED  # 09:50-09:55 is within 15 minutes of its 10:00 start
    assert _warned(view=TagView(snooze_until=WARNED - timedelta(days=3))) == WARNED


def test_the_first_zeroing_says_the_whole_rhythm_and_waits_for_its_grace():
    first = once_per_rhythm(ZEROING, RHYTHM, None, TagView(), SINCE, 60, BURST_TAIL, NOW)
    assert not first.skip_grace and first.reason.endswith(ANNOUNCE)
    idle = ZEROING.with_(evidence={**ZEROING.evidence, "policy": "idle"})  # quiet for the whole window: no burst was over
    assert not once_per_rhythm(idle, RHYTHM, TRAIL, TagView(), SINCE, 60, BURST_TAIL, NOW).skip_grace
    assert once_per_rhythm(ZEROING, RHYTHM, TRAIL, TagView(), SINCE, 0, BURST_TAIL, NOW) == ZEROING  # no grace: nothing to say

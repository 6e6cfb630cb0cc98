"""The grace of a learned rhythm, given once (docs/kinds/endpoint.md, "The grace, once per rhythm").

With learned wake a dev endpoint goes to zero after each usual burst and is woken just before the next.
The stack's grace (GraceMinutes) warns its owner before the reaper acts and lets them object (exempt,
snooze, the Slack buttons). Given again after every burst, it kept every endpoint up a whole grace past
every burst: its wake recreates it without `reaper:warned-at`, and its burst's calls would clear a
warning anyway. So the warning says the whole rhythm — it goes to zero between its bursts and is woken
before each — and is given once. A zeroing after a burst needs no new warning only when all hold:
  * its last restore was the reaper's own wake (the restore record's `restore_by`) for the burst that is
    now over (`usual_start`), and that record carries the rhythm's warning (`rhythm_warned_at`: written
    by a zeroing made after its grace, and carried from record to record);
  * every call since the wake fell in that burst, or within BURST_TAIL of it;
  * the endpoint was not created or changed since the wake brought it back (LastModifiedTime);
  * no snooze was set after the warning (`reaper:snooze-until` later than it, even if it has expired).
Anything else — a call outside its bursts, a restore by hand, an update, a burst that did not come, a
snooze — gives the full warning and grace again. Exempt, snooze and production are screened before any
rule (policy.screen), and protection is read again before every change, so an owner's objection always wins.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from reaper.core.model import Decision, Verdict
from reaper.core.policy import TagView
from reaper.core.rhythm import Rhythm
from reaper.core.timeutil import as_utc, iso
from reaper.kinds.endpoint.model import PERIOD, WakeTrail

# a classic endpoint's LastModifiedTime is its InService, which the reaper sees (restored_at) by an event
# that may come minutes later; an update made after it is later than this
SETTLED = timedelta(minutes=15)

ANNOUNCE = (
    "from then on it goes to zero after each of its usual bursts and is woken before the next, with no new warning; "
    "a call outside its bursts, a restore by hand or a snooze brings the warning back"
)


def warned_for(
    rhythm: Rhythm, trail: WakeTrail | None, view: TagView, since: datetime | None, tail: timedelta, now: datetime
) -> datetime | None:
    """When its owner was warned of this rhythm, if this zeroing continues it unchanged; else None."""
    if trail is None or since is None:
        return None
    if view.snooze_until is not None and view.snooze_until > trail.warned_at:
        return None  # snoozed after the warning: the owner objected once, so they are warned again
    burst = rhythm.last_burst(now)
    if burst is None:
        return None
    start, end = burst
    if abs(as_utc(trail.usual_start) - start) > tail:
        return None  # not the burst its wake was for: it stayed up through a later one
    if as_utc(since) > as_utc(trail.restored_at) + SETTLED:
        return None  # created or changed since the wake brought it back: not the endpoint the warning was about
    if any(ts + PERIOD <= start - tail or ts >= end + tail for ts in trail.calls):
        return None  # a call outside the burst: a change in use brings back the warning
    return trail.warned_at


def once_per_rhythm(
    decision: Decision,
    rhythm: Rhythm,
    trail: WakeTrail | None,
    view: TagView,
    since: datetime | None,
    grace: int,
    tail: timedelta,
    now: datetime,
) -> Decision:
    """A learned-wake zeroing (its evidence has `wake_at`) with a grace: the first says the whole rhythm (and
    so is warned of it); one that continues that rhythm acts without a new warning, said in its reason."""
    if decision.verdict is not Verdict.ACT or not decision.evidence.get("wake_at") or grace == 0:
        return decision
    warned = warned_for(rhythm, trail, view, since, tail, now) if decision.evidence.get("policy") == "burst-over" else None
    if warned is None:
        return decision.with_(reason=f"{decision.reason}; {ANNOUNCE}")
    return decision.with_(
        skip_grace=True,
        reason=f"{decision.reason}; no new warning: its owner was warned of this rhythm at {iso(warned)} and it has kept to it since",
        evidence={**decision.evidence, "rhythm_warned_at": iso(warned)},
    )

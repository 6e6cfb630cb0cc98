"""When a resource is usually needed, by slot of the week: learned from its own traffic, or pinned by a tag.

Pure: no AWS calls. A rhythm answers three questions for a time `t`: is it a slot the resource is
usually needed in, when does the next usual burst start, and which usual burst was the latest to
begin (so a sweep can tell that a burst is over). Slots are hours (`learn`, `parse_pinned`) or, for
learned bursts, five minutes (`learn_bursts`): a burst is a run of usual slots (docs/kinds/endpoint.md,
"Learned wake").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from reaper.core.timeutil import as_utc

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
HOURS_A_WEEK = 168
MINUTES_A_WEEK = 7 * 24 * 60
BURST_STEP = 5  # minutes: the period AWS/SageMaker Invocations are read at
BURST_GAP = 15  # minutes: usual slots this close are one burst (a pause inside a burst is not its end)
WEEKLY_MIN = 2  # an hour of week with traffic in both of the last two weeks
DAILY_MIN = 3  # ... or an hour of day with traffic on 3 of the last 7 days
_PINNED = re.compile(r"(?P<d1>[a-z]{3})(?:-(?P<d2>[a-z]{3}))?\s+(?P<h1>\d{2}):(?P<m1>\d{2})-(?P<h2>\d{2}):(?P<m2>\d{2})", re.ASCII)


def slot_of(t: datetime, step: int = 60) -> int:
    """The slot of the week (0 = Monday 00:00 UTC) `t` falls in, slots `step` minutes long (an hour by default)."""
    t = as_utc(t)
    return (t.weekday() * 1440 + t.hour * 60 + t.minute) // step


def floor_to(t: datetime, step: int) -> datetime:
    """`t` (UTC) down to the start of its `step`-minute slot."""
    t = as_utc(t)
    minute = t.hour * 60 + t.minute
    return t.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(minutes=minute - minute % step)


@dataclass(frozen=True)
class Rhythm:
    """The UTC slots of the week a resource is usually needed in; `source` says how that is known."""

    slots: frozenset[int]
    source: str  # "learned from 14 days of traffic", or "pinned by reaper:wake"
    step: int = 60  # minutes a slot lasts

    def needed_at(self, t: datetime) -> bool:
        return slot_of(t, self.step) in self.slots

    def next_start(self, now: datetime) -> datetime | None:
        """The start of the next usual burst after `now` (None: never needed)."""
        if not self.slots:
            return None
        base, step = floor_to(now, self.step), timedelta(minutes=self.step)
        for add in range(1, MINUTES_A_WEEK // self.step + 1):
            t = base + step * add
            if self.needed_at(t) and not self.needed_at(t - step):
                return t
        return None

    def last_burst(self, now: datetime) -> tuple[datetime, datetime] | None:
        """The latest usual burst to have begun by `now`, as (start, end); `end` is after `now` while in it.
        None when nothing is usual, or everything is (no burst has an end)."""
        if not self.slots or len(self.slots) * self.step >= MINUTES_A_WEEK:
            return None
        step, t = timedelta(minutes=self.step), floor_to(now, self.step)
        while not self.needed_at(t):
            t -= step
        start, end = t, t + step
        while self.needed_at(start - step):
            start -= step
        while self.needed_at(end):
            end += step
        return start, end

    def needed_within(self, now: datetime, lead: timedelta) -> bool:
        """Needed now, or from some time within `lead` of now."""
        start = self.next_start(now)
        return self.needed_at(now) or (start is not None and start - as_utc(now) <= lead)


def learn(hourly: list[tuple[datetime, float]], now: datetime, weeks: int = 2) -> Rhythm:
    """Usual hours from hourly request sums over the last `weeks` weeks (data in the current, partial
    hour is left out): an hour of week with traffic in each of the last two weeks, or an hour of day
    with traffic on at least 3 of the last 7 days (every day at that hour)."""
    end = as_utc(now).replace(minute=0, second=0, microsecond=0)
    busy = {as_utc(ts).replace(minute=0, second=0, microsecond=0) for ts, v in hourly if v > 0}
    busy = {t for t in busy if end - timedelta(weeks=weeks) <= t < end}
    weekly: dict[int, int] = {}
    for t in busy:
        weekly[slot_of(t)] = weekly.get(slot_of(t), 0) + 1
    recent = end - timedelta(days=7)
    daily: dict[int, int] = {}
    for t in busy:
        if t >= recent:
            daily[t.hour] = daily.get(t.hour, 0) + 1
    slots = {s for s, n in weekly.items() if n >= WEEKLY_MIN}
    slots |= {day * 24 + h for h, n in daily.items() if n >= DAILY_MIN for day in range(7)}
    return Rhythm(frozenset(slots), f"learned from {weeks * 7} days of traffic")


def learn_bursts(series: list[tuple[datetime, float]], now: datetime, weeks: int = 2, step: int = BURST_STEP) -> Rhythm:
    """Usual bursts from request sums per `step` minutes over the last `weeks` weeks (the current,
    partial slot left out): a slot of the week with traffic in each of the last two weeks (a weekly or
    weekday burst), or a slot of the day with traffic on at least 3 of the last 7 days (a daily one,
    and so several a day: hourly, six-hourly). Usual slots at most BURST_GAP apart are joined: a pause
    inside a burst is not its end. Between bursts nothing is usual, so the endpoint may go to zero."""
    end = floor_to(now, step)
    busy = {floor_to(ts, step) for ts, v in series if v > 0}
    busy = {t for t in busy if end - timedelta(weeks=weeks) <= t < end}
    weekly: dict[int, int] = {}
    daily: dict[int, int] = {}
    recent = end - timedelta(days=7)
    for t in busy:
        weekly[slot_of(t, step)] = weekly.get(slot_of(t, step), 0) + 1
        if t >= recent:
            daily[slot_of(t, step) % (1440 // step)] = daily.get(slot_of(t, step) % (1440 // step), 0) + 1
    slots = {s for s, n in weekly.items() if n >= WEEKLY_MIN}
    slots |= {day * (1440 // step) + s for s, n in daily.items() if n >= DAILY_MIN for day in range(7)}
    return Rhythm(frozenset(_join(slots, step)), f"bursts learned from {weeks * 7} days of traffic", step)


def _join(slots: set[int], step: int) -> set[int]:
    """Fill the gaps of at most BURST_GAP minutes between usual slots (around the week's end too)."""
    week = MINUTES_A_WEEK // step
    gap = BURST_GAP // step
    out = set(slots)
    for s in slots:
        for k in range(1, gap + 2):
            if (s + k) % week in slots:
                out.update((s + j) % week for j in range(1, k))
                break
    return out


def parse_pinned(value: str, timezone: str, now: datetime) -> Rhythm | None:
    """`mon-fri 08:00-18:00` (days, then a time range; several joined by `,`) in `timezone`, as the UTC
    hours of the week around `now` (so daylight saving follows the clock); None if it does not parse.
    A range ending before it starts spans midnight; partial hours count whole (kept, never cut short)."""
    slots: set[int] = set()
    tz = ZoneInfo(timezone)
    monday = as_utc(now).astimezone(tz).date() - timedelta(days=as_utc(now).astimezone(tz).weekday())
    for part in value.lower().split(","):
        m = _PINNED.fullmatch(part.strip())
        if m is None or m["d1"] not in DAYS or (m["d2"] and m["d2"] not in DAYS):
            return None
        h1, m1, h2, m2 = int(m["h1"]), int(m["m1"]), int(m["h2"]), int(m["m2"])
        if h1 > 23 or h2 > 24 or m1 > 59 or m2 > 59 or (h2 == 24 and m2) or (h1, m1) == (h2, m2):
            return None
        first, last = DAYS.index(m["d1"]), DAYS.index(m["d2"] or m["d1"])
        days = range(first, last + 1) if first <= last else [*range(first, 7), *range(0, last + 1)]
        for day in days:
            start = datetime.combine(monday + timedelta(days=day), time(h1, m1), tzinfo=tz)
            end_day = monday + timedelta(days=day + (1 if (h2, m2) <= (h1, m1) else 0))
            end = datetime.combine(end_day, time(0), tzinfo=tz) + timedelta(hours=h2, minutes=m2)
            t = as_utc(start).replace(minute=0, second=0, microsecond=0)
            while t < as_utc(end):
                slots.add(slot_of(t))
                t += timedelta(hours=1)
    return Rhythm(frozenset(slots), "pinned by its wake tag")

"""When a resource is usually needed, by hour of week: learned from its own traffic, or pinned by a tag.

Pure: no AWS calls. A rhythm answers two questions for a time `t`: is it an hour the resource is
usually needed in, and when does the next such hour start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from reaper.core.timeutil import as_utc

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
HOURS_A_WEEK = 168
WEEKLY_MIN = 2  # an hour of week with traffic in both of the last two weeks
DAILY_MIN = 3  # ... or an hour of day with traffic on 3 of the last 7 days
_PINNED = re.compile(r"(?P<d1>[a-z]{3})(?:-(?P<d2>[a-z]{3}))?\s+(?P<h1>\d{2}):(?P<m1>\d{2})-(?P<h2>\d{2}):(?P<m2>\d{2})", re.ASCII)


def slot_of(t: datetime) -> int:
    """The hour of week (0 = Monday 00:00 UTC) `t` falls in."""
    t = as_utc(t)
    return t.weekday() * 24 + t.hour


@dataclass(frozen=True)
class Rhythm:
    """The UTC hours of week a resource is usually needed in; `source` says how that is known."""

    slots: frozenset[int]
    source: str  # "learned from 14 days of traffic", or "pinned by reaper:wake"

    def needed_at(self, t: datetime) -> bool:
        return slot_of(t) in self.slots

    def next_start(self, now: datetime) -> datetime | None:
        """The start of the next needed hour after `now` (None: never needed)."""
        if not self.slots:
            return None
        hour = as_utc(now).replace(minute=0, second=0, microsecond=0)
        for add in range(1, HOURS_A_WEEK + 1):
            t = hour + timedelta(hours=add)
            if slot_of(t) in self.slots and not self.needed_at(t - timedelta(hours=1)):
                return t
        return None

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

"""Small time helpers: parsing tag dates and saying durations the way people read them."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta


def parse_instant(text: str) -> datetime:
    """ISO 8601 date or date-time; UTC when no offset. Raises ValueError."""
    text = text.strip()
    if not text:
        raise ValueError("empty")
    if len(text) == 10:
        d = date.fromisoformat(text)
        return datetime(d.year, d.month, d.day, tzinfo=UTC)
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    value = datetime.fromisoformat(text)
    # normalised to UTC here, so a date at the edge of the calendar fails now, not in a comparison later
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def human_duration(delta: timedelta | float) -> str:
    """'3 h 05 m', '45 m', '2 d 04 h'."""
    minutes = int((delta.total_seconds() if isinstance(delta, timedelta) else delta * 60) // 60)
    if minutes < 60:
        return f"{minutes} m"
    hours, mins = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {mins:02d} m"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours:02d} h"


def iso(value: datetime) -> str:
    return as_utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


_RATE = re.compile(r"^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$")
DEFAULT_SWEEP_EVERY = timedelta(minutes=15)


def interval(schedule: str | None) -> timedelta | None:
    """The time between full sweeps, for a `rate(...)` schedule; None for cron or nothing."""
    m = _RATE.match((schedule or "").strip().lower())
    if not m:
        return None
    n, unit = int(m.group(1)), m.group(2).rstrip("s")
    return {"minute": timedelta(minutes=n), "hour": timedelta(hours=n), "day": timedelta(days=n)}[unit]


def sweep_turn(now: datetime, schedule: str | None = None) -> int:
    """The sweep's turn: how many sweep intervals (its `rate(...)` schedule, else 15 minutes) since the
    epoch, so one sweep and the next take turns one apart, however late each starts within its interval."""
    every = interval(schedule) or DEFAULT_SWEEP_EVERY
    return int(as_utc(now).timestamp() // every.total_seconds())

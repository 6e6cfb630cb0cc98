"""Which endpoints were told today already, from the action log (one Query, a page per ~1 MB).

An endpoint nothing is done to — production (notify-only), or dev while the kind is in dry-run —
gets its message ("would delete", "would scale to zero") once a day (courier's message claim:
arn, mode, verdict, action and the UTC day). Reading its configuration again on every later sweep
of that day only rebuilds a message that is not posted, so the sweep reads the day's log once and
skips those reads. The configuration is read
again when the message is next due: on the next UTC day, or as soon as the endpoint changes
(LastModifiedTime after the message), or when the log cannot be read (then it is read as before).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import datetime

from reaper.aws.faults import AwsError, short
from reaper.core.model import Resource
from reaper.core.price import SHIPPED, Price
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.endpoint.model import KIND, Told
from reaper.record.actionlog import ActionLog
from reaper.record.logentry import LogEntry

log = logging.getLogger("reaper")

# the actions a production message names; any other (a notice such as "MinInstanceCount blocks zero",
# with its own key) is not a daily message, so it never stands in for one
ACTIONS = frozenset({"delete", "scale-to-zero"})


def told_today(
    action_log: ActionLog, candidates: Iterable[Resource], verdicts: Mapping[str, str], settings: Settings, now: datetime
) -> dict[str, Told]:
    """{endpoint id: its message today} for the candidates whose daily message was posted already;
    `verdicts`: the verdict that message has, by endpoint id (production `exempt`, dev in dry-run `act`)."""
    wanted = {r.arn: r for r in candidates if r.arn}
    if not wanted:
        return {}
    end = as_utc(now)
    day_start = end.replace(hour=0, minute=0, second=0, microsecond=0)
    mode = settings.mode_for(KIND).value
    out: dict[str, Told] = {}
    try:
        for entry in action_log.entries(day_start, end):
            r = wanted.get(entry.arn or "")
            if r is None or entry.kind != KIND or entry.region != r.region:
                continue
            if entry.verdict != verdicts.get(r.id) or entry.mode != mode or entry.action not in ACTIONS:
                continue
            at = _parse(entry.logged_at)
            if at is None or at < day_start:
                continue
            if r.changed_at is not None and as_utc(r.changed_at) > at:
                continue  # changed since it was told: what it would be told may differ
            said = entry.facts.get("type")
            price = _price(entry, r)
            out[r.id] = Told(
                at=at,
                action=str(entry.action),
                hourly_usd=None if price is None else price.usd,
                price=price,
                instance_type=entry.instance_type,
                type=said if isinstance(said, str) else None,
            )
    except AwsError as exc:  # optional: without it every configuration is read, as if none was told
        log.warning("could not read today's action log, so production endpoints' configurations are read: %s", short(exc))
        return {}
    return out


def _price(entry: LogEntry, r: Resource) -> Price | None:
    """The hourly cost the message gave, with its source, while the endpoint still has that many instances."""
    usd = entry.hourly_usd
    if entry.instance_count != r.instance_count or usd is None:
        return None
    # an entry written before prices said their source came from the shipped copy (docs/prices.md)
    return Price(float(usd), SHIPPED if entry.price_source is None else entry.price_source, entry.price_as_of)


def _parse(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return as_utc(datetime.fromisoformat(value))
    except ValueError:
        return None

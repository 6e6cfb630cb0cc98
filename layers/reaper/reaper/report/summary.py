"""`reaper report`: what was reclaimed and what it saved, from the action log alone.

Savings are estimates from list prices, honest per kind and labelled as bounds:
- something that runs until stopped (a notebook, an endpoint at zero, a GPU box, a Studio app, a file
  system) saves its hourly price for the hours it stayed off. The log records the reaper's actions,
  not the owner's restart, so "off" ends at the next sign that it ran again (a later warning or
  action on it, or its restore) and otherwise now: an upper bound;
- a stopped job saves at most what its ceiling would still have let it run (time or dollars left,
  whichever is less); it would have run on only until that ceiling stopped it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from reaper.core.price import Price
from reaper.core.text import cut
from reaper.core.timeutil import as_utc

if TYPE_CHECKING:
    from reaper.aws.discounts import Discounts
    from reaper.record.logentry import LogEntry

GROUPS = ("owner", "kind", "project", "account")  # account: the organisation's central log (--org)
KEY_CAP = 40  # a longer owner or project is cut with an ellipsis in the table; json, csv and html keep it whole
NUMBERS = "  RESOURCES  ACTIONS  HOURS OFF  SAVED (est.)  "
AFTER = "AFTER COMMIT.  "  # the column `reaper report --discounts` adds (reaper/aws/discounts.py)
TOTAL_NOTE = "list prices; time off ends when the log next shows it running, else now: an upper bound"


@dataclass
class Reclaimed:
    """One executed action and its estimated saving."""

    entry: LogEntry
    hours_off: float | None  # None for a job (it would have ended by itself)
    saved_usd: float | None  # None when the price is unknown
    still_off: bool = False  # nothing in the log says it ran again: it saves its hourly price every hour from now on


@dataclass
class Group:
    key: str
    resources: set[str] = field(default_factory=set)
    actions: int = 0
    hours_off: float = 0.0
    saved_usd: float = 0.0
    unpriced: int = 0
    jobs: int = 0
    saved_after_usd: float | None = None  # after the account's commitments (--discounts), when known

    def to_json(self, by: str) -> dict[str, Any]:
        after = {} if self.saved_after_usd is None else {"saved_after_commitments_usd": round(self.saved_after_usd, 2)}
        return {
            by: self.key,
            "resources": len(self.resources),
            "actions": self.actions,
            "hours_off": round(self.hours_off, 1),
            "saved_usd": round(self.saved_usd, 2),
            "unpriced": self.unpriced,
            "jobs_stopped": self.jobs,
            **after,
        }


def _key(e: LogEntry) -> tuple[str, str, str]:
    return (str(e.kind), str(e.region), str(e.id))


def _back(e: LogEntry) -> bool:
    """A later entry that shows the resource was running again (or brought back)."""
    if e.verdict in ("act", "warn"):
        return True
    text = f"{e.action or ''} {e.title or ''}".lower()
    return "restore" in text or " is back" in text  # "Restoring endpoint X", "Endpoint X is back"


def done(e: LogEntry) -> bool:
    """An executed action, confirmed (LogEntry.done)."""
    return e.done


def unconfirmed(entries: Iterable[LogEntry]) -> int:
    """Changes begun and never confirmed, by resource: said, not counted as reclaimed."""
    return len({_key(e) for e in entries if e.verdict == "act" and e.unconfirmed})


def unconfirmed_line(count: int) -> str:
    return f"unconfirmed: {count} change(s) began and were never confirmed (see `reaper log`): not counted as reclaimed"


def _number(value: object) -> float | None:
    """A figure from a kind's evidence (free-form JSON): a number, or a string of one, as the dict read did."""
    if value is None or isinstance(value, dict | list):
        return None
    return float(value)  # type: ignore[arg-type]


def job_saving(e: LogEntry) -> float | None:
    ev = e.facts
    spent, hourly = _number(ev.get("estimated_usd")), e.hourly_usd
    max_usd, max_hours, elapsed = _number(ev.get("max_usd")), _number(ev.get("max_hours")), _number(ev.get("elapsed_hours"))
    limits: list[float] = []
    if max_usd is not None and spent is not None:
        limits.append(max_usd - spent)
    if max_hours is not None and elapsed is not None and hourly is not None:
        limits.append((max_hours - elapsed) * hourly)
    return max(0.0, min(limits)) if limits else None


def reclaimed(entries: Iterable[LogEntry], now: datetime) -> list[Reclaimed]:
    ordered = sorted((e for e in entries if e.at is not None), key=lambda e: e.logged_at)
    out: list[Reclaimed] = []
    for i, e in enumerate(ordered):
        if not e.done:
            continue
        if e.facts.get("estimated_usd") is not None:
            out.append(Reclaimed(e, None, job_saving(e)))
            continue
        start = e.at
        assert start is not None
        later = next((x.at for x in ordered[i + 1 :] if _key(x) == _key(e) and _back(x)), None)
        hours = max(((later or now) - start).total_seconds() / 3600, 0.0)
        hourly = e.hourly_usd
        out.append(Reclaimed(e, hours, None if hourly is None else hourly * hours, still_off=later is None))
    return out


def off_now(items: list[Reclaimed]) -> tuple[int, float, int]:
    """Resources still off (as far as the log knows): how many, their hourly price together, how many unpriced."""
    latest: dict[tuple[str, str, str], Reclaimed] = {}
    for r in items:
        if r.hours_off is not None:
            latest[_key(r.entry)] = r  # items are oldest first: the last action on a resource decides
    off = [r for r in latest.values() if r.still_off]
    priced = [r.entry.hourly_usd for r in off if r.entry.hourly_usd is not None]
    return len(off), sum(priced), len(off) - len(priced)


def off_now_line(items: list[Reclaimed]) -> str | None:
    count, hourly, unpriced = off_now(items)
    if not count:
        return None
    note = f"; {unpriced} without a price" if unpriced else ""
    return f"off now: {count} resource(s) that cost ${hourly:,.2f}/h together, about ${hourly * 24:,.2f} a day while they stay off{note}"


def group(items: list[Reclaimed], by: str) -> list[Group]:
    groups: dict[str, Group] = {}
    for r in items:
        key = str(r.entry.value(by) or f"(no {by})")
        g = groups.setdefault(key, Group(key))
        g.resources.add("/".join(_key(r.entry)))
        g.actions += 1
        g.hours_off += r.hours_off or 0.0
        if r.saved_usd is None:
            g.unpriced += 1
        else:
            g.saved_usd += r.saved_usd
        if r.hours_off is None:
            g.jobs += 1
    return sorted(groups.values(), key=lambda g: (-g.saved_usd, g.key))


def apply_discounts(groups: list[Group], items: list[Reclaimed], by: str, discounts: Discounts) -> None:
    """Each group's saving after the account's commitments, beside its list-price saving."""
    if discounts.unavailable is not None:
        return
    for g in groups:
        g.saved_after_usd = 0.0
    found = {g.key: g for g in groups}
    for r in items:
        ids = tuple(str(v) for v in (r.entry.id, r.entry.arn) if v)
        after = discounts.after(str(r.entry.kind), r.saved_usd, ids, r.hours_off)
        owner = found.get(str(r.entry.value(by) or f"(no {by})"))
        if owner is not None and after is not None and owner.saved_after_usd is not None:
            owner.saved_after_usd += after


def after_line(groups: list[Group], discounts: Discounts) -> str:
    """The total after commitments beside the list-price total, and where the figure comes from."""
    if discounts.unavailable is not None:
        return discounts.line()
    after = sum(g.saved_after_usd or 0.0 for g in groups)
    listed = sum(g.saved_usd for g in groups)
    return f"total after commitments: about ${after:,.2f} of the ${listed:,.2f} at list prices; {discounts.line()}"


def would_act(entries: Iterable[LogEntry]) -> int:
    """Dry-run findings: what enforce would have reclaimed (nothing was)."""
    return len({_key(e) for e in entries if e.verdict == "act" and not e.executed})


def notes(g: Group) -> str:
    said = []
    if g.jobs:
        said.append(f"{g.jobs} job(s): at most what its ceiling left")
    if g.unpriced:
        said.append(f"{g.unpriced} without a price")
    return "; ".join(said)


def total_line(groups: list[Group]) -> str:
    unpriced = sum(g.unpriced for g in groups)
    left_out = f"; {unpriced} action(s) without a price, not counted" if unpriced else ""
    return f"total: about ${sum(g.saved_usd for g in groups):,.2f} saved ({TOTAL_NOTE}{left_out})"


def sources_line(items: list[Reclaimed]) -> str | None:
    """Where the savings' prices come from (docs/prices.md), as each action's log entry recorded it:
    'prices: 4 at AWS Price List API 2026-12-05, 1 at shipped copy of AWS's price list (dated 2026-12-02)'."""
    counts: dict[str, int] = {}
    for r in items:
        if r.entry.hourly_usd is None:
            continue
        source = r.entry.price_source
        if source is None:
            label = "a price whose source was not recorded (before prices said theirs)"
        else:
            label = Price(0.0, source, r.entry.price_as_of).label
        counts[label] = counts.get(label, 0) + 1
    if not counts:
        return None
    return "prices: " + ", ".join(f"{n} at {label}" for label, n in sorted(counts.items()))


def dry_run_line(dry_run_findings: int) -> str:
    return f"dry-run: {dry_run_findings} resource(s) would have been acted on in enforce (nothing was reclaimed by them)"


def format_report(
    groups: list[Group],
    by: str,
    since: datetime,
    dry_run_findings: int,
    width: int = 120,
    items: list[Reclaimed] | None = None,
    discounts: Discounts | None = None,
) -> str:
    """The report as a table that fits `width` columns: a long key or note is cut with an ellipsis."""

    lines = [f"reclaimed since {since:%Y-%m-%d %H:%M} UTC, by {by}"]
    if not groups:
        lines.append("nothing was reclaimed")
    else:
        after = discounts is not None and discounts.unavailable is None
        numbers = NUMBERS + (AFTER if after else "")
        key_width = min(max(len(by), *(len(" ".join(g.key.split())) for g in groups)), KEY_CAP)
        key_width = max(min(key_width, width - len(numbers) - 8), len(by))
        note_width = max(width - key_width - len(numbers), 0)
        lines.append(f"{by.upper():{key_width}}{numbers}NOTES"[:width].rstrip())
        for g in groups:
            row = (
                f"{cut(g.key, key_width):{key_width}}  {len(g.resources):9}  {g.actions:7}  {g.hours_off:9,.1f}  "
                f"{'$' + format(g.saved_usd, ',.2f'):>12}"
            )
            if after:
                row += f"  {'$' + format(g.saved_after_usd or 0.0, ',.2f'):>13}"
            lines.append(f"{row}  {cut(notes(g), note_width)}".rstrip() if note_width else row)
        lines.extend(textwrap.wrap(total_line(groups), width, subsequent_indent="  "))
        if discounts is not None:
            lines.extend(textwrap.wrap(after_line(groups, discounts), width, subsequent_indent="  "))
        said = sources_line(items or [])
        if said:
            lines.extend(textwrap.wrap(said, width, subsequent_indent="  "))
        off = off_now_line(items or [])
        if off:
            lines.extend(textwrap.wrap(off, width, subsequent_indent="  "))
    if dry_run_findings:
        lines.extend(textwrap.wrap(dry_run_line(dry_run_findings), width, subsequent_indent="  "))
    return "\n".join(lines)


def daily_savings(items: list[Reclaimed], since: datetime, now: datetime) -> dict[date, dict[str, float]]:
    """Estimated dollars saved on each UTC day from `since` to `now`, per kind: a resource that stayed off
    saves its hourly price for the hours of each day it was off; a stopped job's bound counts on the
    day it was stopped (when it would have run on is not known). Unpriced actions count nothing."""
    first, last = as_utc(since).date(), as_utc(now).date()
    days: dict[date, dict[str, float]] = {first + timedelta(days=n): {} for n in range((last - first).days + 1)}
    for r in items:
        kind, start = str(r.entry.kind), r.entry.at
        if r.saved_usd is None or start is None:
            continue
        if r.hours_off is None:
            day = days.setdefault(start.date(), {})
            day[kind] = day.get(kind, 0.0) + r.saved_usd
            continue
        hourly = r.entry.hourly_usd or 0.0
        for on, hours in _day_parts(start, start + timedelta(hours=r.hours_off)):
            part = days.setdefault(on, {})
            part[kind] = part.get(kind, 0.0) + hourly * hours
    return dict(sorted(days.items()))


def daily_hours_off(items: list[Reclaimed], since: datetime, now: datetime) -> dict[date, dict[str, float]]:
    """Hours each kind's resources stayed off on each UTC day from `since` to `now` (jobs count none)."""
    first, last = as_utc(since).date(), as_utc(now).date()
    days: dict[date, dict[str, float]] = {first + timedelta(days=n): {} for n in range((last - first).days + 1)}
    for r in items:
        kind, start = str(r.entry.kind), r.entry.at
        if r.hours_off is None or start is None:
            continue
        for on, hours in _day_parts(start, start + timedelta(hours=r.hours_off)):
            part = days.setdefault(on, {})
            part[kind] = part.get(kind, 0.0) + hours
    return dict(sorted(days.items()))


def logged_day(e: LogEntry) -> date | None:
    at = e.at
    return None if at is None else at.date()


def _day_parts(start: datetime, end: datetime) -> list[tuple[date, float]]:
    """The hours from `start` to `end` cut at each UTC midnight: (day, hours on it)."""
    parts, cursor = [], start
    while cursor < end:
        midnight = datetime.combine(cursor.date() + timedelta(days=1), datetime.min.time(), tzinfo=cursor.tzinfo)
        upto = min(end, midnight)
        parts.append((cursor.date(), (upto - cursor).total_seconds() / 3600))
        cursor = upto
    return parts

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

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reaper.timeutil import parse_instant

GROUPS = ("owner", "kind", "project")


@dataclass
class Reclaimed:
    """One executed action and its estimated saving."""

    entry: dict[str, Any]
    hours_off: float | None  # None for a job (it would have ended by itself)
    saved_usd: float | None  # None when the price is unknown


@dataclass
class Group:
    key: str
    resources: set[str] = field(default_factory=set)
    actions: int = 0
    hours_off: float = 0.0
    saved_usd: float = 0.0
    unpriced: int = 0
    jobs: int = 0

    def to_json(self, by: str) -> dict[str, Any]:
        return {
            by: self.key, "resources": len(self.resources), "actions": self.actions,
            "hours_off": round(self.hours_off, 1), "saved_usd": round(self.saved_usd, 2),
            "unpriced": self.unpriced, "jobs_stopped": self.jobs,
        }


def _key(e: dict[str, Any]) -> tuple[str, str, str]:
    return (str(e.get("kind")), str(e.get("region")), str(e.get("id")))


def _at(e: dict[str, Any]) -> datetime | None:
    try:
        return parse_instant(str(e.get("logged_at")))
    except (TypeError, ValueError):
        return None


def _back(e: dict[str, Any]) -> bool:
    """A later entry that shows the resource was running again (or brought back)."""
    if e.get("verdict") in ("act", "warn"):
        return True
    text = f"{e.get('action') or ''} {e.get('title') or ''}".lower()
    return "restore" in text


def job_saving(e: dict[str, Any]) -> float | None:
    ev = e.get("evidence") if isinstance(e.get("evidence"), dict) else {}
    assert isinstance(ev, dict)
    spent, hourly = ev.get("estimated_usd"), e.get("hourly_usd")
    limits: list[float] = []
    if ev.get("max_usd") is not None and spent is not None:
        limits.append(float(ev["max_usd"]) - float(spent))
    if ev.get("max_hours") is not None and ev.get("elapsed_hours") is not None and hourly is not None:
        limits.append((float(ev["max_hours"]) - float(ev["elapsed_hours"])) * float(hourly))
    return max(0.0, min(limits)) if limits else None


def reclaimed(entries: Iterable[dict[str, Any]], now: datetime) -> list[Reclaimed]:
    ordered = sorted((e for e in entries if _at(e) is not None), key=lambda e: str(e.get("logged_at")))
    out: list[Reclaimed] = []
    for i, e in enumerate(ordered):
        if e.get("verdict") != "act" or not e.get("executed"):
            continue
        ev = e.get("evidence")
        if isinstance(ev, dict) and ev.get("estimated_usd") is not None:
            out.append(Reclaimed(e, None, job_saving(e)))
            continue
        start = _at(e)
        assert start is not None
        later = next((_at(x) for x in ordered[i + 1 :] if _key(x) == _key(e) and _back(x)), None)
        hours = max(((later or now) - start).total_seconds() / 3600, 0.0)
        hourly = e.get("hourly_usd")
        out.append(Reclaimed(e, hours, None if hourly is None else float(hourly) * hours))
    return out


def group(items: list[Reclaimed], by: str) -> list[Group]:
    groups: dict[str, Group] = {}
    for r in items:
        key = str(r.entry.get(by) or f"(no {by})")
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


def would_act(entries: Iterable[dict[str, Any]]) -> int:
    """Dry-run findings: what enforce would have reclaimed (nothing was)."""
    return len({_key(e) for e in entries if e.get("verdict") == "act" and not e.get("executed")})


def format_report(groups: list[Group], by: str, since: datetime, dry_run_findings: int) -> str:
    lines = [f"reclaimed since {since:%Y-%m-%d %H:%M} UTC, by {by}"]
    if not groups:
        lines.append("nothing was reclaimed")
    else:
        width = max(len(by), *(len(g.key) for g in groups))
        lines.append(f"{by.upper():{width}}  RESOURCES  ACTIONS  HOURS OFF  SAVED (est.)  NOTES")
        for g in groups:
            notes = []
            if g.jobs:
                notes.append(f"{g.jobs} job(s): at most what their ceilings left")
            if g.unpriced:
                notes.append(f"{g.unpriced} without a price")
            lines.append(f"{g.key:{width}}  {len(g.resources):9}  {g.actions:7}  {g.hours_off:9,.1f}  {'$' + format(g.saved_usd, ',.2f'):>12}  {'; '.join(notes)}")
        total = sum(g.saved_usd for g in groups)
        lines.append(f"total: about ${total:,.2f} saved (list prices; hours off end at the next sign the resource ran again, else now: an upper bound)")
    if dry_run_findings:
        lines.append(f"dry-run: {dry_run_findings} resource(s) would have been acted on in enforce")
    return "\n".join(lines)

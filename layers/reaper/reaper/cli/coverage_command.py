"""`reaper coverage`: per kind and region, what the dry-run sweep judged, what it could not, what those cost an
hour, and for each reason the fix (reaper.core.coverage). With an opt-in off, what turning it on would reach."""

from __future__ import annotations

from functools import partial
from typing import Any

from reaper.core.coverage import Coverage, Reach, SettingOf, opt_in_on, opt_in_reach, tally
from reaper.core.model import Outcome
from reaper.core.settings import Settings
from reaper.kinds import setting_of


def _setting_of(settings: Settings) -> SettingOf:
    """An opt-in's setting read where it lives: shared (JupyterReads) or a kind's own (GpuSsmReads, MlflowReads)."""
    return partial(setting_of, settings)


def rows(outcomes: list[Outcome], settings: Settings) -> list[dict[str, Any]]:
    """`--json`: one object per kind and region (type "coverage"), then one per opt-in that is off (type "opt-in")."""
    lines = tally(outcomes)
    setting = _setting_of(settings)
    out: list[dict[str, Any]] = [{"type": "coverage", **c.to_json(setting)} for c in lines]
    out += [
        {
            "type": "opt-in",
            "opt_in": r.opt_in,
            "on": False,
            "would_reach": r.resources,
            "hourly_usd": r.hourly_usd if r.unpriced < r.resources else None,
            "unpriced": r.unpriced,
        }
        for r in opt_in_reach(lines, setting)
    ]
    return out


def format_coverage(outcomes: list[Outcome], settings: Settings) -> str:
    lines = tally(outcomes)
    setting = _setting_of(settings)
    if not lines:
        return "nothing found"
    head = f"{'KIND':<12} {'REGION':<15} {'RESOURCES':>9} {'JUDGED':>7} {'UNKNOWN':>8} {'UNKNOWN $/H':>12} {'EXEMPT':>7} {'ERROR':>6}"
    text = [head]
    for c in lines:
        text.append(
            f"{c.kind:<12} {c.region:<15} {c.resources:>9} {c.judged:>7} {c.unknown:>8} {c.unknown_hourly_usd:>12.2f} {c.exempt:>7} {c.errors:>6}"
        )
        text += _reasons(c, setting)
    unknown = sum(c.unknown for c in lines)
    hourly = sum(c.unknown_hourly_usd for c in lines)
    unpriced = sum(c.unknown_unpriced for c in lines)
    left_out = f"; {unpriced} of them unpriced, not in that figure" if unpriced else ""
    sources = sorted({s for c in lines for s in c.price_sources})
    said = f", {', '.join(sources)}" if sources else ""
    text.append("")
    text.append(
        f"can't judge {unknown} of {sum(c.resources for c in lines)} resources (${hourly:,.2f}/h, ${hourly * 730:,.0f}/month "
        f"at list price{said}{left_out})"
        if unknown
        else "every resource was judged on evidence"
    )
    text += [_reach(r) for r in opt_in_reach(lines, setting)]
    return "\n".join(text)


def _reasons(c: Coverage, setting: SettingOf) -> list[str]:
    out = []
    for t in c.ranked():
        unpriced = f", {t.unpriced} without a price" if t.unpriced else ""
        state = ""
        on = opt_in_on(t.reason, setting)
        if on is not None:
            state = f" [{t.reason.opt_in} is {'on' if on else 'off'}]"
        since = f" (unverified since {t.since})" if t.since else ""
        out.append(f"    {t.reason.code}: {t.resources} (${t.hourly_usd:,.2f}/h{unpriced}) {t.reason.label}{since}{state}")
        out.append(f"      fix: {t.reason.fix}")
    return out


def _reach(r: Reach) -> str:
    """What an opt-in would reach, and what that costs; resources without a list price are said as such, never $0."""
    if r.unpriced >= r.resources:
        cost = "unpriced"
    else:
        cost = f"${r.hourly_usd:,.2f}/h" + (f", {r.unpriced} without a price" if r.unpriced else "")
    return f"{r.opt_in} is off: turning it on would reach up to {r.resources} of them ({cost})"

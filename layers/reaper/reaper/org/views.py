"""`reaper coverage --org`: each member's latest coverage tally, per account, kind and region, from the central log."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def latest_coverage(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest sweep's coverage entries per (account, kind, region): every part of that sweep."""
    newest: dict[tuple[str, str, str], tuple[str, str]] = {}  # where -> (logged_at, event_id)
    rows: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for e in entries:
        if e.get("type") != "coverage":
            continue
        where = (str(e.get("account") or "?"), str(e.get("kind")), str(e.get("region")))
        event = str(e.get("event_id"))
        rows.setdefault((*where, event), []).append(e)
        at = str(e.get("logged_at"))
        if where not in newest or newest[where][0] < at:
            newest[where] = (at, event)
    return [row for where, (_, event) in sorted(newest.items()) for row in rows[(*where, event)]]


def format_coverage(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no coverage recorded by any member account in this window"
    head = f"{'ACCOUNT':<12} {'KIND':<12} {'REGION':<15} {'RESOURCES':>9} {'JUDGED':>7} {'UNKNOWN':>8} {'UNKNOWN $/H':>12}"
    text = [head]
    for r in rows:
        text.append(
            f"{str(r.get('account')):<12} {str(r.get('kind')):<12} {str(r.get('region')):<15} {_n(r, 'resources'):>9}"
            f" {_n(r, 'judged'):>7} {_n(r, 'unknown'):>8} {float(r.get('unknown_hourly_usd') or 0):>12.2f}"
        )
        text += [f"    {t.get('code')}: {t.get('resources')} — fix: {t.get('fix')}" for t in r.get("reasons") or []]
    unknown = sum(_n(r, "unknown") for r in rows)
    hourly = sum(float(r.get("unknown_hourly_usd") or 0) for r in rows)
    accounts = len({r.get("account") for r in rows})
    text += ["", f"{accounts} account(s): can't judge {unknown} of {sum(_n(r, 'resources') for r in rows)} resources (${hourly:,.2f}/h)"]
    return "\n".join(text)


def _n(row: dict[str, Any], key: str) -> int:
    try:
        return int(row.get(key) or 0)
    except (TypeError, ValueError):
        return 0

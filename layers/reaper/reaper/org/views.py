"""`reaper coverage --org`: each member's latest coverage tally, per account, kind and region, from the central log."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import JsonValue

from reaper.record.logentry import LogEntry

Row = dict[str, JsonValue]  # a coverage entry as stored (Coverage.to_json() and the log's own keys)


def latest_coverage(entries: Iterable[LogEntry]) -> list[Row]:
    """The newest sweep's coverage entries per (account, kind, region): every part of that sweep."""
    newest: dict[tuple[str, str, str], tuple[str, str]] = {}  # where -> (logged_at, event_id)
    rows: dict[tuple[str, str, str, str], list[Row]] = {}
    for e in entries:
        if e.type != "coverage":
            continue
        where = (str(e.account or "?"), str(e.kind), str(e.region))
        event = str(e.event_id)
        rows.setdefault((*where, event), []).append(e.stored)
        at = e.logged_at
        if where not in newest or newest[where][0] < at:
            newest[where] = (at, event)
    return [row for where, (_, event) in sorted(newest.items()) for row in rows[(*where, event)]]


def format_coverage(rows: list[Row]) -> str:
    if not rows:
        return "no coverage recorded by any member account in this window"
    head = f"{'ACCOUNT':<12} {'KIND':<12} {'REGION':<15} {'RESOURCES':>9} {'JUDGED':>7} {'UNKNOWN':>8} {'UNKNOWN $/H':>12}"
    text = [head]
    for r in rows:
        text.append(
            f"{str(r.get('account')):<12} {str(r.get('kind')):<12} {str(r.get('region')):<15} {_n(r, 'resources'):>9}"
            f" {_n(r, 'judged'):>7} {_n(r, 'unknown'):>8} {_usd(r):>12.2f}"
        )
        text += [f"    {t.get('code')}: {t.get('resources')} — fix: {t.get('fix')}" for t in _reasons(r)]
    unknown = sum(_n(r, "unknown") for r in rows)
    hourly = sum(_usd(r) for r in rows)
    accounts = len({r.get("account") for r in rows})
    text += ["", f"{accounts} account(s): can't judge {unknown} of {sum(_n(r, 'resources') for r in rows)} resources (${hourly:,.2f}/h)"]
    return "\n".join(text)


def _reasons(row: Row) -> list[Mapping[str, JsonValue]]:
    reasons = row.get("reasons")
    return [t for t in reasons if isinstance(t, dict)] if isinstance(reasons, list) else []


def _usd(row: Row) -> float:
    value = row.get("unknown_hourly_usd")
    return float(value) if isinstance(value, int | float | str) and value else 0.0


def _n(row: Row, key: str) -> int:
    value = row.get(key)
    try:
        return int(value) if isinstance(value, int | float | str) and value else 0
    except (TypeError, ValueError):
        return 0

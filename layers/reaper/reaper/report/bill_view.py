"""`reaper report --bill` as text and as JSON lines (docs/bill.md)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from reaper.report.bill import PROJECT_TAG, STAGE_TAG, Bill
from reaper.report.reconcile import BUCKETS, OTHER, TOLERANCE, Buckets, Reconciled

TAG_NOT_SEEN = (
    f"no billed line carries an {STAGE_TAG} value: the tag is not activated as a cost-allocation tag "
    "(Billing and Cost Management > Cost allocation tags), or nothing billed is tagged; the untagged line is then the whole bill"
)
ORG_NO_TAG = f"across the organisation the bill is grouped by account and usage type: {STAGE_TAG} is not read (GroupBy takes two)"
PROJECT_NO_STAGE = (
    f"grouped by {PROJECT_TAG}: {STAGE_TAG} is not read (GroupBy takes two), so a GPU box counts as development; "
    f"the untagged column is spend without an {PROJECT_TAG}"
)
NO_PROJECT = "(no project)"


def header(bill: Bill) -> dict[str, Any]:
    return {
        "section": "bill",
        "start": bill.start.isoformat(),
        "end": bill.end.isoformat(),
        "org": bill.org,
        "billed_usd": round(bill.total(), 2),
        "requests": bill.requests,
        "cached": bill.requests == 0 and bill.refused is None,
        "estimated_days": [d.isoformat() for d in bill.estimated_days],
        "tag": bill.tag,
        "stage_tag_seen": bill.tag_seen if bill.tag == STAGE_TAG else False,
        "tag_seen": bill.tag_seen,
        "refused": bill.refused,
        "truncated": bill.truncated,
    }


def json_rows(bill: Bill, b: Buckets, rows: list[Reconciled], to_tag: list[str]) -> Iterator[dict[str, Any]]:
    yield header(bill)
    if bill.refused:
        return
    for name in (*BUCKETS, OTHER):
        yield {"section": "bucket", "bucket": name, "billed_usd": round(b.usd[name], 2), "untagged_usd": round(b.untagged[name], 2)}
    yield {"section": "untagged", "tag": bill.tag, "billed_usd": round(sum(b.untagged.values()), 2), "to_tag": to_tag}
    for project, usd in _projects(b):
        yield {"section": "project", "project": project, "billed_usd": round(usd, 2)}
    for r in rows:
        yield r.to_json()


def _where(bill: Bill) -> str:
    cost = (
        "read from the day's cache (no charge)"
        if bill.requests == 0
        else f"{bill.requests} Cost Explorer request(s), ${bill.requests * 0.01:.2f}"
    )
    return f"billed {bill.start:%Y-%m-%d} to {bill.end:%Y-%m-%d} (end excluded), {cost}"


def format_bill(bill: Bill, b: Buckets, rows: list[Reconciled], to_tag: list[str], width: int = 120) -> str:
    lines = [_where(bill)]
    if bill.refused:
        return "\n".join([*lines, f"no bill: {bill.refused}"])
    lines.append(f"{'BUCKET':18}  {'BILLED':>12}  {'UNTAGGED':>12}")
    for name in (*BUCKETS, OTHER):
        lines.append(f"{name:18}  {_usd(b.usd[name]):>12}  {_usd(b.untagged[name]):>12}")
    lines.append(f"{'total':18}  {_usd(b.total):>12}  {_usd(sum(b.untagged.values())):>12}")
    if bill.tag == PROJECT_TAG:
        lines.append(f"{'PROJECT':18}  {'BILLED':>12}")
        lines.extend(f"{(p or NO_PROJECT)[:18]:18}  {_usd(usd):>12}" for p, usd in _projects(b))
    notes = _notes(bill, b, to_tag)
    lines.extend(w for note in notes for w in textwrap.wrap(note, width, subsequent_indent="  "))
    lines.extend(_reconciled(rows, width))
    return "\n".join(lines)


def _notes(bill: Bill, b: Buckets, to_tag: list[str]) -> list[str]:
    notes = []
    if bill.org:
        notes.append(ORG_NO_TAG)
    elif bill.tag == PROJECT_TAG:
        notes.append(PROJECT_NO_STAGE)
    if not bill.org and not bill.tag_seen:
        notes.append(TAG_NOT_SEEN.replace(STAGE_TAG, bill.tag or STAGE_TAG))
    untagged = sum(b.untagged.values())
    if untagged and not bill.org:
        shown = ", ".join(to_tag[:10]) + (f" and {len(to_tag) - 10} more" if len(to_tag) > 10 else "")
        notes.append(f"untagged: {_usd(untagged)} has no {bill.tag}" + (f"; the log saw these without it: {shown}" if to_tag else ""))
    if bill.estimated_days:
        notes.append(
            f"estimated: {len(bill.estimated_days)} day(s) from {bill.estimated_days[0]:%Y-%m-%d} are AWS's estimate and may change"
        )
    if bill.truncated:
        notes.append("the bill had more pages than a report reads: the figures are partial")
    return notes


def _projects(b: Buckets) -> list[tuple[str | None, float]]:
    """Each project's spend, costliest first, the untagged (None) last."""
    tagged = sorted(((p, usd) for p, usd in b.projects.items() if p is not None), key=lambda x: (-x[1], x[0]))
    return tagged + ([(None, b.projects[None])] if None in b.projects else [])


def _reconciled(rows: list[Reconciled], width: int) -> list[str]:
    if not rows:
        return ["reconciled: the reaper stopped nothing in the period"]
    out = [f"reclaimed beside the bill (agree within {TOLERANCE:.0%}):"]
    for r in rows:
        who = f"{r.account} " if r.account else ""
        verdict = "agrees" if r.agrees else f"differs by {_usd(r.difference)} ({r.share:.1%})"
        out.append(
            f"  {who}{r.kind}: reaper claims {_usd(r.claimed_usd)} ({r.claimed_hours:,.1f} h off), "
            f"bill dropped {_usd(r.drop_usd)} ({r.drop_hours:,.1f} h) over {r.after_days} day(s) after {r.first_stop:%Y-%m-%d}: {verdict}"
        )
        out.extend(
            w for reason in r.named() for w in textwrap.wrap(f"- {reason}", width, initial_indent="    ", subsequent_indent="      ")
        )
    return out


def _usd(value: float) -> str:
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def digest_line(bill: Bill, rows: list[Reconciled]) -> str:
    """The daily digest's line beside its weekly figure (DigestBill=on): the bill, and per kind agree or differ."""
    if bill.refused:
        return f"not read: {bill.refused}"
    said = [f"{_usd(bill.total())} billed {bill.start:%b %d} to {bill.end - timedelta(days=1):%b %d}"]
    for r in rows:
        who = f"{r.account} " if r.account else ""
        if r.agrees:
            said.append(f"{who}{r.kind} agrees ({_usd(r.claimed_usd)} claimed, {_usd(r.drop_usd)} off the bill)")
        else:
            said.append(f"{who}{r.kind} differs by {_usd(r.difference)} ({_usd(r.claimed_usd)} claimed, {_usd(r.drop_usd)} off the bill)")
    return " · ".join(said) + " (`reaper report --bill`)"

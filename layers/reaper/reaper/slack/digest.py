"""The admin channel's daily digest (bot mode), built from the action log.

Counts by verdict and by kind for the day, errors, the top owners, and dollars reclaimed today
and this week. The dollars are `reaper report`'s, within each window, computed by the same code
as the dashboard's savings metric (reaper.report.savings_metric.saved_between): a resource's hourly price
for the hours it stayed off (until the log shows it running again or restored, else now: an upper
bound), a stopped job at most what its ceiling still allowed, on the day it was stopped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError
from slack_sdk.models.blocks import Block, ButtonElement, ContextBlock, HeaderBlock, SectionBlock
from slack_sdk.models.blocks.basic_components import ConfirmObject, MarkdownTextObject, PlainTextObject

from reaper.core.coverage import headline
from reaper.core.timeutil import as_utc
from reaper.record.logentry import LogEntry
from reaper.record.message import AnomalyCause, CoverageHeadline, DailyDigestMessage, StoppableRow
from reaper.record.org_keys import log_key
from reaper.report.savings_metric import saved_between
from reaper.slack.message import HEADER_TEXT_MAX, SECTION_TEXT_MAX, Cuts, Message, button_value, escape, mention, money

if TYPE_CHECKING:
    from reaper.aws.discounts import Discounts

TOP_OWNERS = 5
ERRORS_LISTED = 10
ANOMALIES_LISTED = 5
STOP_LISTED = 30  # one block each; with the digest's own blocks, within Slack's 50
CONFIRM_TEXT_MAX = 300  # a confirmation dialog's text (https://api.slack.com/reference/block-kit/composition-objects#confirm)
BUTTON_VALUE_MAX = 2000  # a button's value (https://api.slack.com/reference/block-kit/block-elements#button)


def window_start(now: datetime) -> datetime:
    """The digest reads the log from the start of the ISO week (Monday, UTC)."""
    day = as_utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return day - timedelta(days=day.weekday())


def build(entries: Iterable[LogEntry], now: datetime, discounts: Discounts | None = None, units: str | None = None) -> DailyDigestMessage:
    now = as_utc(now)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    week = window_start(now)
    verdicts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    owners: Counter[str] = Counter()
    accounts: Counter[str] = Counter()  # the organisation's central log: each entry names its account
    errors: list[str] = []
    entries = list(entries)
    for e in entries:
        at = _time(e.logged_at)
        if at is None:
            continue
        if at < today or not e.is_verdict:
            continue
        verdicts[str(e.verdict)] += 1
        kinds[str(e.kind)] += 1
        if e.account:
            accounts[e.account] += 1
        if e.verdict in ("act", "warn", "error"):
            owners[e.owner or "(no owner)"] += 1
        if e.verdict == "error":
            errors.append(f"{e.kind} {e.id}: {e.error or e.reason}")
    reclaimed_today = sum(f.saved_usd for f in saved_between(entries, today, now).values())
    by_kind = saved_between(entries, week, now)
    reclaimed_week = sum(f.saved_usd for f in by_kind.values())
    after = None if discounts is None else sum(discounts.after(k, f.saved_usd) or 0.0 for k, f in by_kind.items())
    blind = headline(_latest_coverage(entries, today))
    stoppable, stoppable_total = _stoppable(entries, today)
    anomalies = _anomalies(entries, today)
    return DailyDigestMessage(
        id=f"digest-{today:%Y-%m-%d}",
        date=f"{today:%Y-%m-%d}",
        verdicts=dict(verdicts),
        kinds=dict(kinds),
        accounts=dict(accounts),
        errors=len(errors),
        error_lines=errors[:ERRORS_LISTED],
        top_owners=owners.most_common(TOP_OWNERS),
        reclaimed_today_usd=round(reclaimed_today, 2),
        reclaimed_week_usd=round(reclaimed_week, 2),
        reclaimed_week_after_usd=None if after is None or discounts is None or discounts.unavailable else round(after, 2),
        after_commitments=None if discounts is None else discounts.line(),
        coverage=None if blind is None else CoverageHeadline.model_validate_json(json.dumps(blind)),
        stoppable=stoppable,
        stoppable_total=stoppable_total,
        anomalies=anomalies[:ANOMALIES_LISTED],
        anomalies_total=len(anomalies),
        units=units,
    )


class _Anomaly(BaseModel):
    """An anomaly's log entry (an AnomalyMessage as logged), the fields its digest line names."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    id: str
    impact_usd: float | None = None
    tag_key: str | None = None
    value: str | None = None
    owner: str | None = None
    causes: list[AnomalyCause] = Field(default_factory=list)


def _anomalies(entries: list[LogEntry], today: datetime) -> list[str]:
    """Today's cost anomalies (reaper.slack.anomaly_alerts), one line each, once per AnomalyId, costliest first."""
    found: dict[str, _Anomaly] = {}
    for e in entries:
        at = _time(e.logged_at)
        if e.type == "anomaly" and at is not None and at >= today and e.id:
            try:
                found[e.id] = _Anomaly.model_validate(e.stored)
            except ValidationError:
                continue  # not an anomaly as logged: no line rather than a wrong one
    ranked = sorted(found.values(), key=lambda a: -(a.impact_usd or 0.0))
    lines = []
    for a in ranked:
        what = f"{a.tag_key} {a.value}" if a.tag_key else (a.value or "spend")
        cause = a.causes[0] if a.causes else AnomalyCause()
        why = " · ".join(str(v) for v in (cause.service, cause.usage_type) if v) or "no root cause named"
        lines.append(f"{what}: ${a.impact_usd or 0.0:,.2f} over expected ({why}), owner {a.owner or 'none'}")
    return lines


def _stoppable(entries: list[LogEntry], today: datetime) -> tuple[list[StoppableRow], int]:
    """The organisation's digest only (entries that name their account): today's resources whose latest
    verdict is act or warn and that were not changed, each with the key of that record in the central log,
    for its Stop now button (reaper.org.interactions reads the record back). Costliest first."""
    latest: dict[str, LogEntry] = {}
    for e in entries:  # oldest first: the last one per resource wins
        at = _time(e.logged_at)
        if at is not None and at >= today and e.is_verdict and e.account and e.arn:
            latest[e.arn] = e
    rows = [
        StoppableRow(
            arn=str(e.arn),
            kind=str(e.kind),
            id=str(e.id),
            account=str(e.account),
            verdict=str(e.verdict),
            region=e.region,
            owner=e.owner,
            reason=e.reason,
            hourly_usd=e.hourly_usd,
            logged=log_key(e.stored)["sk"]["S"],
        )
        for e in latest.values()
        if e.verdict in ("act", "warn") and not e.executed and e.action and e.function
    ]
    rows.sort(key=lambda r: -(r.hourly_usd or 0.0))
    return rows[:STOP_LISTED], len(rows)


def _latest_coverage(entries: list[LogEntry], today: datetime) -> list[dict[str, JsonValue]]:
    """Today's newest sweep per kind and region (every part of it), from its "coverage" log entries."""
    sweeps: dict[tuple[str, str], tuple[str, str]] = {}  # (kind, region) -> (logged_at, event_id) of the newest
    rows: dict[tuple[str, str, str], list[dict[str, JsonValue]]] = {}
    for e in entries:
        at = _time(e.logged_at)
        if e.type != "coverage" or at is None or at < today:
            continue
        where = (str(e.kind), str(e.region))
        event = str(e.event_id)
        rows.setdefault((*where, event), []).append(e.stored)
        if where not in sweeps or sweeps[where][0] < e.logged_at:
            sweeps[where] = (e.logged_at, event)
    return [row for where, (_, event) in sweeps.items() for row in rows[(*where, event)]]


def render(p: DailyDigestMessage) -> Message:
    cuts = Cuts()
    verdicts = ", ".join(f"{n} {escape(v)}" for v, n in sorted(p.verdicts.items())) or "nothing"
    kinds = ", ".join(f"{n} {escape(k)}" for k, n in sorted(p.kinds.items())) or "—"
    owners = "\n".join(f"• {_owner(o)}: {n}" for o, n in p.top_owners) or "—"
    errors = "\n".join(f"• {escape(line)}" for line in p.error_lines)
    accounts = ", ".join(f"{n} in {escape(a)}" for a, n in sorted(p.accounts.items()))
    body = (
        (f"*Accounts:* {accounts}\n" if accounts else "") + f"*Verdicts:* {verdicts}\n*Kinds:* {kinds}\n"
        f"*Reclaimed:* {money(p.reclaimed_today_usd)} today · {money(p.reclaimed_week_usd)} this week\n"
        + (f"*Against the bill:* {escape(p.bill)}\n" if p.bill else "")
        + f"*Errors:* {p.errors}"
    )
    if p.after_commitments:
        figure = "not known" if p.reclaimed_week_after_usd is None else f"{money(p.reclaimed_week_after_usd)} this week"
        body += f"\n*After commitments:* {figure} ({escape(p.after_commitments)})"
    blind = p.coverage
    if blind:
        body += (
            f"\n*Can't judge:* {blind.unknown} resources ({money(blind.unknown_hourly_usd)}/h"
            + (f", {blind.unknown_unpriced} unpriced not counted" if blind.unknown_unpriced else "")
            + "): "
            f"top reason {escape(blind.top_label)} ({blind.top_resources}), fix: {escape(blind.fix)}"
        )
    if p.units:
        body += f"\n*Unit costs:* {escape(p.units)}"
    if p.advice:
        body += f"\n*Right-size (advice only):* {escape(p.advice)}"
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=cuts.cut(f"mlreaper daily digest {escape(p.date)}", HEADER_TEXT_MAX, "header", note=" …"))),
        SectionBlock(text=MarkdownTextObject(text=cuts.cut(body, SECTION_TEXT_MAX, "body"))),
        SectionBlock(text=MarkdownTextObject(text=cuts.cut(f"*Top owners (act, warn, error):*\n{owners}", SECTION_TEXT_MAX, "owners"))),
    ]
    if errors:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=cuts.cut(f"*Errors:*\n{errors}", SECTION_TEXT_MAX, "errors"))))
    if p.anomalies:
        lines = "\n".join(f"• {escape(line)}" for line in p.anomalies)
        more = f"\n… and {p.anomalies_total - len(p.anomalies)} more" if p.anomalies_total > len(p.anomalies) else ""
        text = f"*Cost anomalies today ({p.anomalies_total}):*\n{lines}{more}"
        blocks.append(SectionBlock(text=MarkdownTextObject(text=cuts.cut(text, SECTION_TEXT_MAX, "anomalies"))))
    blocks += _stop_blocks(p, cuts)
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text="Every record: `reaper log --since 1d`")]))
    text = f"mlreaper daily digest {escape(p.date)}: {verdicts}"
    return Message(text=cuts.cut(text, 3000, "text", note=" …"), blocks=[b.to_dict() for b in blocks], cut=tuple(dict.fromkeys(cuts.parts)))


def _stop_blocks(p: DailyDigestMessage, cuts: Cuts) -> list[Block]:
    """Stop now for each resource the organisation's digest lists (admins only; the member account checks it
    again through its own gate and answers in the thread)."""
    rows = p.stoppable
    if not rows:
        return []
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text="*Waiting (admins may stop now; each account checks again):*"))]
    for r in rows[:STOP_LISTED]:
        text = (
            f"*{escape(r.kind)}* `{escape(r.id)}` · {escape(r.account)} {escape(r.region or '')} · "
            f"{_owner(r.owner or '(no owner)')} · {money(r.hourly_usd)}/h\n{escape(r.reason or '')}"
        )
        value = button_value({"arn": r.arn, "kind": r.kind, "logged": r.logged})
        confirm = ConfirmObject(
            title="Stop now?",
            text=cuts.cut(escape(f"{r.kind} {r.id} in account {r.account}"), CONFIRM_TEXT_MAX, "confirm", note=" …"),
            confirm="Stop",
            deny="Cancel",
        )
        button = ButtonElement(text="Stop now", action_id="reaper:stop", value=value, style="danger", confirm=confirm)
        section_text = MarkdownTextObject(text=cuts.cut(text, SECTION_TEXT_MAX, "stoppable"))
        blocks.append(
            SectionBlock(text=section_text, accessory=button) if len(value) <= BUTTON_VALUE_MAX else SectionBlock(text=section_text)
        )
    more = (p.stoppable_total or len(rows)) - len(rows[:STOP_LISTED])
    if more > 0:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=f"… and {more} more: `reaper log --org --since 1d`")]))
    return blocks


def _owner(owner: str) -> str:
    return "(no owner)" if owner == "(no owner)" else mention(owner)


def _time(value: str) -> datetime | None:
    try:
        return as_utc(datetime.fromisoformat(str(value).replace("Z", "+00:00")))
    except ValueError:
        return None

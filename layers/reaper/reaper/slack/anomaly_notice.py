"""A Cost Anomaly Detection alert (reaper.aws.anomalies), as its owner (or the admin channel) reads it.

Every value came from AWS's alert or from a tag, so every one is escaped; the root causes are AWS's
own (service, region, usage type, linked account), ranked as AWS sent them, the first few shown.
"""

from __future__ import annotations

from slack_sdk.models.blocks import Block, ContextBlock, SectionBlock
from slack_sdk.models.blocks.basic_components import MarkdownTextObject

from reaper.record.message import AnomalyCause, AnomalyMessage
from reaper.slack.message import CONTEXT_TEXT_MAX, SECTION_TEXT_MAX, Cuts, Message, escape, mention, money

CAUSES_SHOWN = 5


def cause_line(c: AnomalyCause) -> str:
    account = c.linked_account or "—"
    if c.linked_account_name:
        account += f" ({c.linked_account_name})"
    parts = [f"service {c.service or '—'}", f"region {c.region or '—'}", f"usage type {c.usage_type or '—'}", f"account {account}"]
    return escape(" · ".join(parts))


def headline(p: AnomalyMessage) -> str:
    """One line (escaped): what spent more than expected, and by how much."""
    what = f"{p.tag_key} {p.value}" if p.tag_key and p.value else (p.value or "spend")
    return f"Cost anomaly on {escape(what)}: {money(p.impact_usd)} more than expected"


def render(p: AnomalyMessage) -> Message:
    cuts = Cuts()
    when = f"*from* {escape(p.start or '—')} *to* {escape(p.end or '—')}"
    spent = f"*Spent:* {money(p.actual_usd)} · *expected:* {money(p.expected_usd)} · {when}"
    who = f"*Owner:* {mention(p.owner)}" + (f" · *Project:* {escape(p.project)}" if p.project else "")
    causes = "\n".join(f"• {cause_line(c)}" for c in p.causes[:CAUSES_SHOWN]) or "• AWS named no root cause"
    more = f"\n… and {len(p.causes) - CAUSES_SHOWN} more" if len(p.causes) > CAUSES_SHOWN else ""
    body = f":chart_with_upwards_trend: *{headline(p)}*\n{spent}\n{who}"
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=cuts.cut(body, SECTION_TEXT_MAX, "text"))),
        SectionBlock(text=MarkdownTextObject(text=cuts.cut(f"*Root causes (AWS):*\n{causes}{more}", SECTION_TEXT_MAX, "causes"))),
    ]
    context = f"anomaly {escape(p.id)} · account {escape(p.account or '—')}"
    if p.link:
        context += f" · details: {escape(p.link)}"
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=cuts.cut(context, CONTEXT_TEXT_MAX, "context"))]))
    text = cuts.cut(headline(p), 3000, "fallback", note=" …")
    return Message(text=text, blocks=[b.to_dict() for b in blocks], cut=tuple(dict.fromkeys(cuts.parts)))

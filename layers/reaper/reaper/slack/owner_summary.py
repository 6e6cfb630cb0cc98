"""One message per owner per sweep (bot mode): the summary the courier queues, rendered.

`reaper.record.owner_summary.group` folds a sweep's verdicts into one `owner-summary` message per owner. Each
resource still has its own record in the action log; the summary carries the first MAX_ITEMS of
them (an SQS message holds 256 KiB) and the counts and costs of all. `render` lists the first
MAX_LISTED with buttons (Slack allows 50 blocks, 5 elements per actions block), the rest as lines.
"""

from __future__ import annotations

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, ContextBlock, HeaderBlock, SectionBlock
from slack_sdk.models.blocks.basic_components import MarkdownTextObject, PlainTextObject

from reaper.record.message import OwnerSummaryMessage, ResourceLine
from reaper.slack.message import (
    CONTEXT_TEXT_MAX,
    SECTION_TEXT_MAX,
    VERDICT_ICON,
    Cuts,
    Message,
    button_value,
    cost_line,
    escape,
    headline,
    mention,
    money,
)
from reaper.slack.request import STOP_ANYWAY

MAX_LISTED = 20

RESTORABLE = frozenset({"endpoint", "fsx"})

BUTTON_VALUE_MAX = 2000


STORE_USED_GB = "instance_store_used_gb"  # reaper.kinds.ec2.rules: the GB of files on a kept box's instance store


def store_gb(item: ResourceLine) -> float | None:
    """The GB of files on an EC2 box's instance store, for a box kept for them only (Stop anyway), else None."""
    gb = item.evidence.get(STORE_USED_GB)
    if item.kind != "ec2" or str(item.verdict) != "keep" or isinstance(gb, bool) or not isinstance(gb, int | float):
        return None
    return float(gb)


def buttons_for(item: ResourceLine) -> list[tuple[str, str]]:
    """(action_id, label) for what can be asked of this resource from Slack."""
    out = [("reaper:snooze", "Snooze 24 h"), ("reaper:exempt", "Exempt")]
    gb = store_gb(item)
    if item.executed and item.kind in RESTORABLE:
        out.append(("reaper:restore", "Restore"))
    elif item.verdict in ("act", "warn") and not item.executed and item.action:
        out.append(("reaper:stop", "Stop now"))
    elif gb is not None:
        out.append((STOP_ANYWAY, f"Stop anyway (the {gb:,.1f} GB on the instance store is lost)"))
    return out


def render(p: OwnerSummaryMessage) -> Message:
    cuts = Cuts()
    items = p.items
    total = p.total or len(items)
    counts = ", ".join(f"{n} {escape(v)}" for v, n in sorted(p.counts.items()))
    left_out = f" ({p.unpriced} unpriced, not counted)" if p.unpriced else ""
    summary = f"{mention(p.owner)}: {total} of your resources this sweep ({counts}) · {money(p.hourly_usd)}/h in all{left_out}"
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text="mlreaper: your resources")),
        SectionBlock(text=MarkdownTextObject(text=cuts.cut(summary, SECTION_TEXT_MAX, "summary"))),
    ]
    for item in items[:MAX_LISTED]:
        icon = VERDICT_ICON.get(str(item.verdict), "")
        text = f"{icon} *{headline(item)}* · {escape(item.region)}\n{escape(item.reason)}\n{cost_line(item)}"
        blocks.append(SectionBlock(text=MarkdownTextObject(text=cuts.cut(text, SECTION_TEXT_MAX, "item"))))
        gb = store_gb(item)  # Stop anyway carries the figure it shows: the consent covers that much
        value = button_value({"arn": item.arn, "kind": item.kind, **({"gb": gb} if gb is not None else {})})  # all else is read again
        if len(value) <= BUTTON_VALUE_MAX and item.arn:
            blocks.append(
                ActionsBlock(
                    elements=[ButtonElement(text=label, action_id=action_id, value=value) for action_id, label in buttons_for(item)]
                )
            )
    rest = items[MAX_LISTED:]
    if rest:
        lines = "\n".join(f"• {escape(i.kind)} `{escape(i.id)}`: {escape(i.verdict)}" for i in rest)
        blocks.append(SectionBlock(text=MarkdownTextObject(text=cuts.cut(lines, SECTION_TEXT_MAX, "rest"))))
    if total > len(items):
        blocks.append(
            ContextBlock(
                elements=[
                    MarkdownTextObject(text=cuts.cut(f"… and {total - len(items)} more: `reaper log --since 1d`", CONTEXT_TEXT_MAX, "more"))
                ]
            )
        )
    text = cuts.cut(f"mlreaper: {total} of your resources this sweep ({counts})", 3000, "text", note=" …")
    return Message(text=text, blocks=[b.to_dict() for b in blocks[:50]], cut=tuple(dict.fromkeys(cuts.parts)))

"""A budget created, set or not written (reaper.sweep.budget_changes), as the admin channel reads it.

A budget made from a `reaper:budget-usd` tag carries a Confirm button: an admin's click
(reaper.slack.buttons) records the confirmation in the action log, and from then on the budget is
the admin's (it may act at 100 % with BudgetEnforce). The button's value holds the budget's ARN,
its project and the amount shown; the confirmation is for that amount only.
"""

from __future__ import annotations

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, ContextBlock, SectionBlock
from slack_sdk.models.blocks.basic_components import MarkdownTextObject

from reaper.record.message import BudgetChangeMessage
from reaper.slack.message import CONTEXT_TEXT_MAX, FALLBACK_TEXT_MAX, SECTION_TEXT_MAX, Cuts, Message, button_value, escape

CONFIRM = "reaper:confirm-budget"
BUTTON_VALUE_MAX = 2000  # Slack's limit on a button's value
ICON = {"created": ":moneybag:", "set": ":moneybag:", "failed": ":x:"}


def render(p: BudgetChangeMessage) -> Message:
    cuts = Cuts()
    icon = ICON.get(p.what, ":information_source:")
    title = f"Budget {escape(p.id)} · project {escape(p.project)}"
    body = escape(p.reason)
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=cuts.cut(f"{icon} *{title}*\n{body}", SECTION_TEXT_MAX, "text")))]
    value = button_value({"arn": p.arn, "kind": "budget", "project": p.project, "usd": p.usd})
    if p.confirmable and len(value) <= BUTTON_VALUE_MAX:
        blocks.append(ActionsBlock(elements=[ButtonElement(text="Confirm (admins)", action_id=CONFIRM, value=value, style="primary")]))
    context = f"account {escape(p.account)} · budgets are the admin's: the stack's ProjectBudgets, or confirmed here"
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=cuts.cut(context, CONTEXT_TEXT_MAX, "context"))]))
    text = cuts.cut(f"mlreaper budget {escape(p.id)}: {body}", FALLBACK_TEXT_MAX, "fallback", note=" …")  # escaped like the blocks
    return Message(text=text, blocks=[b.to_dict() for b in blocks], cut=tuple(dict.fromkeys(cuts.parts)))

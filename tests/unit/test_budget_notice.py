"""A budget change in the admin channel: what it says, and a Confirm button only for a tag's budget."""

from __future__ import annotations

from typing import Any

from reaper.record.message import Message, from_record
from reaper.slack.bot import BotConfig, SlackBot
from reaper.slack.budget_notice import CONFIRM
from reaper.slack.notifier import render_for


def change(**over: Any) -> Message:
    body = {
        "type": "budget-change",
        "kind": "budget",
        "id": "mlreaper-vision",
        "arn": "arn:aws:budgets::123456789012:budget/mlreaper-vision",
        "account": "123456789012",
        "project": "vision <script>",
        "what": "created",
        "usd": 0.01,
        "origin": "tag",
        "confirmable": True,
        "reason": "created mlreaper-vision at $0.01 a month (a reaper:budget-usd tag). It only notifies until an admin confirms it.",
    }
    return from_record({**body, **over})  # as the notifier reads it


def buttons(blocks: list[dict[str, Any]]) -> list[str]:
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


def test_a_tag_made_budget_has_a_confirm_button_and_its_text_is_escaped() -> None:
    message = render_for(change())
    assert buttons(message.blocks) == [CONFIRM]
    shown = [b["text"]["text"] for b in message.blocks if b["type"] == "section"]
    assert "vision &lt;script&gt;" in shown[0] and "<script>" not in shown[0]  # (the button's value is not shown)


def test_an_admin_set_or_failed_budget_has_no_button() -> None:
    assert buttons(render_for(change(what="set", origin="admin", confirmable=False)).blocks) == []
    assert buttons(render_for(change(what="failed", confirmable=False)).blocks) == []


def test_budget_changes_go_to_the_admin_channel_whoever_owns_the_project() -> None:
    bot = SlackBot.build(BotConfig(bot_token="xoxb-t", admin_channel="C0ADMIN", base_url="http://127.0.0.1:9"))
    assert bot.channel_for(change(owner="U0ANA0001")) == "C0ADMIN"  # (an owner key in the body is not the budget's)

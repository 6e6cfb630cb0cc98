"""Every function's runtime is built in reaper/wiring.py: the outbox that groups per owner is chosen there
(the courier never reads Slack's mode), and the central functions' Slack notice is the typed message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reaper import wiring
from reaper.core.settings import Settings
from reaper.org.settings import change_notice
from reaper.record.message import NoticeMessage
from reaper.record.outbox import GroupedOutbox, QueueOutbox
from reaper.slack.message import Message

LAYER = Path(__file__).resolve().parents[2] / "layers" / "reaper" / "reaper"
QUEUE = "https://sqs.us-east-1.amazonaws.com/123456789012/q"


def test_bot_mode_groups_the_queued_messages_and_webhook_mode_does_not():
    # Given the same queue in each Slack mode
    bot = wiring.build_runtime(Settings(queue_url=QUEUE, slack_mode="bot"), region="us-east-1")
    webhook = wiring.build_runtime(Settings(queue_url=QUEUE, slack_mode="webhook"), region="us-east-1")
    # Then bot mode holds them for one summary per owner, through the same queue; webhook mode sends as they come
    assert isinstance(bot.outbox, GroupedOutbox) and isinstance(bot.outbox.inner, QueueOutbox)
    assert isinstance(webhook.outbox, QueueOutbox)


def test_only_the_settings_and_the_wiring_know_slacks_mode():
    readers = sorted(str(p.relative_to(LAYER)) for p in LAYER.rglob("*.py") if "slack_mode" in p.read_text())
    assert readers == ["core/settings.py", "wiring.py"]


class _Recorder:
    def __init__(self) -> None:
        self.posts: list[tuple[Any, Message]] = []

    def post(self, m: Any, message: Message) -> str:
        self.posts.append((m, message))
        return "C0ADMIN"


def test_a_central_settings_change_is_posted_as_a_notice(monkeypatch):
    # Given the central functions' wiring with a bot, and a change of an OU's settings
    recorder = _Recorder()
    monkeypatch.setattr(wiring.Central, "bot", lambda self: recorder)
    central = wiring.Central(Settings(org_table="org"), wiring.Clients("us-east-1"), None)  # type: ignore[arg-type]
    image = {"pk": {"S": "SET"}, "sk": {"S": "ou#ou-ab12-cdefgh34"}, "modes": {"S": '{"*": "enforce"}'}, "version": {"N": "1"}}
    notice = change_notice("INSERT", None, image, "111111111111")
    # When it is posted
    central.post(notice)
    # Then Slack got the typed notice, rendered with its title
    [(m, message)] = recorder.posts
    assert isinstance(m, NoticeMessage) and m.title == notice.title
    assert notice.title in message.text

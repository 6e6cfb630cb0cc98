"""The CLI's outlets when no queue is configured: post to Slack now (webhook or bot)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from reaper.record.message import Message, NoticeMessage, OwnerSummaryMessage, VerdictMessage
from reaper.slack import post
from reaper.slack.bot import SlackBot
from reaper.slack.render import render_for
from reaper.slack.webhook import redact


class DirectSlack:
    """The CLI's path when only a webhook is set: post now, say on stderr what failed."""

    def __init__(self, webhook_url: str, policy: post.PostPolicy | None = None) -> None:
        self.webhook_url = webhook_url
        self.policy = policy or post.PostPolicy()

    def send(self, messages: Sequence[Message]) -> dict[int, str]:
        problems: dict[int, str] = {}
        for n, m in enumerate(messages):
            try:
                post.post(self.webhook_url, m, self.policy)
            except post.SlackUnconfirmed as exc:  # probably posted: not a problem to repeat
                print(redact(f"Slack message for {m.subject}: {exc}", self.webhook_url), file=sys.stderr)
            except post.SlackPostError as exc:
                # returned, not printed: the courier reports each problem once (and makes it the resource's error)
                problems[n] = redact(f"Slack message for {m.subject} not posted: {exc}", self.webhook_url)
        return problems


class DirectBot:
    """The CLI's path in bot mode (the secret holds a bot token): post now, to the owner."""

    def __init__(self, bot: SlackBot) -> None:
        self.bot = bot

    def send(self, messages: Sequence[Message]) -> dict[int, str]:
        problems: dict[int, str] = {}
        for n, m in enumerate(messages):
            whom = (m.owner if isinstance(m, VerdictMessage | NoticeMessage | OwnerSummaryMessage) else None) or m.subject
            try:
                self.bot.post(m, render_for(m))
            except post.SlackUnconfirmed as exc:  # probably posted: not a problem to repeat
                print(f"Slack message for {whom}: {exc}", file=sys.stderr)
            except post.SlackPostError as exc:
                problems[n] = f"Slack message for {whom} not posted: {exc} (the action log keeps the record)"
                print(problems[n], file=sys.stderr)
        return problems

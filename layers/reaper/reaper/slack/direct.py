"""The CLI's outlets when no queue is configured: post to Slack now (webhook or bot)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from reaper.slack import post as slack
from reaper.slack.webhook import redact


class DirectSlack:
    """The CLI's path when only a webhook is set: post now, say on stderr what failed."""

    def __init__(self, webhook_url: str, policy: slack.PostPolicy | None = None) -> None:
        self.webhook_url = webhook_url
        self.policy = policy or slack.PostPolicy()

    def send(self, payloads: Sequence[dict[str, Any]]) -> dict[int, str]:
        problems: dict[int, str] = {}
        for n, p in enumerate(payloads):
            try:
                slack.post(self.webhook_url, p, self.policy)
            except slack.SlackUnconfirmed as exc:  # probably posted: not a problem to repeat
                print(redact(f"Slack message for {p.get('kind')} {p.get('id')}: {exc}", self.webhook_url), file=sys.stderr)
            except slack.SlackPostError as exc:
                # returned, not printed: the courier reports each problem once (and makes it the resource's error)
                problems[n] = redact(f"Slack message for {p.get('kind')} {p.get('id')} not posted: {exc}", self.webhook_url)
        return problems


class DirectBot:
    """The CLI's path in bot mode (the secret holds a bot token): post now, to the owner."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot  # reaper.slack.bot.SlackBot

    def send(self, payloads: Sequence[dict[str, Any]]) -> dict[int, str]:
        from reaper.slack.notifier import render_for

        problems: dict[int, str] = {}
        for n, p in enumerate(payloads):
            try:
                self.bot.post(p, render_for(p))
            except slack.SlackUnconfirmed as exc:  # probably posted: not a problem to repeat
                print(f"Slack message for {p.get('owner') or p.get('id')}: {exc}", file=sys.stderr)
            except slack.SlackPostError as exc:
                problems[n] = f"Slack message for {p.get('owner') or p.get('id')} not posted: {exc} (the action log keeps the record)"
                print(problems[n], file=sys.stderr)
        return problems

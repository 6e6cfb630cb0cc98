"""Wiring: settings + clients + action log + outbox, built once and handed to the pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import boto3

from reaper.aws.clients import Clients, default_region
from reaper.core.errors import ConfigError
from reaper.core.settings import Settings
from reaper.record.actionlog import ActionLog
from reaper.record.outbox import DirectBot, DirectSlack, NoOutbox, Outbox, QueueOutbox
from reaper.slack.bot import SlackBot, bot_from_secret
from reaper.slack.webhook import validated, webhook_from_secret


@dataclass
class Runtime:
    settings: Settings
    home_region: str
    session: boto3.session.Session | None = None
    log: ActionLog | None = None
    outbox: Outbox = field(default_factory=NoOutbox)
    _clients: dict[str, Clients] = field(default_factory=dict)

    def clients(self, region: str | None = None) -> Clients:
        region = region or self.home_region
        if region not in self._clients:
            self._clients[region] = Clients(region, self.session)
        return self._clients[region]

    @property
    def regions(self) -> tuple[str, ...]:
        return self.settings.regions or (self.home_region,)

    @classmethod
    def build(cls, settings: Settings, session: boto3.session.Session | None = None, region: str | None = None) -> Runtime:
        home = region or (settings.regions[0] if settings.regions else None) or default_region(session)
        if not home:
            raise ConfigError("no AWS region: set AWS_REGION or pass --region")
        rt = cls(settings=settings, home_region=home, session=session)
        if settings.table:
            rt.log = ActionLog(rt.clients()("dynamodb"), settings.table)
        if settings.queue_url:
            rt.outbox = QueueOutbox(rt.clients()("sqs"), settings.queue_url)
        elif settings.slack_webhook_url:
            rt.outbox = DirectSlack(validated(settings.slack_webhook_url))
        elif settings.slack_secret_arn:
            text = read_secret(rt.clients()("secretsmanager"), settings.slack_secret_arn)
            bot = bot_from_secret(text)
            if bot is not None:
                rt.outbox = DirectBot(SlackBot.build(bot))
                rt.settings = settings.replace(slack_mode="bot")
            elif url := webhook_from_secret(text):
                rt.outbox = DirectSlack(url)
        return rt


def read_secret(secretsmanager: Any, secret_id: str) -> str:
    """The secret as stored (a bare URL, JSON with a `url` key, or the stack's placeholder)."""
    value: str = secretsmanager.get_secret_value(SecretId=secret_id).get("SecretString", "")
    return value.strip()

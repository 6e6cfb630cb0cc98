"""The one place a runtime is built: settings, clients, the action log, and where messages go.

The sweep and the kinds see only `Runtime` and its `Outbox` protocol; the Slack outlets are chosen
here, above them, so nothing below the sweep imports Slack.
"""

from __future__ import annotations

import os
from typing import Any

import boto3

from reaper.aws.clients import Clients, default_region
from reaper.aws.pricing import Pricer, TablePriceStore
from reaper.core.errors import ConfigError
from reaper.core.settings import Settings
from reaper.record.actionlog import ActionLog
from reaper.record.central_settings import CentralSettingsReader
from reaper.record.forward import Forwarder
from reaper.record.outbox import QueueOutbox
from reaper.record.runtime import Runtime
from reaper.slack.bot import SlackBot, bot_from_secret
from reaper.slack.direct import DirectBot, DirectSlack
from reaper.slack.webhook import validated, webhook_from_secret


def build_runtime(settings: Settings, session: boto3.session.Session | None = None, region: str | None = None) -> Runtime:
    home = region or (settings.regions[0] if settings.regions else None) or default_region(session)
    if not home:
        raise ConfigError("no AWS region: set AWS_REGION or pass --region")
    rt = Runtime(settings=settings, home_region=home, session=session, pricer=build_pricer(settings, session, home))
    if settings.table:
        rt.log = ActionLog(rt.clients()("dynamodb"), settings.table)
    if settings.central_event_bus_arn and rt.log is not None:
        function = os.environ.get("AWS_LAMBDA_FUNCTION_NAME")  # set by Lambda; absent on a laptop
        bus_region = settings.central_event_bus_arn.split(":")[3]  # PutEvents is sent to the bus's own region
        rt.forwarder = Forwarder(rt.clients(bus_region)("events"), settings.central_event_bus_arn, function)
        rt.log.copy_to = rt.forwarder.add
    if settings.central_settings_table_arn and settings.account_id:
        table_region = settings.central_settings_table_arn.split(":")[3]  # read in the table's own region
        rt.central_settings = CentralSettingsReader(
            rt.clients(table_region)("dynamodb"), settings.central_settings_table_arn, settings.account_id, settings.central_settings
        )
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


def build_pricer(settings: Settings, session: boto3.session.Session | None, home: str) -> Pricer:
    """One Pricer for every kind and region (docs/prices.md): the Price List API in its own region, cached in
    the action-log table when there is one; the shipped copy alone when LivePrices is off."""
    if not settings.live_prices:
        return Pricer.shipped_only()
    session = session or boto3.session.Session()
    store = TablePriceStore(Clients(home, session, Pricer.shipped_only())("dynamodb"), settings.table) if settings.table else None
    return Pricer.for_session(session, settings.pricing_region, store)


def read_secret(secretsmanager: Any, secret_id: str) -> str:
    """The secret as stored (a bare URL, JSON with a `url` key, or the stack's placeholder)."""
    value: str = secretsmanager.get_secret_value(SecretId=secret_id).get("SecretString", "")
    return value.strip()

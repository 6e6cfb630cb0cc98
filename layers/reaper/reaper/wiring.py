"""The one place every function's runtime is built: settings, clients, the action log, and where messages go.

The sweep and the kinds see only `Runtime` and its `Outbox` protocol; the Slack outlets are chosen
here, above them, so nothing below the sweep imports Slack. Each function in functions/<name>/app.py
calls one builder here at cold start (settings validated once) and one handler below it per event:
`kind_runtime` (the eight kinds' functions and restore), `interactions`, `notifier`, and `central`
(the organisation's three central functions: docs/deploy-organisation.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import boto3

from reaper import kinds
from reaper.aws import anomalies, discounts
from reaper.aws.clients import RETRY_CONFIG, Clients, default_region
from reaper.aws.pricing import Pricer, TablePriceStore
from reaper.core.errors import ConfigError
from reaper.core.settings import Settings
from reaper.kinds.bedrock_pt.settings import BedrockPtSettings
from reaper.kinds.endpoint import usage
from reaper.org.settings import AccountsUnder, organizations_accounts_under
from reaper.record.actionlog import ActionLog
from reaper.record.forward import Forwarder
from reaper.record.message import NoticeMessage
from reaper.record.org_settings_reader import CentralSettingsReader
from reaper.record.outbox import GroupedOutbox, QueueOutbox
from reaper.record.runtime import Runtime
from reaper.report import units
from reaper.slack.anomaly_alerts import AnomalyAlerts
from reaper.slack.bot import SlackBot, bot_from_secret, cached_bot, secret_bot
from reaper.slack.direct import DirectBot, DirectSlack
from reaper.slack.message import render_message
from reaper.slack.notifier import Notifier
from reaper.slack.webhook import WebhookConfigError, validated, webhook_from_secret

FALLBACK_REGION = "us-east-1"  # a function's clients when Lambda names no region (never in AWS itself)


def kind_runtime(*kind_names: str) -> Runtime:
    """A kind's function (or restore's): validated once at cold start, so a bad configuration fails the
    deployment's first call loudly. The named kinds are imported now, in the init phase, not on the first event."""
    for name in kind_names:
        kinds.get(name)
    return build_runtime(Settings.from_env())


def build_runtime(settings: Settings, session: boto3.session.Session | None = None, region: str | None = None) -> Runtime:
    home = region or (settings.regions[0] if settings.regions else None) or default_region(session)
    if not home:
        raise ConfigError("no AWS region: set AWS_REGION or pass --region")
    kinds.check_settings(settings)  # each kind's own settings (kinds/<kind>/settings.py) read now, loudly
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
        queue = QueueOutbox(rt.clients()("sqs"), settings.queue_url)
        rt.outbox = GroupedOutbox(queue) if settings.slack_mode == "bot" else queue  # the notifier posts per owner
    elif settings.slack_webhook_url:
        rt.outbox = DirectSlack(validated(settings.slack_webhook_url))
    elif settings.slack_secret_arn:
        text = read_secret(rt.clients()("secretsmanager"), settings.slack_secret_arn)
        bot = bot_from_secret(text)
        if bot is not None:
            rt.outbox = GroupedOutbox(DirectBot(SlackBot.build(bot)))
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


def function_clients() -> Clients:
    """The clients of a function outside the sweep, in its own region."""
    return Clients(default_region() or FALLBACK_REGION)


@dataclass(frozen=True)
class SlackSecret:
    """The Slack secret a function is given, read through Powertools Parameters (cached 5 minutes)."""

    arn: str

    def text(self) -> str:
        try:
            from aws_lambda_powertools.utilities import parameters

            value = parameters.get_secret(self.arn, max_age=300)
        except Exception as exc:  # noqa: BLE001 - missing secret, no permission: a configuration problem, counted
            raise WebhookConfigError(f"the Slack secret cannot be read: {type(exc).__name__}") from None
        if isinstance(value, bytes):  # a SecretBinary
            value = value.decode("utf-8", errors="replace")
        return str(value)

    def webhook_url(self) -> str | None:
        """The URL from the secret, None when Slack is off."""
        return webhook_from_secret(self.text()) if self.arn else None

    def bot(self) -> SlackBot | None:
        """Bot mode when the secret holds a bot token; one SlackBot per secret value, so its e-mail cache lives on."""
        return cached_bot(self.text()) if self.arn else None


def notifier(settings: Settings) -> Notifier:
    """The notifier: the queue's messages to Slack, the daily digest (its CloudWatch client made when the
    daily schedule first fires, not at every cold start; docs/slack.md)."""
    clients = function_clients()
    secret = SlackSecret(settings.slack_secret_arn or "")

    def savings_after_commitments(now: datetime) -> discounts.Discounts:
        """DiscountAwareSavings=on: the digest's Cost Explorer coverage read (its endpoint is in us-east-1)."""
        return discounts.read(Clients(discounts.CE_REGION)("ce"), None, now.date())

    pricer = build_pricer(settings, None, clients.region)  # the digest's unit costs; no request until the digest asks

    def unit_costs_line(now: datetime) -> str | None:
        """The digest's unit-cost line, for this account in the notifier's region (reaper/report/units.py), priced as
        the CLI prices it: the Price List API (cached in the action log) or the shipped copy (docs/prices.md)."""
        prices = units.price_book(pricer, settings.of(BedrockPtSettings).model_unit_hourly_usd)
        found = units.read(clients("sagemaker"), clients("cloudwatch"), clients.region, now, prices, bedrock=clients("bedrock"))
        return units.digest_line(found)

    def rightsize_line(now: datetime) -> str | None:
        """The digest's right-size advice for this region's endpoints (docs/kinds/endpoint.md#right-size-advice): one
        Search, one GetMetricData batch, a configuration for each endpoint its week may advise; advice, never an action."""
        priced = Clients(clients.region, pricer=pricer)
        return usage.digest_line(usage.advise_region(priced, usage.targets_from_search(priced, now), now))

    return Notifier(
        webhook=secret.webhook_url,
        log=ActionLog(clients("dynamodb"), settings.table) if settings.table else None,
        bot=secret.bot,
        cloudwatch=lambda: clients("cloudwatch"),
        discounts=savings_after_commitments if settings.discounts else None,
        # DigestBill=on only: the digest reads the day's bill (granted ce:GetCostAndUsage only then: template.yaml)
        cost_explorer=(lambda: clients("ce")) if settings.digest_bill else None,
        anomalies=anomaly_alerts(settings, clients),
        units=unit_costs_line,
        advice=rightsize_line,
    )


def anomaly_alerts(settings: Settings, clients: Clients) -> AnomalyAlerts | None:
    """AnomalyAlerts=on: Cost Explorer's one endpoint, and this account's tags for a project's owner."""
    if not settings.anomaly_topic_arn:
        return None
    return AnomalyAlerts(
        topic_arn=settings.anomaly_topic_arn,
        ce=lambda: Clients(anomalies.CE_REGION)("ce"),
        tagging=lambda: clients("resourcegroupstaggingapi"),
        threshold_usd=settings.anomaly_threshold_usd,
    )


Invoke = Callable[[str, Mapping[str, object]], None]


@dataclass(frozen=True)
class Interactions:
    """The member's Slack endpoint: a runtime that posts nothing through the queue itself, the bot, and
    where a Stop now or a Restore click goes (each function answers in the thread itself)."""

    runtime: Runtime
    secret_arn: str
    invoke: Invoke

    def bot(self) -> SlackBot | None:
        return secret_bot(self.secret_arn)


def interactions(settings: Settings) -> Interactions:
    runtime = build_runtime(settings.replace(queue_url=None, slack_secret_arn=None, central_event_bus_arn=None))
    targets = click_targets(os.environ.get("REAPER_CLICK_TARGETS", ""))
    lambda_ = boto3.client("lambda", config=RETRY_CONFIG)

    def invoke(target: str, event: Mapping[str, object]) -> None:
        """Asynchronously: Slack's 3 seconds are too short for a stop or a restore."""
        lambda_.invoke(FunctionName=targets[target], InvocationType="Event", Payload=json.dumps(event).encode())

    return Interactions(runtime, settings.slack_secret_arn or "", invoke)


def click_targets(text: str) -> dict[str, str]:
    """REAPER_CLICK_TARGETS: "notebook=<function arn>,...,restore=<function arn>" (the template fills it)."""
    pairs = (p.split("=", 1) for p in text.split(",") if "=" in p)
    found = {k.strip(): v.strip() for k, v in pairs}
    if not found and os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        raise ConfigError("REAPER_CLICK_TARGETS is empty: Stop now and Restore have nowhere to go")
    return found


@dataclass(frozen=True)
class Central:
    """What the organisation's central functions run with (docs/deploy-organisation.md): settings, clients
    in the function's region, the organisation's action log, and the central Slack bot."""

    settings: Settings
    clients: Clients
    log: ActionLog  # the organisation's table (REAPER_ORG_TABLE): each entry names its account

    @property
    def table(self) -> str:
        return self.settings.org_table or ""

    def bot(self) -> SlackBot | None:
        return secret_bot(self.settings.slack_secret_arn)

    def post(self, notice: NoticeMessage) -> None:
        """The change notice to the central admin channel (a notice has no owner), rendered like every notice."""
        slack = self.bot()
        if slack is not None:
            slack.post(notice, render_message(notice))

    def digest(self) -> Notifier:
        """The member notifier's digest, read from the organisation's table."""
        # DigestBill=on: the digest's line against the organisation's bill (Cost Explorer grouped by LINKED_ACCOUNT,
        # read once a day and kept in the organisation's table; docs/bill.md)
        return Notifier(
            webhook=lambda: None,
            log=self.log,
            bot=self.bot,
            cost_explorer=(lambda: self.clients("ce")) if self.settings.digest_bill else None,
            bill_org=True,
        )

    def accounts_under(self) -> AccountsUnder:
        return organizations_accounts_under(self.clients("organizations"))


def central(settings: Settings) -> Central:
    clients = function_clients()
    return Central(settings, clients, ActionLog(clients("dynamodb"), settings.org_table or ""))

"""Slack notifier: SQS messages in, Block Kit messages out; failures go back to the queue."""

from datetime import datetime
from typing import Any

from aws_lambda_powertools.utilities import parameters

from reaper.aws import anomalies, discounts
from reaper.aws.clients import Clients, default_region
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.kinds.endpoint import usage as endpoint_usage
from reaper.record.actionlog import ActionLog
from reaper.report import units as unit_costs
from reaper.slack.anomaly_alerts import AnomalyAlerts
from reaper.slack.bot import SlackBot, cached_bot
from reaper.slack.notifier import Notifier
from reaper.slack.webhook import WebhookConfigError, webhook_from_secret
from reaper.wiring import build_pricer

SETTINGS = Settings.from_env()  # validated once, at cold start
SECRET_ARN = SETTINGS.slack_secret_arn or ""
CLIENTS = Clients(default_region() or "us-east-1")
LOG = ActionLog(CLIENTS("dynamodb"), SETTINGS.table) if SETTINGS.table else None
PRICER = build_pricer(SETTINGS, None, CLIENTS.region)  # the digest's unit costs; no request until the digest asks


def secret_text() -> str:
    """The secret as stored (cached 5 minutes by Powertools Parameters)."""
    try:
        value = parameters.get_secret(SECRET_ARN, max_age=300)
    except Exception as exc:  # noqa: BLE001 - missing secret, no permission: a configuration problem, counted
        raise WebhookConfigError(f"the Slack secret cannot be read: {type(exc).__name__}") from None
    if isinstance(value, bytes):  # a SecretBinary
        value = value.decode("utf-8", errors="replace")
    return str(value)


def webhook_url() -> str | None:
    """The URL from the secret, None when Slack is off."""
    return webhook_from_secret(secret_text()) if SECRET_ARN else None


def bot() -> SlackBot | None:
    """Bot mode when the secret holds a bot token; one SlackBot per secret value, so its e-mail cache lives on."""
    if not SECRET_ARN:
        return None
    text = secret_text()
    return cached_bot(text)


def savings_after_commitments(now: datetime) -> discounts.Discounts:
    """DiscountAwareSavings=on: the digest's Cost Explorer coverage read (its endpoint is in us-east-1)."""
    return discounts.read(Clients(discounts.CE_REGION)("ce"), None, now.date())


def unit_costs_line(now: datetime) -> str | None:
    """The digest's unit-cost line, for this account in the notifier's region (reaper/report/units.py), priced as
    the CLI prices it: the Price List API (cached in the action log) or the shipped copy (docs/prices.md)."""
    prices = unit_costs.price_book(PRICER, SETTINGS.bedrock_model_unit_hourly_usd)
    found = unit_costs.read(CLIENTS("sagemaker"), CLIENTS("cloudwatch"), CLIENTS.region, now, prices, bedrock=CLIENTS("bedrock"))
    return unit_costs.digest_line(found)


def rightsize_line(now: datetime) -> str | None:
    """The digest's right-size advice for this region's endpoints (docs/kinds/endpoint.md#right-size-advice): one
    Search, one GetMetricData batch, a configuration for each endpoint its week may advise; advice, never an action."""
    clients = Clients(CLIENTS.region, pricer=PRICER)
    return endpoint_usage.digest_line(endpoint_usage.advise_region(clients, endpoint_usage.targets_from_search(clients, now), now))


# AnomalyAlerts=on: Cost Explorer's one endpoint, and this account's tags for a project's owner
ALERTS = (
    AnomalyAlerts(
        topic_arn=SETTINGS.anomaly_topic_arn,
        ce=lambda: Clients(anomalies.CE_REGION)("ce"),
        tagging=lambda: CLIENTS("resourcegroupstaggingapi"),
        threshold_usd=SETTINGS.anomaly_threshold_usd,
    )
    if SETTINGS.anomaly_topic_arn
    else None
)

# the CloudWatch client is made when the daily schedule first fires, not at every cold start
# DigestBill=on only: the digest reads the day's bill (granted ce:GetCostAndUsage only then: template.yaml)
NOTIFIER = Notifier(
    webhook=webhook_url,
    log=LOG,
    bot=bot,
    cloudwatch=lambda: CLIENTS("cloudwatch"),
    discounts=savings_after_commitments if SETTINGS.discounts else None,
    cost_explorer=(lambda: CLIENTS("ce")) if SETTINGS.digest_bill else None,
    anomalies=ALERTS,
    units=unit_costs_line,
    advice=rightsize_line,
)


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return NOTIFIER.handle(event, context)

"""The organisation's central function: member records in (EventBridge), the daily digest across accounts out."""

from typing import Any

from aws_lambda_powertools.utilities import parameters

from reaper.aws.clients import Clients, default_region
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.org import central
from reaper.record.actionlog import ActionLog
from reaper.slack.bot import SlackBot, cached_bot
from reaper.slack.notifier import Notifier

SETTINGS = Settings.from_env()  # validated once, at cold start
ORG_TABLE = SETTINGS.org_table or ""
CLIENTS = Clients(default_region() or "us-east-1")
SECRET_ARN = SETTINGS.slack_secret_arn or ""


def bot() -> SlackBot | None:
    if not SECRET_ARN:
        return None
    value = parameters.get_secret(SECRET_ARN, max_age=300)
    return cached_bot(value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value))


# the digest is the member notifier's, read from the organisation's table (each entry names its account)
DIGEST = Notifier(webhook=lambda: None, log=ActionLog(CLIENTS("dynamodb"), ORG_TABLE), bot=bot)


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if event.get("detail-type") == "Scheduled Event":
        return DIGEST.post_daily_digest()
    return central.take(CLIENTS("dynamodb"), ORG_TABLE, event)

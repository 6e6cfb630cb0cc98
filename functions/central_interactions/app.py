"""The central account's Slack endpoint: Stop now clicked in the digest across accounts, posted by Slack to
this function's URL (signed, checked here), handed to the member account's own gate (reaper.org.interactions)."""

from datetime import UTC, datetime
from typing import Any

from reaper.aws.clients import Clients, default_region
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.org.click import boto_lambda_for
from reaper.org.interactions import handle_central_request
from reaper.record.actionlog import ActionLog
from reaper.slack.bot import secret_bot

SETTINGS = Settings.from_env()  # validated once, at cold start
CLIENTS = Clients(default_region() or "us-east-1")
ORG_LOG = ActionLog(CLIENTS("dynamodb"), SETTINGS.org_table) if SETTINGS.org_table else None


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle_central_request(event, ORG_LOG, secret_bot(SETTINGS.slack_secret_arn), datetime.now(UTC), CLIENTS("sts"), boto_lambda_for)

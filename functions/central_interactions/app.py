"""The central account's Slack endpoint: Stop now clicked in the digest across accounts, posted by Slack to
this function's URL (signed, checked here), handed to the member account's own gate (reaper.org.interactions)."""

from datetime import UTC, datetime
from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.org.click import boto_lambda_for
from reaper.org.interactions import handle_central_request
from reaper.slack.interactions import HttpResponse

CENTRAL = wiring.central(Settings.from_env())  # validated once, at cold start
ORG_LOG = CENTRAL.log if CENTRAL.table else None


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> HttpResponse:
    return handle_central_request(event, ORG_LOG, CENTRAL.bot(), datetime.now(UTC), CENTRAL.clients("sts"), boto_lambda_for)

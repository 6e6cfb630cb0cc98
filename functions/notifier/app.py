"""Slack notifier: SQS messages in, Block Kit messages out; failures go back to the queue."""

import os
from typing import Any

from aws_lambda_powertools.utilities import parameters

from reaper.notifier import handle_queue_batch
from reaper.observability import logger, metrics

SECRET_ARN = os.environ.get("REAPER_SLACK_SECRET_ARN", "")


def webhook_url() -> str:
    if not SECRET_ARN:
        return ""
    value = str(parameters.get_secret(SECRET_ARN, max_age=300) or "").strip()
    return value if value.startswith(("https://", "http://")) else ""  # the stack's placeholder: Slack is off


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle_queue_batch(event, webhook_url)

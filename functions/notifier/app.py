"""Slack notifier: SQS messages in, Block Kit messages out; failures go back to the queue."""

from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.slack.notifier import NotifierResult

NOTIFIER = wiring.notifier(Settings.from_env())  # validated once, at cold start


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> NotifierResult:
    return NOTIFIER.handle(event, context)

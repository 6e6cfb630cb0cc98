"""Slack interactions: button clicks, posted by Slack to this function's URL (signed, checked here)."""

from datetime import UTC, datetime
from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.slack.interactions import HttpResponse, handle_request

INTERACTIONS = wiring.interactions(Settings.from_env())  # validated once, at cold start


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> HttpResponse:
    return handle_request(event, INTERACTIONS.runtime, INTERACTIONS.bot(), datetime.now(UTC), INTERACTIONS.invoke)

"""Slack interactions: button clicks, posted by Slack to this function's URL (signed, checked here)."""

import json
import os
from datetime import UTC, datetime
from typing import Any

import boto3

from reaper.aws.clients import RETRY_CONFIG
from reaper.core.errors import ConfigError
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.slack.bot import SlackBot, secret_bot
from reaper.slack.interactions import handle_request
from reaper.wiring import build_runtime

SETTINGS = Settings.from_env()  # validated once, at cold start
RUNTIME = build_runtime(
    SETTINGS.replace(queue_url=None, slack_secret_arn=None, central_event_bus_arn=None)
)  # it posts nothing through the queue itself
SECRET_ARN = SETTINGS.slack_secret_arn or ""
LAMBDA = boto3.client("lambda", config=RETRY_CONFIG)


def _targets(text: str) -> dict[str, str]:
    """REAPER_CLICK_TARGETS: "notebook=<function arn>,...,restore=<function arn>" (the template fills it)."""
    pairs = (p.split("=", 1) for p in text.split(",") if "=" in p)
    found = {k.strip(): v.strip() for k, v in pairs}
    if not found and os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        raise ConfigError("REAPER_CLICK_TARGETS is empty: Stop now and Restore have nowhere to go")
    return found


TARGETS = _targets(os.environ.get("REAPER_CLICK_TARGETS", ""))


def bot() -> SlackBot | None:
    return secret_bot(SECRET_ARN)


def invoke(target: str, event: dict[str, Any]) -> None:
    """Asynchronously: Slack's 3 seconds are too short for a stop or a restore; each answers in the thread itself."""
    LAMBDA.invoke(FunctionName=TARGETS[target], InvocationType="Event", Payload=json.dumps(event).encode())


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle_request(event, RUNTIME, bot(), datetime.now(UTC), invoke)

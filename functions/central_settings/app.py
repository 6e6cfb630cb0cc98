"""The organisation's central settings function: a change of a per-account or per-OU setting in (the
settings table's stream), posted and logged, and every account's effective settings brought in line;
hourly, the same reconcile (an account moved into an OU gets that OU's settings)."""

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.utilities import parameters

from reaper.aws.clients import Clients, default_region
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.org import settings_changes
from reaper.org.settings import organizations_accounts_under
from reaper.record.actionlog import ActionLog
from reaper.record.message import NoticeMessage
from reaper.slack.bot import SlackBot, cached_bot
from reaper.slack.message import render_message

SETTINGS = Settings.from_env()  # validated once, at cold start
CLIENTS = Clients(default_region() or "us-east-1")
ORG_LOG = ActionLog(CLIENTS("dynamodb"), SETTINGS.org_table or "")
ACCOUNTS_UNDER = organizations_accounts_under(CLIENTS("organizations"))


def bot() -> SlackBot | None:
    if not SETTINGS.slack_secret_arn:
        return None
    value = parameters.get_secret(SETTINGS.slack_secret_arn, max_age=300)
    return cached_bot(value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value))


def post(notice: NoticeMessage) -> None:
    """The change notice to the central admin channel (a notice has no owner), rendered like every notice."""
    slack = bot()
    if slack is not None:
        slack.post(notice, render_message(notice))


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = settings_changes.handle(
        event,
        CLIENTS("dynamodb"),
        SETTINGS.org_settings_table or "",
        ORG_LOG,
        ACCOUNTS_UNDER,
        post,
        SETTINGS.account_id or "",
        datetime.now(UTC),
    )
    logger.info("central settings reconciled", extra=result)
    return result

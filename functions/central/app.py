"""The organisation's central function: member records in (EventBridge), the daily digest across accounts out."""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from reaper.aws.clients import Clients, default_region
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.org import central, click
from reaper.record.actionlog import ActionLog
from reaper.slack.bot import SlackBot, secret_bot
from reaper.slack.buttons import STOP_DETAIL_TYPE, STOP_SOURCE
from reaper.slack.notifier import Notifier

SETTINGS = Settings.from_env()  # validated once, at cold start
ORG_TABLE = SETTINGS.org_table or ""
CLIENTS = Clients(default_region() or "us-east-1")
SECRET_ARN = SETTINGS.slack_secret_arn or ""


def bot() -> SlackBot | None:
    return secret_bot(SECRET_ARN)


# the digest is the member notifier's, read from the organisation's table (each entry names its account)
ORG_LOG = ActionLog(CLIENTS("dynamodb"), ORG_TABLE)
# DigestBill=on: the digest's line against the organisation's bill (Cost Explorer grouped by LINKED_ACCOUNT, read
# once a day and kept in the organisation's table; docs/bill.md)
DIGEST = Notifier(
    webhook=lambda: None,
    log=ORG_LOG,
    bot=bot,
    cost_explorer=(lambda: CLIENTS("ce")) if SETTINGS.digest_bill else None,
    bill_org=True,
)


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> Mapping[str, object]:
    if event.get("detail-type") == "Scheduled Event":
        return DIGEST.post_daily_digest()
    if event.get("source") == STOP_SOURCE and event.get("detail-type") == STOP_DETAIL_TYPE:  # a click, forwarded only
        return click.stop_from_log(ORG_LOG, CLIENTS("sts"), click.boto_lambda_for, event, datetime.now(UTC))
    return central.take(CLIENTS("dynamodb"), ORG_TABLE, event)

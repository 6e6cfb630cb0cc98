"""The organisation's central function: member records in (EventBridge), the daily digest across accounts out."""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.org import central, click
from reaper.slack.buttons import STOP_DETAIL_TYPE, STOP_SOURCE

CENTRAL = wiring.central(Settings.from_env())  # validated once, at cold start
DIGEST = CENTRAL.digest()  # the member notifier's, read from the organisation's table (each entry names its account)


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> Mapping[str, object]:
    if event.get("detail-type") == "Scheduled Event":
        return DIGEST.post_daily_digest()
    if event.get("source") == STOP_SOURCE and event.get("detail-type") == STOP_DETAIL_TYPE:  # a click, forwarded only
        return click.stop_from_log(CENTRAL.log, CENTRAL.clients("sts"), click.boto_lambda_for, event, datetime.now(UTC))
    return central.take(CENTRAL.clients("dynamodb"), CENTRAL.table, event)

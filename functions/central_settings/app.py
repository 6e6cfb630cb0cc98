"""The organisation's central settings function: a change of a per-account or per-OU setting in (the
settings table's stream), posted and logged, and every account's effective settings brought in line;
hourly, the same reconcile (an account moved into an OU gets that OU's settings)."""

from datetime import UTC, datetime
from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.settings import Settings
from reaper.org import settings_changes

CENTRAL = wiring.central(Settings.from_env())  # validated once, at cold start
ACCOUNTS_UNDER = CENTRAL.accounts_under()


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> settings_changes.SettingsRun:
    settings = CENTRAL.settings
    result = settings_changes.handle(
        event,
        CENTRAL.clients("dynamodb"),
        settings.org_settings_table or "",
        CENTRAL.log,
        ACCOUNTS_UNDER,
        CENTRAL.post,
        settings.account_id or "",
        datetime.now(UTC),
    )
    logger.info("central settings reconciled", extra=result)
    return result

"""Restore function: does what `reaper restore NAME` does, for {"name": "..."}.

Invoked by the off-hours schedules (start of working hours) and, later, by the Slack button.
"""

from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.restore.request import RestoreAnswer, handle_restore_request

RUNTIME = wiring.kind_runtime("endpoint", "fsx")  # the kinds that can restore


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> RestoreAnswer:
    return handle_restore_request(event, RUNTIME)

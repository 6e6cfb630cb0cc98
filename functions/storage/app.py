"""Storage function: scheduled sweeps of the storage left behind (docs/kinds/storage.md)."""

from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.results import HandlerResult
from reaper.handlers import handle_kind_event

RUNTIME = wiring.kind_runtime("storage")


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> HandlerResult:
    return handle_kind_event(event, "storage", RUNTIME, context=context)

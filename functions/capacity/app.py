"""Capacity function: hourly sweeps of capacity reservations, Capacity Blocks and training plans; AWS Health
underutilisation notices (a reason to re-judge, never proof) and Capacity Block expiry warnings."""

from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.results import HandlerResult
from reaper.handlers import handle_kind_event

RUNTIME = wiring.kind_runtime("capacity")


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> HandlerResult:
    return handle_kind_event(event, "capacity", RUNTIME, context=context)

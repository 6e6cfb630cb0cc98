"""Bedrock Provisioned Throughput function: scheduled sweeps (idle no-commitment ones deleted with a restore
record; committed ones reported before renewal)."""

from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.results import HandlerResult
from reaper.handlers import handle_kind_event

RUNTIME = wiring.kind_runtime("bedrock-pt")


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> HandlerResult:
    return handle_kind_event(event, "bedrock-pt", RUNTIME, context=context)

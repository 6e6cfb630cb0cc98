"""Training-job function: scheduled sweeps (ceilings, divergence, GPU advice) every 5 minutes,
and SageMaker Training Job State Change events (checks at submission, final cost record)."""

from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.results import HandlerResult
from reaper.handlers import handle_kind_event

RUNTIME = wiring.kind_runtime("training-job")


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> HandlerResult:
    return handle_kind_event(event, "training-job", RUNTIME, context=context)

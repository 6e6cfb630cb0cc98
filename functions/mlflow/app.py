"""MLflow tracking server function: scheduled sweeps (running servers reported with their cost, stopped on a
kill date; `reaper restore` starts them) and the creation-time notice from CloudTrail's CreateMlflowTrackingServer."""

from typing import Any

from reaper import wiring
from reaper.core.observability import logger, metrics
from reaper.core.results import HandlerResult
from reaper.handlers import handle_kind_event

RUNTIME = wiring.kind_runtime("mlflow")


@metrics.log_metrics
@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> HandlerResult:
    return handle_kind_event(event, "mlflow", RUNTIME, context=context)

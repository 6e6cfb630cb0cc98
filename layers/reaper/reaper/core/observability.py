"""Logger and Metrics, created once, configured by POWERTOOLS_* environment variables.

One structured logger: the core logs through the standard `reaper` logger (so the CLI prints plain
lines on stderr), and in Lambda that logger takes this Logger's JSON format and level.

Tracer is left out on purpose: it costs ~0.6 s of cold start (the X-Ray SDK) for little here.
"""

from __future__ import annotations

import logging
import os
import warnings

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers
from aws_lambda_powertools.metrics import MetricUnit

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mlreaper")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "MLReaper")

logger = Logger()
metrics = Metrics()
# A sweep that found nothing adds no metric, and log_metrics then warns "No application metrics to
# publish" in every such invocation's log. Nothing is wrong then, and raise_on_empty_metrics=False (the
# default) only chooses the warning over an exception; the switch powertools documents is this filter:
# https://docs.powertools.aws.dev/lambda/python/latest/core/metrics/#raising-schemavalidationerror-on-empty-metrics
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)
if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
    # In Lambda only: the copy gives `reaper` a handler bound to the sys.stdout of this moment. The
    # CLI and the demo, which run the handlers in-process, keep their plain lines on stderr (and a
    # stream captured, then closed, by a test never receives a later warning).
    logging.getLogger("reaper")  # registered now, so the copy below reaches it
    copy_config_to_registered_loggers(source_logger=logger, include={"reaper"})

__all__ = ["logger", "metrics", "MetricUnit"]

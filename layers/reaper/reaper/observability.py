"""Logger and Metrics, created once, configured by POWERTOOLS_* environment variables.

One structured logger: the core logs through the standard `reaper` logger (so the CLI prints plain
lines on stderr), and in Lambda that logger takes this Logger's JSON format and level.

Tracer is left out on purpose: it costs ~0.6 s of cold start (the X-Ray SDK) for little here.
"""

from __future__ import annotations

import logging
import os

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers
from aws_lambda_powertools.metrics import MetricUnit

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mlreaper")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "MLReaper")

logger = Logger()
metrics = Metrics()
logging.getLogger("reaper")  # registered now, so the copy below reaches it
copy_config_to_registered_loggers(source_logger=logger, include={"reaper"})

__all__ = ["logger", "metrics", "MetricUnit"]

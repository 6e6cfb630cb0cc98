"""Logger and Metrics, created once, configured by POWERTOOLS_* environment variables.

Tracer is left out on purpose: it costs ~0.6 s of cold start (the X-Ray SDK) for little here.
"""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mlreaper")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "MLReaper")

logger = Logger()
metrics = Metrics()

__all__ = ["logger", "metrics", "MetricUnit"]

"""After a sweep: what it could not judge, as dashboard metrics and as one action-log entry per kind and region.

Metrics (EMF through powertools, like the sweep's other metrics, so no PutMetricData call and no IAM
grant): namespace MLReaper/Coverage, dimension Kind, `UnknownResources` and `UnknownHourlyUSD`. The
log entry (type "coverage") is what the daily digest reads: keep verdicts are not logged one by one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from aws_lambda_powertools.metrics import single_metric

from reaper.aws.faults import AwsError, short
from reaper.core.coverage import NAMESPACE, Coverage, tally
from reaper.core.model import Outcome
from reaper.core.observability import MetricUnit
from reaper.record.runtime import Runtime

log = logging.getLogger("reaper")


def publish(rt: Runtime, outcomes: Iterable[Outcome], now: datetime, event_id: str) -> list[Coverage]:
    lines = tally(outcomes)
    by_kind: dict[str, list[float]] = {}
    for c in lines:
        got = by_kind.setdefault(c.kind, [0, 0.0])
        got[0] += c.unknown
        got[1] += c.unknown_hourly_usd
    for kind, (n, usd) in by_kind.items():
        _metric("UnknownResources", MetricUnit.Count, n, kind)
        _metric("UnknownHourlyUSD", MetricUnit.NoUnit, round(usd, 4), kind)
    if rt.log is not None:
        for c in lines:
            try:
                rt.log.record(c.as_entry(), now, event_id)
            except AwsError as exc:  # the sweep's own outcomes are recorded already; this is only the tally
                log.error("coverage entry for %s %s not written: %s", c.kind, c.region, short(exc))
    rt.forward_now()
    return lines


def _metric(name: str, unit: MetricUnit, value: float, kind: str) -> None:
    """One EMF line in MLReaper/Coverage per kind (its own namespace, apart from the functions' metrics)."""
    with single_metric(name=name, unit=unit, value=value, namespace=NAMESPACE) as metric:
        metric.add_dimension(name="Kind", value=kind)

"""The daily savings metric: what the reaper's actions saved each UTC day, per kind, in CloudWatch.

The dollars come from the report's code (`reaper.report.summary.reclaimed`: the same hours off, prices and
job bounds as `reaper report`); this module only spreads them over days. A resource off from 10:00
on day 1 until 06:00 on day 3 counts 14 h on day 1, 24 h on day 2 and 6 h on day 3; a stopped
job's bound (what its ceiling still allowed) counts on the day it was stopped. So, for actions
taken since day D, the days from D to today add up to `reaper report --since D --by kind`.

Published by the notifier's daily schedule (the function that already reads the log once a day for
the digest, in either Slack mode), for every complete day of the last `CATCH_UP_DAYS` not yet
published (a claim in the action log makes each day once). Every kind gets a value each day, 0
included, so the dashboard shows "nothing reclaimed" (dry-run) rather than a gap. Entries without a
price are counted in `UnpricedActions`, so a dollar figure never hides what it leaves out.

Its own namespace, not `MLReaper`: the notifier may publish here and nowhere else (IAM condition
`cloudwatch:namespace`), so it can never forge the notebooks' `MLReaper/NotebookActivity`.
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/iam-cw-condition-keys-namespace.html
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, TypedDict

from reaper.aws.metrics import Dimension
from reaper.core.settings import KINDS
from reaper.core.timeutil import as_utc
from reaper.record.logentry import LogEntry
from reaper.report.summary import reclaimed

NAMESPACE = "MLReaper/Savings"
SAVED = "EstimatedSavingsUSD"
UNPRICED = "UnpricedActions"
PERMISSIONS = frozenset({"cloudwatch:PutMetricData"})
# A resource still off this long after its action stops adding to the daily figure (the log read
# each day stays bounded); `reaper report --since` has no such bound.
LOOKBACK = timedelta(days=31)
# Days a missed publication is caught up: fewer than the post claims live (8 days, so a published
# day is never published twice) and than CloudWatch accepts past timestamps (14 days:
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricData.html).
CATCH_UP_DAYS = 7
OTHER_KIND = "other"


@dataclass(frozen=True)
class DaySavings:
    """One kind's figures for one UTC day."""

    kind: str
    saved_usd: float = 0.0
    unpriced: int = 0  # reclaimed resources that counted this day but have no price
    resources: int = 0  # reclaimed resources that counted this day


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(), UTC)
    return start, start + timedelta(days=1)


def _kind(entry: LogEntry) -> str:
    kind = entry.kind
    return kind if kind in KINDS else OTHER_KIND


def day_savings(entries: Iterable[LogEntry], day: date) -> dict[str, DaySavings]:
    """Each kind's saving on `day` (UTC), from log entries logged before its end (read from LOOKBACK before it)."""
    return saved_between(entries, *day_bounds(day))


def saved_between(entries: Iterable[LogEntry], start: datetime, end: datetime) -> dict[str, DaySavings]:
    """Each kind's saving from `start` to `end` (a day for the metric; today or this week for the digest)."""
    start, end = as_utc(start), as_utc(end)
    before_end = [e for e in entries if (at := e.at) is not None and start - LOOKBACK <= at < end]
    saved: dict[str, float] = dict.fromkeys(KINDS, 0.0)
    unpriced: dict[str, int] = dict.fromkeys(KINDS, 0)
    resources: dict[str, int] = dict.fromkeys(KINDS, 0)
    for item in reclaimed(before_end, now=end):
        at = item.entry.at
        assert at is not None  # reclaimed() keeps only entries with a time
        kind = _kind(item.entry)
        if item.hours_off is None:  # a job: its whole bound, on the day it was stopped
            if not start <= at < end:
                continue
            share = item.saved_usd
        else:
            off_end = at + timedelta(hours=item.hours_off)
            overlap = (min(off_end, end) - max(at, start)).total_seconds() / 3600
            if overlap <= 0:
                continue
            share = None if item.saved_usd is None else (item.saved_usd * overlap / item.hours_off if item.hours_off else 0.0)
        resources[kind] = resources.get(kind, 0) + 1
        if share is None or not math.isfinite(share):
            unpriced[kind] = unpriced.get(kind, 0) + 1
        else:
            saved[kind] = saved.get(kind, 0.0) + share
    return {k: DaySavings(k, round(saved[k], 2), unpriced.get(k, 0), resources.get(k, 0)) for k in saved}


class MetricDatum(TypedDict):
    """The members sent of https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDatum.html"""

    MetricName: str
    Dimensions: list[Dimension]
    Timestamp: datetime
    Value: float
    Unit: str


def metric_data(day: date, figures: dict[str, DaySavings]) -> list[MetricDatum]:
    """PutMetricData's MetricData for one day: two values per kind, stamped at the day's start (UTC)."""
    stamp, _ = day_bounds(day)
    out: list[MetricDatum] = []
    for kind, f in sorted(figures.items()):
        dims: list[Dimension] = [{"Name": "Kind", "Value": kind}]
        out.append({"MetricName": SAVED, "Dimensions": dims, "Timestamp": stamp, "Value": f.saved_usd, "Unit": "None"})
        out.append({"MetricName": UNPRICED, "Dimensions": dims, "Timestamp": stamp, "Value": float(f.unpriced), "Unit": "Count"})
    return out


def days_to_publish(now: datetime) -> list[date]:
    """The complete UTC days a run at `now` may publish, oldest first (today is not complete)."""
    today = as_utc(now).date()
    return [today - timedelta(days=n) for n in range(CATCH_UP_DAYS, 0, -1)]


def publish(cloudwatch: Any, day: date, figures: dict[str, DaySavings]) -> None:
    """One call: 6 kinds x 2 metrics is far below PutMetricData's 1,000 values per request."""
    cloudwatch.put_metric_data(Namespace=NAMESPACE, MetricData=metric_data(day, figures))

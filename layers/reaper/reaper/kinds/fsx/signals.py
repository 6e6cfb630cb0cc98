"""AWS/FSx client I/O: read in GetMetricData batches, judged over the whole idle window.

FSx for Lustre publishes DataReadBytes, DataWriteBytes and MetadataOperations (dimension
FileSystemId) every minute while a file system is available, zero or not. So a period with no
datapoint is unknown, never idle. The newest few minutes are not read (CloudWatch lags), and the
period grows with the window so that a long window stays one modest series per metric.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from reaper.metrics import MetricQuery, Series, fetch
from reaper.timeutil import as_utc

NAMESPACE = "AWS/FSx"
METRICS = ("DataReadBytes", "DataWriteBytes", "MetadataOperations")
EXCUSABLE = ("DataReadBytes", "MetadataOperations")  # what our own export does to a file system
LAG = timedelta(minutes=5)
MAX_POINTS = 288


def period_for(window_minutes: int) -> int:
    """Seconds per datapoint: 5 minutes up to a 24 h window, then longer (a multiple of 5 minutes)."""
    return 300 * max(1, math.ceil(window_minutes / (5 * MAX_POINTS)))


def window_end(now: datetime, period: int) -> datetime:
    """End of the last whole period old enough for CloudWatch to have it."""
    t = int((as_utc(now) - LAG).timestamp())
    return datetime.fromtimestamp(t - t % period, tz=UTC)


def read(cloudwatch: Any, file_system_ids: Iterable[str], longest_window: int, now: datetime) -> tuple[dict[str, dict[str, Series]], int, datetime]:
    """{file system id: {metric: series}}, the period, and the end of the window read."""
    ids = list(file_system_ids)
    period = period_for(longest_window)
    end = window_end(now, period)
    if not ids:
        return {}, period, end
    start = end - timedelta(minutes=longest_window)
    start -= timedelta(seconds=int(start.timestamp()) % period)
    queries = [
        MetricQuery(f"{fs_id}|{metric}", NAMESPACE, metric, (("FileSystemId", fs_id),), stat="Sum", period=period)
        for fs_id in ids
        for metric in METRICS
    ]
    series = fetch(cloudwatch, queries, start, end)
    out: dict[str, dict[str, Series]] = {fs_id: {} for fs_id in ids}
    for key, points in series.items():
        fs_id, metric = key.split("|", 1)
        out[fs_id][metric] = points
    return out, period, end


@dataclass(frozen=True)
class IoFinding:
    periods: int  # periods in the window
    missing: int  # periods some metric has no datapoint for
    last_active: datetime | None  # end of the newest period with I/O (None: none in the window)
    totals: dict[str, float]  # per metric, over the window (excused I/O left out)
    excused: int = 0  # periods with reads/metadata only while our own export ran

    @property
    def idle(self) -> bool:
        return self.missing == 0 and self.last_active is None


def judge(io: dict[str, Series], end: datetime, window_minutes: int, period: int, excuse: tuple[datetime, datetime] | None = None) -> IoFinding:
    """Zero I/O in every period of the window, on every metric? Pure.

    `excuse` is our own export's run: the export reads every file and updates metadata, so reads
    and metadata operations inside it are not use. Writes are never excused.
    """
    step = timedelta(seconds=period)
    n = max(1, math.ceil(window_minutes * 60 / period))
    slots = [end - step * (k + 1) for k in range(n)]
    missing: set[datetime] = set()
    active: list[datetime] = []
    excused: set[datetime] = set()
    totals: dict[str, float] = {}
    for metric in METRICS:
        by_slot: dict[datetime, float] = {}
        for ts, value in io.get(metric, []):
            t = as_utc(ts)
            aligned = datetime.fromtimestamp(int(t.timestamp()) - int(t.timestamp()) % period, tz=UTC)
            by_slot[aligned] = by_slot.get(aligned, 0.0) + value
        total = 0.0
        for slot in slots:
            if slot not in by_slot:
                missing.add(slot)
                continue
            value = by_slot[slot]
            if value <= 0:
                continue
            if excuse and metric in EXCUSABLE and excuse[0] - step <= slot <= excuse[1]:
                excused.add(slot)
                continue
            total += value
            active.append(slot + step)
        totals[metric] = total
    return IoFinding(periods=n, missing=len(missing), last_active=max(active) if active else None, totals=totals, excused=len(excused))


def describe_totals(totals: dict[str, float]) -> str:
    read, write, meta = (totals.get(m, 0.0) for m in METRICS)
    return f"{_bytes(read)} read, {_bytes(write)} written, {meta:,.0f} metadata operations"


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} TB"

"""What the FSx rule weighs, read in batches: the training jobs that use each file system (jobs.py),
AWS/FSx client I/O (GetMetricData, 500 queries per call), and the backup or export phase 1 started
(artifacts.py, 50 ids per call).

FSx for Lustre emits DataReadBytes, DataWriteBytes and MetadataOperations (dimension FileSystemId)
"per disk per minute", zero or not (docs/aws-assumptions.md, FSX-1). So a period with no datapoint
is missing data: unknown, never idle. The newest few minutes are not read (CloudWatch lags), and the
period grows with the window so that a long window stays one modest series per metric.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from reaper.aws.clients import Clients
from reaper.aws.metrics import MetricQuery, Series, fetch
from reaper.core.model import Resource
from reaper.core.policy import TagView, is_dev, read_tags
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.fsx.artifacts import backups, tasks
from reaper.kinds.fsx.jobs import scan
from reaper.kinds.fsx.model import KIND, METRICS, NAMESPACE, READ_LAG, Artifact, FsxFacts, FsxSignal, JobRef
from reaper.kinds.fsx.rules import idle_window
from reaper.kinds.fsx.settings import FsxSettings

LAG = READ_LAG
MAX_POINTS = 288


def period_for(window_minutes: int) -> int:
    """Seconds per datapoint: 5 minutes up to a 24 h window, then longer (a multiple of 5 minutes)."""
    return 300 * max(1, math.ceil(window_minutes / (5 * MAX_POINTS)))


def window_end(now: datetime, period: int) -> datetime:
    """End of the last whole period old enough for CloudWatch to have it."""
    t = int((as_utc(now) - LAG).timestamp())
    return datetime.fromtimestamp(t - t % period, tz=UTC)


def read(
    cloudwatch: Any, file_system_ids: Iterable[str], longest_window: int, now: datetime
) -> tuple[dict[str, dict[str, Series]], int, datetime]:
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


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, FsxSignal]:
    available = [r for r in resources if r.state == "AVAILABLE"]
    if not available:
        return {}
    views = {r.id: read_tags(r.tags, settings) for r in available}
    longest_window_days = max(idle_window(v, settings) for v in views.values()) / 1440
    # Jobs older than the idle window matter only to bring an untagged file system into scope:
    # when every file system is dev-tagged, jobs that ended before the window need no describe.
    all_dev = all(is_dev(v, settings) for v in views.values())
    lookback_days = longest_window_days if all_dev else max(settings.of(FsxSettings).job_lookback_days, longest_window_days)
    oldest = min((r.created_at for r in available if r.created_at), default=now - timedelta(days=lookback_days))
    jobs = scan(clients("sagemaker"), oldest - timedelta(minutes=5), now - timedelta(days=lookback_days))
    candidates = [r for r in available if _candidate(views[r.id], settings, jobs.get(r.id, []))]
    longest = max((idle_window(views[r.id], settings) for r in candidates), default=settings.idle_for(KIND))
    io, period, end = read(clients("cloudwatch"), [r.id for r in candidates], longest, now)
    phases = {r.id: r.facts_as(FsxFacts).phase for r in available}
    backup_ids = [p[1] for p in phases.values() if p and p[0] == "backup"]
    task_ids = [p[1] for p in phases.values() if p and p[0] == "export"]
    found: dict[str, Artifact] = {
        **(backups(clients("fsx"), backup_ids) if backup_ids else {}),
        **(tasks(clients("fsx"), task_ids) if task_ids else {}),
    }
    out: dict[str, FsxSignal] = {}
    for r in available:
        phase = phases[r.id]
        out[r.id] = FsxSignal(
            jobs=tuple(jobs.get(r.id, [])),
            jobs_lookback_days=lookback_days,
            io=io.get(r.id),
            period=period,
            window_end=end,
            artifact=found.get(phase[1]) if phase else None,
        )
    return out


def _candidate(view: TagView, settings: Settings, jobs: list[JobRef]) -> bool:
    """Worth reading I/O for: in scope, and no job running on it."""
    in_scope = is_dev(view, settings) or bool(jobs)
    return in_scope and not any(j.running for j in jobs)

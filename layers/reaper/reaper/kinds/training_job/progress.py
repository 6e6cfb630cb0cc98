"""Whether running jobs still make progress: new log events, CPU or GPU use. Read in bulk, judged here.

A job is stalled when it has run at least `stalled_minutes` and, over that window, none of its
log streams got a new event and none of its hosts used CPU or GPU above BUSY_PERCENT. A job that
still logs or computes, however slowly, is not stalled; a job without a CPU or GPU metric is unknown,
never stalled (docs/safety.md, item 5: missing signals are never idle), and its logs are not read.

Sources, as AWS documents them (https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html):
- Metrics: namespaces /aws/sagemaker/TrainingJobs, /aws/sagemaker/ProcessingJobs and
  /aws/sagemaker/TransformJobs, `CPUUtilization` and `GPUUtilization` per instance, dimension
  `Host` = `JOB/algo-N` (training, processing) or `JOB/INSTANCE-ID` (transform). Both are "multiplied
  by the number of CPUs/GPUs", so a published value under BUSY_PERCENT means every CPU or GPU under it.
  Read: one ListMetrics per namespace and metric name (recently active), then GetMetricData with
  Maximum over 5 minutes, 500 queries a call: the call count does not grow with the number of jobs.
- Logs: log groups of the same names, streams `JOB/algo-N-EPOCH` or `JOB/INSTANCE-ID-EPOCH`. Read
  only for the jobs the metrics call quiet (a series, every point under BUSY_PERCENT): one
  DescribeLogStreams with the prefix `JOB/`. A job with no CPU or GPU series at all is unknown
  without a log read (SageMaker publishes CPUUtilization for every running job's instances: none is
  a job just started, or metrics not yet there), so a sweep never pays one log call per job the
  metrics cannot judge (docs/performance.md). Its `lastEventTimestamp` "updates on an eventual consistency basis. It typically updates
  in less than an hour from ingestion" (API_DescribeLogStreams), so a stale value is not believed:
  when it is older than the window, FilterLogEvents from the window's start over those streams, 100
  stream names a call whatever job they belong to, says whether anything new arrived.
  DescribeLogStreams ordered by LastEventTime would serve a whole group in one listing, but "you
  cannot specify the logStreamNamePrefix parameter" with it, and it orders by that same lagging
  value. So: 1 DescribeLogStreams per quiet job, 1 FilterLogEvents per 100 of their streams, 0 log
  calls per busy job or job without metrics.
- Tuning and AutoML jobs have no logs or metrics of their own: one is stalled when every training,
  processing or transform job it is running now is stalled (children found by TuningJobArn, or
  AutoMLJobArn); with no running child it is unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, is_not_found, short
from reaper.aws.log_pages import filter_pages
from reaper.aws.metrics import MetricQuery, fetch
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.training_job.model import RUNNING, WHAT, JobFacts, Progress
from reaper.kinds.training_job.settings import TrainingJobSettings

log = logging.getLogger("reaper")

SOURCES = {
    "training": "/aws/sagemaker/TrainingJobs",
    "processing": "/aws/sagemaker/ProcessingJobs",
    "transform": "/aws/sagemaker/TransformJobs",
}  # each is both the metric namespace and the log group
METRICS = ("CPUUtilization", "GPUUtilization")
BUSY_PERCENT = 5.0  # a host at or above this (summed over its CPUs or GPUs) is computing
PERIOD = 300
MAX_STREAMS = 100  # FilterLogEvents takes up to 100 stream names
MAX_FILTER_PAGES = 20  # pages of a filtered search may be empty while the service searches


@dataclass
class _Seen:
    """What was read of one job."""

    busiest: float | None = None
    hosts: int = 0
    streams: int = 0
    newest_ms: int | None = None
    logged: bool = False
    error: str | None = None


def read_progress(clients: Clients, resources: Iterable[Resource], settings: Settings, now: datetime) -> dict[str, Progress]:
    """Progress of every running job old enough to judge, keyed by ARN (parents included)."""
    resources = list(resources)
    minutes = settings.of(TrainingJobSettings).stalled_minutes
    since = as_utc(now) - timedelta(minutes=minutes)
    judged = [r for r in resources if _judgeable(r, since)]
    seen = {r.arn: _Seen() for r in judged}
    _read_metrics(clients, judged, seen, since, now)
    stale: dict[str, dict[str, str]] = {}  # log group -> {stream: job ARN} whose last event may lag
    for r in judged:
        if _quiet(seen[r.arn]):
            for stream in _read_streams(clients, r, seen[r.arn], since):
                stale.setdefault(SOURCES[r.facts_as(JobFacts).job_type], {})[stream] = r.arn
    for group, streams in stale.items():
        _search_since(clients("logs"), group, streams, int(since.timestamp() * 1000), seen)
    out = {r.arn: _judge(seen[r.arn], minutes) for r in judged}
    out.update(_parents(resources, out, since, minutes))
    return _held_by_parents(resources, out)


def _quiet(s: _Seen) -> bool:
    """The metrics call the job quiet: it has a series and every point is under BUSY_PERCENT (only then
    are its logs read; without a series it is unknown, never stalled)."""
    return s.error is None and s.busiest is not None and s.busiest < BUSY_PERCENT


def _held_by_parents(resources: list[Resource], out: dict[str, Progress]) -> dict[str, Progress]:
    """A stalled child of an AutoML job, or of a tuning job stalled as a whole, is stopped with its
    parent, not alone: AutoML launches its candidates itself, and one stop covers a whole sweep."""
    names = {r.arn: r.id for r in resources}
    for r in resources:
        facts = r.facts_as(JobFacts)
        progress = out.get(r.arn)
        if progress is None or not progress.stalled:
            continue
        if facts.automl_job_arn:
            out[r.arn] = replace(progress, parent=names.get(facts.automl_job_arn, facts.automl_job_arn))
        elif facts.tuning_job_arn and (parent := out.get(facts.tuning_job_arn)) is not None and parent.stalled:
            out[r.arn] = replace(progress, parent=names.get(facts.tuning_job_arn, facts.tuning_job_arn))
    return out


def _judgeable(r: Resource, since: datetime) -> bool:
    facts = r.facts_as(JobFacts)
    started = facts.started_at
    return r.state == RUNNING and facts.job_type in SOURCES and started is not None and as_utc(started) <= since


def _read_metrics(clients: Clients, judged: list[Resource], seen: dict[str, _Seen], since: datetime, now: datetime) -> None:
    by_name: dict[tuple[str, str], str] = {(SOURCES[r.facts_as(JobFacts).job_type], r.id): r.arn for r in judged}
    try:
        cloudwatch = clients("cloudwatch")
        queries = _host_queries(cloudwatch, by_name)
        series = fetch(cloudwatch, queries, since, as_utc(now))
    except AwsError as exc:
        for s in seen.values():
            s.error = f"metrics unreadable ({short(exc)})"
        return
    hosts: dict[str, set[str]] = {}
    for key, points in series.items():
        arn, host = key.split("\t", 1)
        if not points:
            continue
        s = seen[arn]
        hosts.setdefault(arn, set()).add(host)
        top = max(v for _, v in points)
        s.busiest = top if s.busiest is None else max(s.busiest, top)
    for arn, names in hosts.items():
        seen[arn].hosts = len(names)


def _host_queries(cloudwatch: Any, by_name: dict[tuple[str, str], str]) -> list[MetricQuery]:
    """One query per host and metric of the judged jobs: a ListMetrics per namespace and metric name."""
    queries: list[MetricQuery] = []
    paginator = cloudwatch.get_paginator("list_metrics")
    for ns in sorted({ns for ns, _ in by_name}):
        for metric in METRICS:
            for page in paginator.paginate(Namespace=ns, MetricName=metric, RecentlyActive="PT3H"):
                for m in page.get("Metrics", []):
                    dims = tuple((d["Name"], d["Value"]) for d in m.get("Dimensions", []))
                    host = dict(dims).get("Host", "")
                    arn = by_name.get((ns, host.split("/", 1)[0]))
                    if arn is not None and "/" in host:
                        queries.append(MetricQuery(f"{arn}\t{host}", ns, metric, dims, "Maximum", PERIOD))
    return queries


def _read_streams(clients: Clients, r: Resource, s: _Seen, since: datetime) -> list[str]:
    """The job's log streams (one DescribeLogStreams by prefix); those whose last event looks older than
    the window are returned, to be searched, since lastEventTimestamp may lag by up to an hour."""
    group = SOURCES[r.facts_as(JobFacts).job_type]
    try:
        page = clients("logs").describe_log_streams(logGroupName=group, logStreamNamePrefix=f"{r.id}/", limit=50)
    except AwsError as exc:
        if not is_not_found(exc):  # no log group yet in this region: no stream
            s.error = f"logs unreadable ({short(exc)})"
        return []
    streams = [x for x in page.get("logStreams", []) if x.get("logStreamName", "").startswith(f"{r.id}/")]
    s.streams = len(streams)
    s.newest_ms = max((x.get("lastEventTimestamp") or 0 for x in streams), default=0) or None
    if streams and (s.newest_ms or 0) >= int(since.timestamp() * 1000):
        s.logged = True
        return []
    return [x["logStreamName"] for x in streams]


def _search_since(logs: Any, group: str, streams: dict[str, str], since_ms: int, seen: dict[str, _Seen]) -> None:
    """Which of these streams got an event since the window's start: one FilterLogEvents per 100 streams
    (of any jobs), following its pages. A search cut short leaves its jobs not seen logging unknown."""
    names = sorted(streams)
    for i in range(0, len(names), MAX_STREAMS):
        batch = names[i : i + MAX_STREAMS]
        request = {"logGroupName": group, "logStreamNames": batch, "startTime": since_ms}
        try:
            for pages, found in enumerate(filter_pages(logs, request), start=1):
                for e in found.get("events", []):
                    s = seen[streams[e.get("logStreamName", "")]] if e.get("logStreamName") in streams else None
                    if s is not None:
                        s.logged = True
                        s.newest_ms = max(s.newest_ms or 0, int(e.get("timestamp", 0)))
                if pages >= MAX_FILTER_PAGES and found.get("nextToken"):
                    _unsure(batch, streams, seen, f"log search inconclusive after {pages} pages")
                    break
        except AwsError as exc:
            _unsure(batch, streams, seen, f"logs unreadable ({short(exc)})")


def _unsure(batch: list[str], streams: dict[str, str], seen: dict[str, _Seen], why: str) -> None:
    for name in batch:
        s = seen[streams[name]]
        if not s.logged:
            s.error = why


def _judge(s: _Seen, minutes: int) -> Progress:
    newest = datetime.fromtimestamp(s.newest_ms / 1000, tz=UTC) if s.newest_ms else None
    base = Progress(minutes, None, newest, s.streams, s.busiest, s.hosts)
    if (s.busiest is not None and s.busiest >= BUSY_PERCENT) or s.logged:
        return replace(base, stalled=False)
    if s.error is not None:
        return replace(base, error=s.error)
    if s.busiest is None:
        return replace(base, error="no CPU or GPU metric (its logs are read only when the metrics call it quiet): progress unknown")
    return replace(base, stalled=True)


def _parents(resources: list[Resource], judged: dict[str, Progress], since: datetime, minutes: int) -> dict[str, Progress]:
    """Tuning and AutoML jobs, from the jobs they are running now."""
    children: dict[str, list[Resource]] = {}
    for r in resources:
        facts = r.facts_as(JobFacts)
        parent = facts.tuning_job_arn or facts.automl_job_arn
        if parent and r.state == RUNNING:
            children.setdefault(parent, []).append(r)
    return {r.arn: _parent(r, children.get(r.arn, []), judged, minutes) for r in resources if _is_parent(r, since)}


def _is_parent(r: Resource, since: datetime) -> bool:
    facts = r.facts_as(JobFacts)
    started = facts.started_at
    return facts.job_type in ("tuning", "automl") and r.state == RUNNING and started is not None and as_utc(started) <= since


def _parent(r: Resource, running: list[Resource], judged: dict[str, Progress], minutes: int) -> Progress:
    states = [judged[c.arn].stalled if c.arn in judged else None for c in running]
    if running and all(st is True for st in states):
        via = f"each of the {len(running)} job(s) it is running shows none ({', '.join(sorted(c.id for c in running)[:5])})"
        return Progress(minutes, True, via=via)
    if any(st is False for st in states):
        return Progress(minutes, False, via="a job it launched still progresses")
    what = WHAT[r.facts_as(JobFacts).job_type]
    return Progress(minutes, None, error=f"the {what} is running no job whose progress can be read")

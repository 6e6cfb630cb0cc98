"""Evidence about running training jobs, read for all of them at once, never one call per job.

- Training metric names: ListMetrics on /aws/sagemaker/TrainingJobs with a TrainingJobName
  dimension filter, recently active (3 h); 500 metrics a page, whatever the number of jobs.
- GPU hosts: ListMetrics for GPUUtilization (dimension Host = JOB/algo-N), likewise.
- Values: GetMetricData, 500 queries a call (reaper.aws.metrics.fetch).
- Logs: one FilterLogEvents over the log group /aws/sagemaker/TrainingJobs for the last 30
  minutes, narrowed by a filter pattern to lines that mention loss with nan or inf. CloudWatch Logs
  answers a filtered search with pages that can be empty yet carry a nextToken ("Partially full or
  empty pages don't necessarily mean that pagination is finished ... If the results don't include
  a nextToken, then pagination is finished":
  https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html),
  so the scan follows nextToken until the window is covered, within a budget of MAX_LOG_PAGES
  pages and LOG_SCAN_SECONDS; cut short, it says "inconclusive" and no nan seen proves nothing.
  Each event is given to its job by its stream name (`JOB/algo-…`), so the answer is right
  whether or not the service honours a stream-name prefix (moto does not). 0 log calls per job.

- Sweeps: for running tuning jobs tagged `reaper:early-stop=median`, the whole objective history of every
  training job they launched (running or finished), in the same GetMetricData batches; each
  running child is compared with its siblings (sweeps.median_check).

A read that fails leaves that evidence unknown (said in the verdict); the ceilings, which need
none of it, still hold.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, is_not_found, short
from reaper.aws.log_pages import filter_pages
from reaper.aws.metrics import MetricQuery, MetricReadTruncated, Series, fetch
from reaper.aws.tagging import fold
from reaper.core.model import Resource
from reaper.core.policy import read_tags, screen
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.training_job.checkpoints import read_checkpoints
from reaper.kinds.training_job.divergence import direction_of, nan_loss
from reaper.kinds.training_job.model import RUNNING, JobFacts, LogHit, TrainingSignal, align
from reaper.kinds.training_job.progress import read_progress
from reaper.kinds.training_job.sweeps import median_check

log = logging.getLogger("reaper")
clock: Callable[[], float] = time.monotonic  # tests replace it; the scan's time budget reads it

NAMESPACE = "/aws/sagemaker/TrainingJobs"
LOG_GROUP = "/aws/sagemaker/TrainingJobs"
METRIC_LOOKBACK = timedelta(hours=3)
# A sweep's children are compared over their whole history, from the tuning job's creation, within what
# CloudWatch keeps at one value a minute ("Data points with a period of 60 seconds (1 minute) are
# available for 15 days": https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_concepts.html#Metric);
# the read follows NextToken for at most MAX_OBJECTIVE_PAGES pages (each up to 100,800 values).
OBJECTIVE_HISTORY = timedelta(days=14)
MAX_OBJECTIVE_PAGES = 40
RECENTLY_ACTIVE = "PT3H"
METRIC_PERIOD = 60
GPU_PERIOD = 300
LOG_LOOKBACK = timedelta(minutes=30)
MAX_LOG_PAGES = 200  # a budget, not a sample: most are empty pages the service sends while it searches
LOG_SCAN_SECONDS = 20.0
HITS_KEPT = 3
# CloudWatch Logs regex pattern (case-sensitive, no groups): loss ... nan, or loss ... inf
LOG_FILTER = "%[Ll][Oo][Ss][Ss].*[Nn][Aa][Nn]|[Ll][Oo][Ss][Ss].*[Ii][Nn][Ff]%"


def signals(clients: Clients, resources: Iterable[Resource], settings: Settings, now: datetime) -> dict[str, TrainingSignal]:
    """Evidence for every running training job, and whether each running job of any kind progresses."""
    resources = list(resources)
    out = _training_signals(clients, resources, settings, now)
    names = {r.arn: r.id for r in resources}
    for arn, p in read_progress(clients, resources, settings, now).items():
        name = names[arn]
        out[name] = replace(out.get(name) or TrainingSignal(window_end=align(now)), progress=p)
    for arn, age in read_checkpoints(clients, resources, settings, now).items():
        name = names[arn]
        out[name] = replace(out.get(name) or TrainingSignal(window_end=align(now)), checkpoint=age)
    return out


def _training_signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> dict[str, TrainingSignal]:
    running = [r for r in resources if r.state == RUNNING and r.facts_as(JobFacts).job_type == "training"]
    if not running:
        return {}
    names = {r.id for r in running}
    end = align(now)
    metric_error: str | None = None
    series: dict[str, Series] = {}
    try:
        queries = _queries(clients("cloudwatch"), running, settings)
        series = fetch(clients("cloudwatch"), queries, end - METRIC_LOOKBACK, end)
    except AwsError as exc:
        metric_error = short(exc)
        log.warning("training metrics unreadable: %s", metric_error)
    hits, logs_error = _scan_logs(clients("logs"), names, now)
    out: dict[str, TrainingSignal] = {}
    for r in running:
        metrics: dict[str, Series] = {}
        gpu: dict[str, Series] = {}
        for key, points in series.items():
            job, what, name = key.split("\t", 2)
            if job != r.id:
                continue
            (gpu if what == "gpu" else metrics)[name] = points
        out[r.id] = TrainingSignal(metrics, gpu, tuple(hits.get(r.id, ())), end, metric_error, logs_error)
    return _with_median_checks(clients, resources, running, out, settings, now)


def _with_median_checks(
    clients: Clients, resources: list[Resource], running: list[Resource], out: dict[str, TrainingSignal], settings: Settings, now: datetime
) -> dict[str, TrainingSignal]:
    """For each running tuning job tagged early-stop=median (and not exempt), its running children are
    compared with their siblings: one bounded GetMetricData read of every child's whole objective history."""
    sweeps = _median_sweeps(resources, settings, now)
    judged = [r for r in running if fold(r.facts_as(JobFacts).tuning_job_arn or "") in sweeps]
    if not judged:
        return out
    end = align(now)
    start = max(end - OBJECTIVE_HISTORY, min(as_utc(t.facts_as(JobFacts).started_at or end - OBJECTIVE_HISTORY) for t in sweeps.values()))
    queries: list[MetricQuery] = []
    for tuning in sweeps.values():
        facts = tuning.facts_as(JobFacts)
        assert facts.objective is not None
        queries += [
            MetricQuery(f"{tuning.arn}\t{child}", NAMESPACE, facts.objective[0], (("TrainingJobName", child),), "Average", METRIC_PERIOD)
            for child in facts.children
        ]
    try:
        series = fetch(clients("cloudwatch"), queries, start, end, max_pages=MAX_OBJECTIVE_PAGES)
    except (*AwsError, MetricReadTruncated) as exc:
        log.warning("tuning objectives unreadable: %s", exc if isinstance(exc, MetricReadTruncated) else short(exc))
        return out  # unknown: no child is stopped for losing
    for r in judged:
        tuning = sweeps[fold(r.facts_as(JobFacts).tuning_job_arn or "")]
        facts = tuning.facts_as(JobFacts)
        assert facts.objective is not None
        whole = _whole_histories(facts, start)
        if r.id not in whole:
            continue  # started before the oldest value CloudWatch keeps: its evaluations cannot be counted
        values = {child: [v for _, v in series.get(f"{tuning.arn}\t{child}", [])] for child in whole}
        own = values.pop(r.id, [])
        check = median_check(tuning.id, facts.objective[0], facts.objective[1], own, values, child=r.id, best_child=facts.best_child)
        if check is not None and r.id in out:
            out[r.id] = replace(out[r.id], early_stop=check)
    return out


def _median_sweeps(resources: list[Resource], settings: Settings, now: datetime) -> dict[str, Resource]:
    """Running tuning jobs tagged early-stop=median with an objective and no protection, by folded ARN."""
    sweeps: dict[str, Resource] = {}
    for r in resources:
        facts = r.facts_as(JobFacts)
        view = read_tags(r.tags, settings)
        if (
            r.state == RUNNING
            and facts.job_type == "tuning"
            and facts.objective
            and view.early_stop == "median"
            and screen(view, settings, now) is None
        ):
            sweeps[fold(r.arn)] = r
    return sweeps


def _whole_histories(facts: JobFacts, start: datetime) -> set[str]:
    """The children whose every evaluation lies after `start` (so evaluation k is the k-th value read)."""
    return {child for child, span in zip(facts.children, facts.spans, strict=False) if span.start is None or as_utc(span.start) >= start}


def _queries(cloudwatch: Any, running: list[Resource], settings: Settings) -> list[MetricQuery]:
    names = {r.id for r in running}
    watched = {r.id: read_tags(r.tags, settings).watch_metric for r in running}
    queries: list[MetricQuery] = []
    paginator = cloudwatch.get_paginator("list_metrics")
    for page in paginator.paginate(Namespace=NAMESPACE, Dimensions=[{"Name": "TrainingJobName"}], RecentlyActive=RECENTLY_ACTIVE):
        for m in page.get("Metrics", []):
            dims = tuple((d["Name"], d["Value"]) for d in m.get("Dimensions", []))
            job = dict(dims).get("TrainingJobName")
            if job not in names:
                continue
            watch = watched.get(job)
            wanted = m["MetricName"].lower() == watch[0].lower() if watch else direction_of(m["MetricName"]) is not None
            if wanted:
                queries.append(MetricQuery(f"{job}\tmetric\t{m['MetricName']}", NAMESPACE, m["MetricName"], dims, "Average", METRIC_PERIOD))
    for page in paginator.paginate(Namespace=NAMESPACE, MetricName="GPUUtilization", RecentlyActive=RECENTLY_ACTIVE):
        for m in page.get("Metrics", []):
            dims = tuple((d["Name"], d["Value"]) for d in m.get("Dimensions", []))
            host = dict(dims).get("Host", "")
            job = host.split("/", 1)[0]
            if job in names and "/" in host:
                queries.append(MetricQuery(f"{job}\tgpu\t{host}", NAMESPACE, "GPUUtilization", dims, "Average", GPU_PERIOD))
    return queries


def _scan_logs(logs: Any, names: set[str], now: datetime) -> tuple[dict[str, list[LogHit]], str | None]:
    hits: dict[str, list[LogHit]] = {}
    request: dict[str, object] = {  # FilterLogEvents' arguments
        "logGroupName": LOG_GROUP,
        "startTime": int((as_utc(now) - LOG_LOOKBACK).timestamp() * 1000),
        "endTime": int(as_utc(now).timestamp() * 1000),
        "filterPattern": LOG_FILTER,
    }
    started = clock()
    try:
        for pages, page in enumerate(filter_pages(logs, request), start=1):
            for event in page.get("events", []):
                stream = event.get("logStreamName", "")
                job = stream.split("/", 1)[0]
                if job not in names or "/" not in stream or len(hits.get(job, ())) >= HITS_KEPT:
                    continue
                excerpt = nan_loss(event.get("message", ""))
                if excerpt:
                    at = datetime.fromtimestamp(event.get("timestamp", 0) / 1000, tz=UTC)
                    hits.setdefault(job, []).append(LogHit(stream, at, excerpt))
            if not page.get("nextToken"):
                return hits, None  # the whole window was searched
            spent = clock() - started
            if pages >= MAX_LOG_PAGES or spent >= LOG_SCAN_SECONDS:
                return hits, (
                    f"log scan inconclusive: {pages} pages in {spent:.0f} s did not cover the last "
                    f"{int(LOG_LOOKBACK.total_seconds() // 60)} min, so a nan there may not have been seen"
                )
    except AwsError as exc:
        if is_not_found(exc):
            return hits, None  # the log group does not exist: no training job has logged yet in this region
        return hits, short(exc)
    return hits, None  # not reached: the last page (no nextToken) returns above

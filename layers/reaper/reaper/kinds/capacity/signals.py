"""Evidence for every reservation, read across the region in as few calls as the APIs allow.

- `UsedInstanceCount` (Maximum per hour) for every reservation, one GetMetricData query each, 500 a
  call: 1,000 reservations cost 2 calls.
- The region's InProgress training jobs, one ListTrainingJobs pass per sweep, only when something
  could be reported idle (a Capacity Block, a committed reservation, a plan): jobs whose
  SecondaryStatus is `Starting` or `Pending` are waiting for instances, and are named beside idle
  capacity they might use.
- Instances running in Capacity Blocks that end within the next sweep, one DescribeInstances for all
  of them (filter `capacity-reservation-id`), so their owners can checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from reaper.aws.clients import Clients
from reaper.aws.metrics import MetricQuery, Series, fetch
from reaper.core.model import Resource
from reaper.core.policy import OWNER, read_tags
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.capacity.model import (
    BLOCK_ENDING,
    KIND,
    METRIC,
    NAMESPACE,
    PERIOD,
    WAITING,
    CapacityFacts,
    CapacitySignal,
    WaitingJob,
    window_end,
)

PERIOD_SECONDS = int(PERIOD.total_seconds())


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, CapacitySignal]:
    if not resources:
        return {}
    end = window_end(now)
    reservations = [r for r in resources if r.facts_as(CapacityFacts).source != "training-plan"]
    series: dict[str, Series] = {}
    if reservations:
        longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in reservations])
        queries = [
            MetricQuery(r.id, NAMESPACE, METRIC, (("CapacityReservationId", r.id),), stat="Maximum", period=PERIOD_SECONDS)
            for r in reservations
        ]
        series = fetch(clients("cloudwatch"), queries, end - timedelta(minutes=longest) - PERIOD, end + PERIOD)
    waiting = waiting_jobs(clients) if any(_alert_only(r, now) for r in resources) else ()
    running = running_in_ending_blocks(clients, resources, now)
    return {
        r.id: CapacitySignal(
            used=series.get(r.id, []),
            window_end=end,
            waiting_jobs=waiting,
            running_instances=tuple(running.get(r.id, [])),
        )
        for r in resources
    }


def _alert_only(r: Resource, now: datetime) -> bool:
    facts = r.facts_as(CapacityFacts)
    return facts.source != "odcr" or facts.committed(now) or facts.available > 0 and facts.match_criteria == "targeted"


def waiting_jobs(clients: Clients) -> tuple[WaitingJob, ...]:
    """Training jobs InProgress but not yet on instances, oldest first."""
    paginator = clients("sagemaker").get_paginator("list_training_jobs")
    out: list[WaitingJob] = []
    for page in paginator.paginate(StatusEquals="InProgress", PaginationConfig={"PageSize": 100}):
        for job in page.get("TrainingJobSummaries", []):
            if job.get("SecondaryStatus") in WAITING:
                created = job.get("CreationTime")
                out.append(
                    WaitingJob(
                        str(job["TrainingJobName"]), str(job["SecondaryStatus"]), as_utc(created) if isinstance(created, datetime) else None
                    )
                )
    return tuple(sorted(out, key=lambda j: (j.waiting_since is None, j.waiting_since or datetime.min, j.name)))


def running_in_ending_blocks(clients: Clients, resources: list[Resource], now: datetime) -> dict[str, list[tuple[str, str | None]]]:
    ending = [r.id for r in resources if _ending_block(r, now)]
    out: dict[str, list[tuple[str, str | None]]] = {}
    if not ending:
        return out
    filters = [{"Name": "capacity-reservation-id", "Values": ending}, {"Name": "instance-state-name", "Values": ["running"]}]
    for page in clients("ec2").get_paginator("describe_instances").paginate(Filters=filters):
        for reservation in page.get("Reservations", []):
            for inst in reservation.get("Instances", []):
                tags = {t["Key"].strip().lower(): t.get("Value", "").strip() for t in inst.get("Tags", [])}
                out.setdefault(str(inst.get("CapacityReservationId")), []).append((str(inst["InstanceId"]), tags.get(OWNER) or None))
    return out


def _ending_block(r: Resource, now: datetime) -> bool:
    facts = r.facts_as(CapacityFacts)
    return facts.source == "capacity-block" and facts.ends_at is not None and now <= facts.ends_at <= now + BLOCK_ENDING

"""Which SageMaker training jobs use which FSx for Lustre file systems (FileSystemDataSource inputs).

One paginated Search over training jobs (100 a page) returns each job with its InputDataConfig, so
no job is described. Pages come newest first (SortBy CreationTime, Descending) and stop at the first
job created before the oldest available file system: an older job cannot name it. Of those, only jobs
still running, or that ended within the lookback (the longer of REAPER_FSX_JOB_LOOKBACK_DAYS and the
idle window), count: older ones change no verdict. So calls per sweep = ceil(jobs created since the
oldest file system / 100).
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Search.html (MaxResults ≤ 100; SortBy,
SortOrder) and API_TrainingJob.html (the TrainingJob search record carries InputDataConfig).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from reaper.aws.sagemaker_shapes import Channel
from reaper.core.timeutil import as_utc
from reaper.kinds.fsx.model import RUNNING_JOB, JobRef

PAGE = 100


def lustre_inputs(input_data_config: Iterable[Channel] | None) -> tuple[str, ...]:
    """File system ids a job's InputDataConfig reads through FileSystemDataSource (Lustre only)."""
    out: list[str] = []
    for channel in input_data_config or []:
        source = (channel.get("DataSource") or {}).get("FileSystemDataSource") or {}
        fs_id = source.get("FileSystemId")
        if fs_id and source.get("FileSystemType", "FSxLustre") == "FSxLustre" and fs_id not in out:
            out.append(fs_id)
    return tuple(out)


def scan(sagemaker: Any, created_after: datetime, ended_after: datetime) -> dict[str, list[JobRef]]:
    """File system id -> the jobs that read it (running, or ended after `ended_after`)."""
    refs: dict[str, list[JobRef]] = {}
    paginator = sagemaker.get_paginator("search")
    pages = paginator.paginate(Resource="TrainingJob", SortBy="CreationTime", SortOrder="Descending", PaginationConfig={"PageSize": PAGE})
    for page in pages:
        older = False
        for item in page.get("Results", []):
            job = item.get("TrainingJob") or {}
            created = job.get("CreationTime")
            if created is not None and as_utc(created) < as_utc(created_after):
                older = True  # newest first: every job after this one is older still
                break
            ids = lustre_inputs(job.get("InputDataConfig"))
            if not ids or not job.get("TrainingJobName"):
                continue
            status = job.get("TrainingJobStatus", "")
            running = status in RUNNING_JOB
            ended = job.get("TrainingEndTime") or job.get("LastModifiedTime")
            ended = as_utc(ended) if ended else None
            if not running and ended is not None and ended < as_utc(ended_after):
                continue
            for fs_id in ids:
                refs.setdefault(fs_id, []).append(JobRef(job["TrainingJobName"], status, None if running else ended))
        if older:
            break
    return refs

"""Which SageMaker training jobs use which FSx for Lustre file systems (FileSystemDataSource inputs).

ListTrainingJobs does not say what a job reads, so some jobs must be described. As few as can be:
  * only jobs created after the oldest available file system (an older job cannot name it);
  * only jobs still running, or that ended within the lookback (the longer of
    REAPER_FSX_JOB_LOOKBACK_DAYS and the idle window): older ones change no verdict;
  * a job's inputs never change, so a warm function describes each job once (bounded cache).
So DescribeTrainingJob calls per sweep = jobs that pass both filters and are new to this process.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from reaper.kinds.fsx.model import RUNNING_JOB, JobRef
from reaper.timeutil import as_utc

CACHE_LIMIT = 20_000
_inputs: dict[str, tuple[str, ...]] = {}  # "<job arn>|<creation time>" -> FSx for Lustre file system ids


def lustre_inputs(input_data_config: Iterable[dict[str, Any]] | None) -> tuple[str, ...]:
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
    paginator = sagemaker.get_paginator("list_training_jobs")
    for page in paginator.paginate(CreationTimeAfter=created_after, PaginationConfig={"PageSize": 100}):
        for job in page.get("TrainingJobSummaries", []):
            status = job.get("TrainingJobStatus", "")
            running = status in RUNNING_JOB
            ended = job.get("TrainingEndTime") or job.get("LastModifiedTime")
            ended = as_utc(ended) if ended else None
            if not running and ended is not None and ended < ended_after:
                continue
            key = f"{job['TrainingJobArn']}|{as_utc(job['CreationTime']).isoformat() if job.get('CreationTime') else ''}"
            ids = _inputs.get(key)
            if ids is None:
                desc = sagemaker.describe_training_job(TrainingJobName=job["TrainingJobName"])
                ids = lustre_inputs(desc.get("InputDataConfig"))
                if len(_inputs) >= CACHE_LIMIT:
                    _inputs.clear()
                _inputs[key] = ids
            for fs_id in ids:
                refs.setdefault(fs_id, []).append(JobRef(job["TrainingJobName"], status, None if running else ended))
    return refs

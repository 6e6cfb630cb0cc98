"""Read the backups and export tasks phase 1 started: 50 ids per call (the APIs' limit).

AWS fails the whole call when one id is unknown (someone deleted that backup): then that batch
is read one id at a time, and the unknown one is reported as gone, not as an error of the sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from botocore.exceptions import ClientError

from reaper.aws.faults import is_not_found
from reaper.core.timeutil import as_utc
from reaper.kinds.fsx.model import Artifact
from reaper.kinds.fsx.shapes import Backup, DataRepositoryTask

BATCH = 50


Found = TypeVar("Found", Backup, DataRepositoryTask)


def _batched(ids: list[str], call: Callable[[list[str]], list[Found]], key: Callable[[Found], str]) -> dict[str, Found]:
    out: dict[str, Found] = {}
    for i in range(0, len(ids), BATCH):
        batch = ids[i : i + BATCH]
        try:
            items: list[Found] = call(batch)
        except ClientError as exc:
            if not is_not_found(exc):  # BackupNotFound, DataRepositoryTaskNotFound
                raise
            items = []
            for one in batch:
                try:
                    items.extend(call([one]))
                except ClientError as inner:
                    if not is_not_found(inner):
                        raise
        out.update({key(item): item for item in items})
    return out


def backups(fsx: Any, ids: Iterable[str]) -> dict[str, Artifact]:
    wanted = sorted(set(ids))
    found = _batched(wanted, lambda batch: cast(list[Backup], fsx.describe_backups(BackupIds=batch).get("Backups", [])), _backup_id)
    return {i: backup_artifact(found[i]) if i in found else Artifact("backup", i, found=False, lifecycle="DELETED") for i in wanted}


def made_for(fsx: Any, fs_id: str, marker_key: str) -> list[Artifact]:
    """The backups the reaper made of this file system, newest first: those that carry its marker tag
    (`reaper:source-fs` = the file system's id), which CreateBackup sets at creation, so a backup whose
    sweep died before it could tag the file system is still found. One DescribeBackups filtered by the
    file system and USER_INITIATED (the filter names API_DescribeBackups documents), paginated.
    """
    filters = [{"Name": "file-system-id", "Values": [fs_id]}, {"Name": "backup-type", "Values": ["USER_INITIATED"]}]
    key = marker_key.strip().lower()
    found: list[Artifact] = []
    for page in fsx.get_paginator("describe_backups").paginate(Filters=filters):
        for b in cast(list[Backup], page.get("Backups", [])):
            marks = {str(t.get("Key", "")).strip().lower(): str(t.get("Value", "")).strip() for t in b.get("Tags") or []}
            if marks.get(key) == fs_id:
                found.append(backup_artifact(b))
    return sorted(found, key=lambda a: a.started_at or datetime.min.replace(tzinfo=UTC), reverse=True)


# A filter's Values take at most 20 items (https://docs.aws.amazon.com/fsx/latest/APIReference/API_Filter.html)
FILTER_VALUES = 20


def made_for_many(fsx: Any, fs_ids: Iterable[str], marker_key: str) -> dict[str, list[Artifact]]:
    """`made_for` of many file systems, by id (every one asked for, [] for one with none): one DescribeBackups
    filtered by up to FILTER_VALUES file system ids and USER_INITIATED, paginated."""
    wanted = sorted(set(fs_ids))
    key = marker_key.strip().lower()
    found: dict[str, list[Artifact]] = {i: [] for i in wanted}
    for i in range(0, len(wanted), FILTER_VALUES):
        filters = [
            {"Name": "file-system-id", "Values": wanted[i : i + FILTER_VALUES]},
            {"Name": "backup-type", "Values": ["USER_INITIATED"]},
        ]
        for page in fsx.get_paginator("describe_backups").paginate(Filters=filters):
            for b in page.get("Backups", []):
                marks = {str(t.get("Key", "")).strip().lower(): str(t.get("Value", "")).strip() for t in b.get("Tags") or []}
                if marks.get(key) in found:
                    found[marks[key]].append(backup_artifact(b))
    none = datetime.min.replace(tzinfo=UTC)
    return {i: sorted(arts, key=lambda a: a.started_at or none, reverse=True) for i, arts in found.items()}


def tasks(fsx: Any, ids: Iterable[str]) -> dict[str, Artifact]:
    wanted = sorted(set(ids))
    answer = fsx.describe_data_repository_tasks
    found = _batched(wanted, lambda batch: cast(list[DataRepositoryTask], answer(TaskIds=batch).get("DataRepositoryTasks", [])), _task_id)
    return {i: task_artifact(found[i]) if i in found else Artifact("export", i, found=False, lifecycle="DELETED") for i in wanted}


def _backup_id(b: Backup) -> str:
    return b["BackupId"]


def _task_id(t: DataRepositoryTask) -> str:
    return t["TaskId"]


def backup_artifact(b: Backup) -> Artifact:
    created = b.get("CreationTime")
    return Artifact(
        "backup",
        b["BackupId"],
        lifecycle=b.get("Lifecycle", "UNKNOWN"),
        started_at=as_utc(created) if created else None,
        progress=b.get("ProgressPercent"),
        failure=(b.get("FailureDetails") or {}).get("Message"),
    )


def task_artifact(t: DataRepositoryTask) -> Artifact:
    status = t.get("Status") or {}
    started = t.get("StartTime") or t.get("CreationTime")
    report = t.get("Report") or {}
    return Artifact(
        "export",
        t["TaskId"],
        lifecycle=t.get("Lifecycle", "UNKNOWN"),
        started_at=as_utc(t["CreationTime"]) if t.get("CreationTime") else (as_utc(started) if started else None),
        ended_at=as_utc(t["EndTime"]) if t.get("EndTime") else None,
        failure=(t.get("FailureDetails") or {}).get("Message"),
        failed_files=int(status.get("FailedCount") or 0),
        total_files=int(status.get("TotalCount") or 0),
        report_path=report.get("Path") if report.get("Enabled") else None,
    )

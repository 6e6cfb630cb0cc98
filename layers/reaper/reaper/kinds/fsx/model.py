"""Plain data for the FSx for Lustre kind: what discovery knows of a file system, how its data can
be kept, the training jobs that use it, its I/O, the backup or export that stands between the two
phases of a delete, and the restore record kept in the action log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, TypedDict

from reaper.aws.metrics import Series
from reaper.kinds.fsx.shapes import DataRepositoryAssociation, LustreFileSystemConfiguration

KIND = "fsx"
Method = Literal["backup", "export", "none"]
Coverage = Literal["full", "partial", "none"]
PhaseKind = Literal["backup", "export"]
Phase = tuple[PhaseKind, str]  # ('backup', backup id) or ('export', task id): phase 1 ran

# AWS/FSx client I/O: "For each metric, Amazon FSx for Lustre emits a data point per disk per minute", zero or
# not, so a period with no datapoint is missing data, never idleness (docs/aws-assumptions.md, FSX-1;
# https://docs.aws.amazon.com/fsx/latest/LustreGuide/monitoring-cloudwatch.html)
NAMESPACE = "AWS/FSx"
METRICS = ("DataReadBytes", "DataWriteBytes", "MetadataOperations")
EXCUSABLE = ("DataReadBytes", "MetadataOperations")  # what our own export does to a file system
READ_LAG = timedelta(minutes=5)  # the newest minutes are not read: CloudWatch may not have them yet

BACKUP_TAG = "backup-id"  # on the file system, under the tag prefix: the backup phase 1 started
EXPORT_TAG = "export-task"  # ... or the export task it started
SOURCE_TAG = "source-fs"  # on the backup or task: the file system it keeps
# FSx tag values may not hold a comma (TagValue `^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`,
# https://docs.aws.amazon.com/fsx/latest/APIReference/API_Tag.html): lists of ids on a backup are
# joined with a space; restore also reads the commas that backups made before this change carry.
ID_SEPARATOR = " "
PHASE_TAGS = (BACKUP_TAG, EXPORT_TAG, "warned-at")  # the reaper's own state: never copied to a restored file system
RUNNING_JOB = ("InProgress", "Stopping")


@dataclass(frozen=True)
class Repository:
    """Where an export writes: a file system path linked to an S3 path."""

    file_system_path: str
    data_repository_path: str
    association_id: str | None = None  # None: the file system's own link (ImportPath/ExportPath)
    auto_export: tuple[str, ...] = ()  # the association's AutoExportPolicy events (NEW, CHANGED, DELETED)
    auto_import: tuple[str, ...] = ()  # ... and AutoImportPolicy events, kept as they are when export is turned off


@dataclass(frozen=True)
class Protection:
    """How the data of a file system can be had back after it is deleted."""

    method: Method
    coverage: Coverage = "none"
    repositories: tuple[Repository, ...] = ()
    why: str = ""

    @property
    def report_path(self) -> str | None:
        roots = [r for r in self.repositories if r.file_system_path == "/"]
        chosen = roots[0] if roots else (self.repositories[0] if self.repositories else None)
        return chosen.data_repository_path if chosen else None

    def where(self) -> str:
        return ", ".join(f"{r.file_system_path} → {r.data_repository_path}" for r in self.repositories) or "nowhere"


@dataclass(frozen=True)
class FsxFacts:
    """What DescribeFileSystems says of a Lustre file system that the rules and the actions need."""

    deployment: str  # SCRATCH_1, SCRATCH_2, PERSISTENT_1, PERSISTENT_2
    capacity_gib: int
    protection: Protection
    phase: Phase | None = None
    storage_type: str | None = None
    per_unit_throughput: int | None = None
    subnet_ids: tuple[str, ...] = ()
    vpc_id: str | None = None
    network_interface_ids: tuple[str, ...] = ()
    kms_key_id: str | None = None
    file_system_type_version: str | None = None
    lustre: Mapping[str, Any] = field(default_factory=dict)  # LustreConfiguration as AWS gave it


@dataclass(frozen=True)
class JobRef:
    name: str
    status: str
    ended_at: datetime | None  # None while it runs

    @property
    def running(self) -> bool:
        return self.status in RUNNING_JOB


@dataclass(frozen=True)
class Artifact:
    """The backup or export task phase 1 started, as AWS reports it now."""

    kind: Literal["backup", "export"]
    id: str
    found: bool = True
    lifecycle: str = "UNKNOWN"
    started_at: datetime | None = None
    ended_at: datetime | None = None
    progress: int | None = None
    failure: str | None = None
    failed_files: int = 0
    total_files: int = 0
    report_path: str | None = None

    @property
    def done(self) -> bool:
        """Confirmed: the data can be had back from it."""
        if self.kind == "backup":
            return self.found and self.lifecycle == "AVAILABLE"
        return self.found and self.lifecycle == "SUCCEEDED" and self.failed_files == 0

    @property
    def running(self) -> bool:
        if self.kind == "backup":
            return self.lifecycle in ("CREATING", "PENDING", "TRANSFERRING", "COPYING")
        return self.lifecycle in ("PENDING", "EXECUTING", "CANCELING")


@dataclass(frozen=True)
class IoFinding:
    """What the I/O of a window says (rules.judge)."""

    periods: int  # periods in the window
    missing: int  # periods some metric has no datapoint for
    last_active: datetime | None  # end of the newest period with I/O (None: none in the window)
    totals: dict[str, float]  # per metric, over the window (excused I/O left out)
    excused: int = 0  # periods with reads/metadata only while our own export ran
    newest_missing: datetime | None = None  # end of the newest period with no datapoint (None: none missing)

    @property
    def idle(self) -> bool:
        return self.missing == 0 and self.last_active is None


@dataclass(frozen=True)
class FsxSignal:
    jobs: tuple[JobRef, ...] = ()
    jobs_lookback_days: float = 14  # how far back training jobs were read
    io: dict[str, Series] | None = None  # metric name -> (period start, sum); None = not read
    period: int = 300
    window_end: datetime | None = None
    artifact: Artifact | None = None


def phase_of(tags: Mapping[str, str], prefix: str) -> Phase | None:
    """('backup', id) or ('export', id) from the file system's phase tags, if phase 1 ran."""
    by_key = {k.strip().lower(): v.strip() for k, v in tags.items()}
    backup = by_key.get((prefix + BACKUP_TAG).lower())
    if backup:
        return ("backup", backup)
    task = by_key.get((prefix + EXPORT_TAG).lower())
    if task:
        return ("export", task)
    return None


def protection(deployment: str, lustre: LustreFileSystemConfiguration, associations: list[DataRepositoryAssociation]) -> Protection:
    """Backup for persistent file systems with no data repository; export for those linked to S3; else nothing.

    AWS backs up a Lustre file system only if it is persistent and not linked to a data repository,
    the old way (ImportPath/ExportPath) or by a data repository association
    (https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateBackup.html); scratch ones cannot
    be backed up at all. A linked one, persistent or scratch, keeps its data in S3 through an export
    task. An export keeps only what is under a linked path, so it covers the whole file system only
    when "/" is linked.
    """
    legacy = lustre.get("DataRepositoryConfiguration") or {}
    if deployment.startswith("PERSISTENT") and not legacy and not associations:
        return Protection("backup", "full", why=f"{deployment} file systems can be backed up")
    if legacy:
        state = legacy.get("Lifecycle", "UNKNOWN")
        export_path = legacy.get("ExportPath")
        if state == "AVAILABLE" and export_path:
            return Protection("export", "full", (Repository("/", export_path),), why=f"linked to {export_path}")
        return Protection("none", why=f"its S3 link is {state}{'' if export_path else ' with no export path'}: an export would not run")
    usable = [a for a in associations if a.get("Lifecycle") == "AVAILABLE" and str(a.get("DataRepositoryPath", "")).startswith("s3://")]
    broken = [a for a in associations if a not in usable]
    if usable:
        repos = tuple(
            Repository(
                a.get("FileSystemPath") or "/",
                a["DataRepositoryPath"],
                a.get("AssociationId"),
                tuple(((a.get("S3") or {}).get("AutoExportPolicy") or {}).get("Events") or ()),
                tuple(((a.get("S3") or {}).get("AutoImportPolicy") or {}).get("Events") or ()),
            )
            for a in usable
        )
        coverage: Coverage = "full" if any(r.file_system_path == "/" for r in repos) else "partial"
        why = "linked to S3 at /" if coverage == "full" else f"only {', '.join(r.file_system_path for r in repos)} linked to S3"
        return Protection("export", coverage, repos, why=why)
    if broken:
        states = ", ".join(f"{a.get('AssociationId')} is {a.get('Lifecycle')}" for a in broken)
        return Protection("none", why=f"its data repository association is not usable ({states}): an export would not run")
    what = "scratch file system" if deployment.startswith("SCRATCH") else f"{deployment or 'unknown'} file system"
    return Protection("none", why=f"a {what} with no data repository: it cannot be backed up or exported")


class RepositoryRecord(TypedDict):
    file_system_path: str
    data_repository_path: str
    association_id: str | None


class RestoreRecord(TypedDict, total=False):
    """What the action log keeps for `reaper restore fs-…` (written in phase 1 and just before a delete)."""

    kind: str
    id: str
    arn: str
    region: str
    account: str
    method: Method
    status: str  # backing-up, exporting, deleted, restored
    coverage: Coverage
    repositories: list[RepositoryRecord]
    config: dict[str, Any]  # CreateFileSystem parameters that make the same file system again
    tags: dict[str, str]  # the owner's: never `aws:` keys (no caller may set them) nor the reaper's phase state
    system_tags: list[str]  # the `aws:` keys it had, which no restore can bring back
    monthly_usd: float | None
    recorded_at: str
    event_id: str
    backup_id: str | None
    export_task_id: str | None
    auto_export_disabled: list[str]  # associations whose automatic export was turned off for the export task
    deleted_at: str
    data_gone: bool
    restored_as: str
    restored_at: str

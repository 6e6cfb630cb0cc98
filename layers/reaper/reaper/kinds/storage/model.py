"""Plain data for the storage kind: what discovery knows of a backup or a volume, the snapshot that stands
between the two phases of a volume's delete, and the restore record kept in the action log."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, TypedDict

KIND = "storage"
What = Literal["fsx-backup", "ebs-volume", "stopped-box-volume"]

SNAPSHOT_TAG = "snapshot-id"  # on the volume, under the tag prefix: the snapshot phase 1 took
SOURCE_VOLUME_TAG = "source-volume"  # on the snapshot: the volume it keeps
SOURCE_FS_TAG = "source-fs"  # on an FSx backup the reaper made (kinds/fsx/model.py SOURCE_TAG)
# the volume as it was, on the snapshot, so a restore needs nothing but the snapshot
SOURCE_AZ_TAG, SOURCE_TYPE_TAG, SOURCE_SIZE_TAG = "source-az", "source-type", "source-size-gib"
SOURCE_IOPS_TAG, SOURCE_THROUGHPUT_TAG = "source-iops", "source-throughput"
# the reaper's own state on a volume or snapshot: never copied to a restored volume
OWN_TAGS = ("warned-at", SNAPSHOT_TAG)
ML_TAG_KEYS = ("ml:*", "ML:*", "Ml:*", "mL:*")  # EC2 filters are case-sensitive; docs/tags.md reads keys whatever their case
# a phase-1 snapshot left unmarked is carried on by the next phase 1 within this window (actions._earlier); past it,
# one that no marker nor restore record names is reported (discover.own_snapshots, docs/kinds/storage.md)
CARRY_ON_WINDOW = timedelta(days=1)
SNAPSHOT_RUNNING = ("pending",)  # API_Snapshot State: pending | completed | error | recoverable | recovering


@dataclass(frozen=True)
class BackupFacts:
    """An FSx backup the reaper made: the file system it keeps and whether that still exists."""

    source_fs: str
    source_exists: bool
    size_gib: int | None = None  # the backed-up file system's capacity (FSx bills the backup's stored size)


@dataclass(frozen=True)
class ImportedModelFacts:
    """A Bedrock imported model (Custom Model Import): stored, and billed for that, until someone deletes it."""

    name: str
    architecture: str | None = None


@dataclass(frozen=True)
class SpaceFacts:
    """A SageMaker Studio space (kinds/storage/spaces.py): its EBS storage is billed until someone deletes the space.

    `apps` are its apps ListApps lists that are not Deleted (in use); `recent_apps` those Deleted that ListApps still
    lists, i.e. shut down within the last 24 hours (AWS then forgets them: API_DescribeApp, CreationTime)."""

    domain_id: str
    space_name: str
    owner_profile: str | None = None
    shared: bool = False
    size_gib: int | None = None  # SpaceStorageSettings.EbsStorageSettings.EbsVolumeSizeInGb; None: AWS does not say
    apps: tuple[str, ...] = ()  # "JupyterLab/default (InService)"
    recent_apps: tuple[str, ...] = ()  # "JupyterLab/default (Deleted)"
    # CloudTrail's CreateApp events (kinds/storage/app_starts.py): the newest for this space, read back to
    # `starts_since`; None there: not read (`starts_unread` says why, or no space lacked an app)
    last_start: datetime | None = None
    starts_since: datetime | None = None
    starts_unread: str | None = None


@dataclass(frozen=True)
class VolumeFacts:
    """What DescribeVolumes says of a volume that a restore and the rules need."""

    availability_zone: str
    volume_type: str
    size_gib: int
    iops: int | None = None
    throughput: int | None = None
    encrypted: bool = False
    kms_key_id: str | None = None
    snapshot_id: str | None = None  # the reaper's phase-1 snapshot (its tag), if phase 1 ran
    snapshot_seen: SnapshotState | None = None  # ... as discovery's listing of the reaper's snapshots found it (None: read by id)
    instance_id: str | None = None  # a stopped box's volume: the instance
    stopped_since: datetime | None = None  # ... and since when it is stopped (StateTransitionReason)


@dataclass(frozen=True)
class OwnSnapshotFacts:
    """A snapshot the reaper made of a volume (tagged `source-volume` at creation), begun more than a day ago, that no
    discovered volume's `snapshot-id` marker names: recorded or not, the restore records say (StorageSignal.recorded)."""

    source_volume: str
    size_gib: int | None = None  # VolumeSize: the volume's size (EBS bills the snapshot's stored blocks, at most this)
    started_at: datetime | None = None


@dataclass(frozen=True)
class SnapshotState:
    """The snapshot phase 1 started, as EC2 reports it now."""

    id: str
    found: bool = True
    state: str = "unknown"
    started_at: datetime | None = None
    progress: str | None = None
    message: str | None = None

    @property
    def done(self) -> bool:
        return self.found and self.state == "completed"

    @property
    def running(self) -> bool:
        return self.found and self.state in SNAPSHOT_RUNNING


@dataclass(frozen=True)
class StorageSignal:
    snapshot: SnapshotState | None = None  # a volume's phase-1 snapshot; None: none started (or not a volume)
    # a reaper's own snapshot (OwnSnapshotFacts): does its volume's latest restore record name it; None: not read (no log)
    recorded: bool | None = None
    extra: dict[str, str] = field(default_factory=dict)


class RestoreRecord(TypedDict, total=False):
    """What the action log keeps for `reaper restore vol-…` (written when the snapshot starts and just before the delete)."""

    kind: str
    id: str
    arn: str
    region: str
    account: str
    snapshot_id: str
    availability_zone: str
    volume_type: str
    size_gib: int
    iops: int | None
    throughput: int | None
    encrypted: bool
    kms_key_id: str | None
    tags: dict[str, str]
    status: str  # snapshotting, deleted, restored
    recorded_at: str
    event_id: str
    deleted_at: str
    restored_as: str
    restored_at: str

"""What the storage kind does: delete a reaper-made FSx backup past the admin's retention; snapshot an
unattached ML volume (phase 1) and delete it once the snapshot is completed (phase 2).

Where the state between a volume's phases lives: on the volume (`reaper:snapshot-id`), on the snapshot
(`reaper:source-volume` and the volume's zone, type, size, IOPS, throughput, with its tags), and in the
action log's restore record (written when the snapshot starts and again just before the delete), so
`reaper restore vol-…` works from either. Phase 2 re-reads the snapshot right before deleting: anything
but `completed` refuses. The IAM permissions of each action are declared with it, in the declaration.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import is_not_found
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import iso
from reaper.kinds.base import ActContext, Made, Unconfirmed, action_named
from reaper.kinds.storage import ActionName
from reaper.kinds.storage.model import (
    KIND,
    OWN_TAGS,
    SNAPSHOT_TAG,
    SOURCE_AZ_TAG,
    SOURCE_IOPS_TAG,
    SOURCE_SIZE_TAG,
    SOURCE_THROUGHPUT_TAG,
    SOURCE_TYPE_TAG,
    SOURCE_VOLUME_TAG,
    BackupFacts,
    RestoreRecord,
    VolumeFacts,
)
from reaper.kinds.storage.signals import snapshots

MAX_TAGS = 50  # EC2: "Maximum number of tags per resource – 50" (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Tags.html)


def token(ctx: ActContext, resource: Resource, action: str) -> str:
    return hashlib.sha256(f"{ctx.event_id}|{resource.id}|{action}".encode()).hexdigest()[:40]


def owners_tags(tags: dict[str, str], prefix: str) -> dict[str, str]:
    """The owner's tags: without AWS's own (`aws:` keys cannot be set) and the reaper's state on the volume."""
    own = {(prefix + t).lower() for t in OWN_TAGS}
    return {k: v for k, v in tags.items() if not k.strip().lower().startswith("aws:") and k.strip().lower() not in own}


# -- FSx backups -------------------------------------------------------------------------------


def describe_backup(clients: Clients, backup_id: str) -> dict[str, Any] | None:
    try:
        found: list[dict[str, Any]] = clients("fsx").describe_backups(BackupIds=[backup_id]).get("Backups", [])
    except ClientError as exc:
        if is_not_found(exc):  # BackupNotFound
            return None
        raise
    return found[0] if found else None


def delete_backup(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """DeleteBackup, the gate having read its state and its tags (reaper:keep included, Parts.guard) a moment ago."""
    facts = resource.facts_as(BackupFacts)
    ctx.clients("fsx").delete_backup(BackupId=resource.id, ClientRequestToken=token(ctx, resource, "delete-backup"))
    days = ctx.settings.storage_backup_retention_days
    return f"deleted (the retention of {days} d set by StorageBackupRetentionDays): file system {facts.source_fs} can no longer be restored"


# -- EBS volumes -------------------------------------------------------------------------------


def describe_volume(clients: Clients, volume_id: str) -> dict[str, Any] | None:
    try:
        found: list[dict[str, Any]] = clients("ec2").describe_volumes(VolumeIds=[volume_id]).get("Volumes", [])
    except ClientError as exc:
        if is_not_found(exc):  # InvalidVolume.NotFound
            return None
        raise
    return found[0] if found else None


def _snapshot_tags(ctx: ActContext, resource: Resource, tags: dict[str, str]) -> list[dict[str, str]]:
    f = resource.facts_as(VolumeFacts)
    tag = ctx.settings.tag
    ours = {
        tag(SOURCE_VOLUME_TAG): resource.id,
        tag(SOURCE_AZ_TAG): f.availability_zone,
        tag(SOURCE_TYPE_TAG): f.volume_type,
        tag(SOURCE_SIZE_TAG): str(f.size_gib),
        tag(SOURCE_IOPS_TAG): str(f.iops or ""),
        tag(SOURCE_THROUGHPUT_TAG): str(f.throughput or ""),
    }
    ours = {k: v for k, v in ours.items() if v}
    copied = [(k, v) for k, v in owners_tags(tags, ctx.settings.tag_prefix).items() if k not in ours][: MAX_TAGS - len(ours)]
    return [{"Key": k, "Value": v} for k, v in [*ours.items(), *copied]]


def restore_record(ctx: ActContext, resource: Resource, snapshot_id: str, status: str, tags: dict[str, str]) -> RestoreRecord:
    f = resource.facts_as(VolumeFacts)
    return {
        "kind": KIND,
        "id": resource.id,
        "arn": resource.arn,
        "region": resource.region,
        "account": resource.account,
        "snapshot_id": snapshot_id,
        "availability_zone": f.availability_zone,
        "volume_type": f.volume_type,
        "size_gib": f.size_gib,
        "iops": f.iops,
        "throughput": f.throughput,
        "encrypted": f.encrypted,
        "kms_key_id": f.kms_key_id,
        "tags": owners_tags(tags, ctx.settings.tag_prefix),
        "status": status,
        "recorded_at": iso(ctx.now),
        "event_id": ctx.event_id,
    }


def earlier_snapshot(ctx: ActContext, resource: Resource) -> dict[str, Any] | None:
    """A snapshot of this volume an earlier sweep began (tagged by the reaper) and could not mark on the volume."""
    filters = [
        {"Name": "volume-id", "Values": [resource.id]},
        {"Name": f"tag:{ctx.settings.tag(SOURCE_VOLUME_TAG)}", "Values": [resource.id]},
        {"Name": "status", "Values": ["pending", "completed"]},
    ]
    since = ctx.now - timedelta(days=1)
    found = ctx.clients("ec2").describe_snapshots(OwnerIds=["self"], Filters=filters).get("Snapshots", [])
    recent = [s for s in found if s.get("StartTime") is None or s["StartTime"] >= since]
    return recent[0] if recent else None


def snapshot(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """Phase 1: carry on with a snapshot an earlier sweep began, else CreateSnapshot with the volume recorded in its tags."""
    assert ctx.log is not None  # the action declares needs_log; the pipeline refuses without one
    fresh: dict[str, str] | None = ctx.gated(resource.arn, "tags")
    tags = fresh if fresh is not None else resource.tags
    ec2 = ctx.clients("ec2")
    adopted = earlier_snapshot(ctx, resource)
    snap: dict[str, Any] = adopted or ec2.create_snapshot(
        VolumeId=resource.id,
        Description=f"mlreaper: {resource.id} before it is deleted (reaper restore {resource.id})",
        TagSpecifications=[{"ResourceType": "snapshot", "Tags": _snapshot_tags(ctx, resource, tags)}],
    )
    snap_id, state = snap["SnapshotId"], snap.get("State", "pending")
    ctx.log.put_restore(KIND, resource.id, dict(restore_record(ctx, resource, snap_id, "snapshotting", tags)), ctx.now)
    ec2.create_tags(Resources=[resource.id], Tags=[{"Key": ctx.settings.tag(SNAPSHOT_TAG), "Value": snap_id}])
    began = f"snapshot {snap_id}, begun by an earlier sweep, carried on" if adopted else f"snapshot {snap_id} started"
    return (
        f"{began} ({state}); {resource.id} is deleted at a later sweep once it is completed — then `reaper restore {resource.id}` "
        f"makes the volume again from it"
    )


def delete_volume(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """Phase 2: delete, having re-read the snapshot a moment ago: it must still be completed."""
    assert ctx.log is not None
    snap_id = resource.facts_as(VolumeFacts).snapshot_id
    if not snap_id:
        raise ActionRefused("DeleteVolume", "no snapshot recorded on the volume: nothing deleted")
    snap = snapshots(ctx.clients("ec2"), [snap_id])[snap_id]
    if not snap.done:
        raise ActionRefused("DeleteVolume", f"snapshot {snap_id} is {snap.state} now, not completed: nothing deleted")
    fresh: dict[str, str] | None = ctx.gated(resource.arn, "tags")
    record = restore_record(ctx, resource, snap_id, "deleted", fresh if fresh is not None else resource.tags)
    record["deleted_at"] = iso(ctx.now)
    ctx.log.put_restore(KIND, resource.id, dict(record), ctx.now)
    ctx.clients("ec2").delete_volume(VolumeId=resource.id)
    return (
        f"deleted; its data is in snapshot {snap_id} (completed, {resource.region}) — `reaper restore {resource.id}` makes a volume "
        f"from it with the same zone, type, size, IOPS, throughput and tags"
    )


# -- the state check just before acting, the guard, and undo ------------------------------------


def current_read(clients: Clients, resource: Resource) -> tuple[str | None, Any]:
    if isinstance(resource.facts, BackupFacts):
        backup = describe_backup(clients, resource.id)
        return (None, None) if backup is None else (str(backup.get("Lifecycle", "UNKNOWN")), backup)
    volume = describe_volume(clients, resource.id)
    return (None, None) if volume is None else (str(volume.get("State", "unknown")), volume)


def current_state(clients: Clients, resource: Resource) -> str | None:
    return current_read(clients, resource)[0]


def guard(resource: Resource, view: TagView, settings: Settings, ruled: Decision | None) -> str | None:
    """A backup tagged reaper:keep=true is never deleted, whatever asks (read again just before the delete)."""
    if isinstance(resource.facts, BackupFacts) and view.keep:
        return f"tagged {settings.tag('keep')}=true"
    return None


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A deletion is made once the backup or volume is gone (or deleting); a snapshot once the volume has one the reaper tagged since."""
    match action_named(ActionName, change.action):
        case ActionName.DELETE_BACKUP:
            backup = describe_backup(clients, change.id)
            return Made(True, "gone") if backup is None else Made.by_state("Lifecycle", backup.get("Lifecycle"), {"DELETED"}, {"AVAILABLE"})
        case ActionName.DELETE_VOLUME:
            volume = describe_volume(clients, change.id)
            return Made(True, "gone") if volume is None else Made.by_state("State", volume.get("State"), {"deleting"}, {"available"})
        case ActionName.SNAPSHOT:
            since = change.since - timedelta(minutes=1)
            found = clients("ec2").describe_snapshots(OwnerIds=["self"], Filters=[{"Name": "volume-id", "Values": [change.id]}])
            made = [s for s in found.get("Snapshots", []) if s.get("StartTime") and s["StartTime"] >= since and s.get("State") != "error"]
            return Made(True, f"snapshot {made[0]['SnapshotId']} {made[0].get('State')}") if made else Made(False, "no snapshot since")
        case None:
            return Made(None, f"nothing reads whether {change.action} was made")
        case other:
            assert_never(other)


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.DELETE_BACKUP:
            return "none: a deleted backup cannot be brought back (tag reaper:keep=true on a backup to keep it from the retention)"
        case ActionName.SNAPSHOT | ActionName.DELETE_VOLUME:
            return f"reaper restore {resource.id}   # a new volume from the snapshot: same zone, type, size, IOPS, throughput, tags"
        case _:
            assert_never(name)

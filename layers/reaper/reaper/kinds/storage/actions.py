"""What the storage kind does: delete a reaper-made FSx backup past the admin's retention; snapshot an
unattached ML volume (phase 1) and delete it once the snapshot is completed (phase 2).

Where the state between a volume's phases lives: on the volume (`reaper:snapshot-id`), on the snapshot
(`reaper:source-volume` and the volume's zone, type, size, IOPS, throughput, with its tags), and in the
action log's restore record (written once the snapshot exists, before the volume is marked, and again just
before the delete), so `reaper restore vol-…` works from either. A sweep makes them in batches (`act_many`):
what they need beyond their gates read once, their records in one TransactWriteItems, each change its own
call. Phase 2 re-reads the snapshot right before deleting: anything but `completed` refuses. The IAM
permissions of each action are declared with it, in the declaration.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, error_code, is_not_found, short
from reaper.core.errors import ActionRefused
from reaper.core.model import Decision, KindAction, Resource
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import iso
from reaper.kinds.base import ActContext, BatchAnswer, Made, Unconfirmed, action_named
from reaper.kinds.recorded import Run, alone, by_action, record_then_change
from reaper.kinds.storage import ActionName
from reaper.kinds.storage.model import (
    CARRY_ON_WINDOW,
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
from reaper.kinds.storage.settings import StorageSettings
from reaper.kinds.storage.signals import IDS_PER_CALL, snapshots

log = logging.getLogger("reaper")

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
    days = ctx.settings.of(StorageSettings).storage_backup_retention_days
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


# EC2 takes at most IDS_PER_CALL (200) filter values in one call, all its filters' values together
# (docs/aws-assumptions.md, KF-5): a chunk's ids go in two filters beside the statuses, so 99 volumes a call
EARLIER_STATUSES = ["pending", "completed"]
VOLUMES_PER_EARLIER_READ = (IDS_PER_CALL - len(EARLIER_STATUSES)) // 2


def earlier_snapshots(ctx: ActContext, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The snapshots earlier sweeps began of these volumes and could not mark on them (tagged by the reaper at
    creation, begun within a day), by volume id: one DescribeSnapshots for a batch, filtered by `volume-id` and
    the reaper's `source-volume` tag (VOLUMES_PER_EARLIER_READ volumes a call, paged). A filter, not SnapshotIds:
    nothing fails for a volume that has none (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSnapshots.html).
    docs/kinds/storage.md, *Many at a time*."""
    return _earlier(ctx, ids)[0]


def _earlier(ctx: ActContext, ids: Sequence[str]) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    """(earlier_snapshots, {volume: the reaper's unmarked snapshots of it begun more than a day ago}): those are not
    carried on (the volume may have been written since) and are said beside the fresh one (docs/kinds/storage.md,
    *Many at a time*), never left beside it unseen."""
    key, since = ctx.settings.tag(SOURCE_VOLUME_TAG), ctx.now - CARRY_ON_WINDOW
    wanted = list(dict.fromkeys(ids))
    found: dict[str, dict[str, Any]] = {}
    stale: dict[str, list[str]] = {}
    for n in range(0, len(wanted), VOLUMES_PER_EARLIER_READ):
        chunk = wanted[n : n + VOLUMES_PER_EARLIER_READ]
        filters = [
            {"Name": "volume-id", "Values": chunk},
            {"Name": f"tag:{key}", "Values": chunk},
            {"Name": "status", "Values": EARLIER_STATUSES},
        ]
        for page in ctx.clients("ec2").get_paginator("describe_snapshots").paginate(OwnerIds=["self"], Filters=filters):
            for s in page.get("Snapshots", []):
                vol, tags = s.get("VolumeId"), {t["Key"]: t.get("Value", "") for t in s.get("Tags", [])}
                if vol not in chunk or tags.get(key) != vol:
                    continue
                if s.get("StartTime") is not None and s["StartTime"] < since:
                    stale.setdefault(vol, []).append(str(s["SnapshotId"]))
                elif vol not in found:
                    found[vol] = s
    return found, stale


@dataclass
class _Begun:
    """A phase-1 snapshot made or carried on; its record still to be written, its volume still to be marked."""

    resource: Resource
    snap_id: str
    state: str
    adopted: bool
    record: RestoreRecord
    left: tuple[str, ...] = ()  # the reaper's unmarked snapshots of it begun more than a day ago (_earlier)

    def said(self) -> str:
        began = f"snapshot {self.snap_id}, begun by an earlier sweep, carried on" if self.adopted else f"snapshot {self.snap_id} started"
        rid = self.resource.id
        return (
            f"{began} ({self.state}); {rid} is deleted at a later sweep once it is completed — then `reaper restore {rid}` "
            f"makes the volume again from it{self.also()}"
        )

    def also(self) -> str:
        if not self.left:
            return ""
        ids = " ".join(self.left)
        return (
            f"; the reaper's earlier snapshot {', '.join(self.left)} of it, begun more than a day ago and never recorded, is "
            f"left as it was (not carried on: the volume may have changed since) and still billed: "
            f"`aws ec2 delete-snapshot --snapshot-id` {ids} once {self.snap_id} is completed"
        )


def act_many(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """A sweep's snapshots or volume deletes, up to ACT_BATCH (reaper.kinds.storage) at a time: what they need beyond
    their gates read once for the batch, their restore records in one TransactWriteItems, each change its own call."""
    runs: dict[ActionName | None, Run] = {
        ActionName.SNAPSHOT: _snapshots,
        ActionName.DELETE_VOLUME: _deletes,
    }
    return by_action(ctx, items, lambda d: action_named(ActionName, d.action), runs, ActionRefused)  # a backup's delete: never batched


def snapshot(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """Phase 1 alone (an event, a button, a batch too small): a batch of one."""
    return alone(_snapshots(ctx, [(resource, decision)]), resource)


def _snapshots(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """Phase 1: carry on with a snapshot an earlier sweep began, else CreateSnapshot with the volume recorded in its
    tags; then the records of those made in one write; then each volume marked (`reaper:snapshot-id`).

    Each volume marked only once its record is written: a volume that names its snapshot has its restore record.
    A record refused or throttled leaves the snapshot unmarked, an error of that change, and the next sweep finds
    it (earlier_snapshots, by the tags it was created with) and carries it on: never made twice, never lost.
    Without the batch's read of earlier snapshots nothing is made (one might exist)."""
    assert ctx.log is not None  # the action declares needs_log; the pipeline refuses without one
    try:
        earlier, stale = _earlier(ctx, [r.id for r, _ in items])
    except AwsError as exc:
        return BatchAnswer(own={r.id: exc for r, _ in items})
    own: dict[str, BaseException] = {}
    begun: list[_Begun] = []
    for r, _ in items:
        try:
            begun.append(_begin(ctx, r, earlier.get(r.id), tuple(stale.get(r.id, ()))))
        except Exception as exc:  # refused, an AWS error, or a bug: this volume's (reaper.sweep.batch._own_error)
            own[r.id] = exc
    if not begun:
        return BatchAnswer(own=own)
    try:
        ctx.log.put_restores(KIND, [(b.resource.id, dict(b.record)) for b in begun], ctx.now)
    except AwsError as exc:
        log.warning("%d snapshots made, their restore records not written: %s", len(begun), short(exc))
        unwritten = {b.resource.id: _unrecorded(ctx, b, exc, "its restore record not written") for b in begun}
        return BatchAnswer(own={**own, **unwritten})
    done: dict[str, str | None] = {}
    for b in begun:
        try:
            # the snapshot too, in the same call: its own id under `snapshot-id` says its record was written, so discovery
            # never asks the log about it (discover.unmarked_snapshots; docs/kinds/storage.md, *Snapshots left unrecorded*)
            marked = [b.resource.id, b.snap_id]
            ctx.clients("ec2").create_tags(Resources=marked, Tags=[{"Key": ctx.settings.tag(SNAPSHOT_TAG), "Value": b.snap_id}])
        except AwsError as exc:
            own[b.resource.id] = _unrecorded(ctx, b, exc, "recorded, not marked on the volume")
            continue
        done[b.resource.id] = b.said()
    return BatchAnswer(done=done, own=own)


def _begin(ctx: ActContext, resource: Resource, adopted: dict[str, Any] | None, left: tuple[str, ...] = ()) -> _Begun:
    fresh: dict[str, str] | None = ctx.gated(resource.arn, "tags")
    tags = fresh if fresh is not None else resource.tags
    snap: dict[str, Any] = adopted or ctx.clients("ec2").create_snapshot(
        VolumeId=resource.id,
        Description=f"mlreaper: {resource.id} before it is deleted (reaper restore {resource.id})",
        TagSpecifications=[{"ResourceType": "snapshot", "Tags": _snapshot_tags(ctx, resource, tags)}],
    )
    snap_id = str(snap["SnapshotId"])
    record = restore_record(ctx, resource, snap_id, "snapshotting", tags)
    return _Begun(resource, snap_id, str(snap.get("State", "pending")), adopted is not None, record, left)


def _unrecorded(ctx: ActContext, b: _Begun, exc: BaseException, what: str) -> ClientError:
    """A snapshot made whose record was not written, or whose volume was not marked: its change's error (the code
    AWS gave), saying the snapshot exists and what the next sweep does with it (docs/safety.md, *Storage volumes in batches*)."""
    said = (
        f"snapshot {b.snap_id} of {b.resource.id} exists ({b.state}), {what} ({short(exc)}): nothing is deleted; the next "
        f"sweep finds it by its {ctx.settings.tag(SOURCE_VOLUME_TAG)} tag, carries it on and records it; should "
        f"{b.resource.id} be exempted, snoozed or attached first, {b.snap_id} stays, billed and recorded nowhere: "
        f"`aws ec2 delete-snapshot --snapshot-id {b.snap_id}` if it is not wanted{b.also()}"
    )
    return ClientError({"Error": {"Code": error_code(exc) or "Unrecorded", "Message": said}}, "CreateSnapshot")


def delete_volume(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """Phase 2 alone (an event, a button, a batch too small): a batch of one."""
    return alone(_deletes(ctx, [(resource, decision)]), resource)


def _deletes(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """Phase 2: delete, each having re-read its snapshot after its gate (the batch's in one DescribeSnapshots): it must
    still be completed; the records in one write before the first delete (reaper.kinds.recorded)."""
    marked = {r.id: r.facts_as(VolumeFacts).snapshot_id for r, _ in items}
    try:
        found = snapshots(ctx.clients("ec2"), sorted({s for s in marked.values() if s}))
    except AwsError as exc:
        return BatchAnswer(own={r.id: exc for r, _ in items})

    def plan(ctx: ActContext, resource: Resource, decision: Decision) -> RestoreRecord:
        snap_id = marked[resource.id]
        if not snap_id:
            raise ActionRefused("DeleteVolume", "no snapshot recorded on the volume: nothing deleted")
        snap = found[snap_id]
        if not snap.done:
            raise ActionRefused("DeleteVolume", f"snapshot {snap_id} is {snap.state} now, not completed: nothing deleted")
        fresh: dict[str, str] | None = ctx.gated(resource.arn, "tags")
        record = restore_record(ctx, resource, snap_id, "deleted", fresh if fresh is not None else resource.tags)
        record["deleted_at"] = iso(ctx.now)
        return record

    def make(ctx: ActContext, resource: Resource, decision: Decision, record: Mapping[str, Any]) -> str:
        ctx.clients("ec2").delete_volume(VolumeId=resource.id)
        rid, snap_id = resource.id, record["snapshot_id"]
        return (
            f"deleted; its data is in snapshot {snap_id} (completed, {resource.region}) — `reaper restore {rid}` makes a volume "
            f"from it with the same zone, type, size, IOPS, throughput and tags"
        )

    return record_then_change(ctx, KIND, items, plan, make)


def current_many(clients: Clients, resources: Sequence[Resource]) -> dict[str, tuple[str | None, dict[str, str]]]:
    """A batch's volumes read again in one DescribeVolumes by the `volume-id` filter (a volume gone is left out of
    the answer, where VolumeIds would fail the whole call), their tags from the same answer: each Volume carries
    its `Tags` (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Volume.html), so the gates read no
    DescribeTags. Backups are left out (each gate reads its own)."""
    ids = [r.id for r in resources if isinstance(r.facts, VolumeFacts)]
    found: dict[str, dict[str, Any]] = {}
    for n in range(0, len(ids), IDS_PER_CALL):
        filters = [{"Name": "volume-id", "Values": ids[n : n + IDS_PER_CALL]}]
        for page in clients("ec2").get_paginator("describe_volumes").paginate(Filters=filters):
            found.update({v["VolumeId"]: v for v in page.get("Volumes", [])})
    out: dict[str, tuple[str | None, dict[str, str]]] = {}
    for r in resources:
        if isinstance(r.facts, VolumeFacts):
            v = found.get(r.id)
            tags = {t["Key"]: t.get("Value", "") for t in (v or {}).get("Tags", [])}
            out[r.arn] = (None, {}) if v is None else (str(v.get("State", "unknown")), tags)
    return out


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

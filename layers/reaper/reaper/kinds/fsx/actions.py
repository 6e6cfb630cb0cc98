"""What the FSx kind does: phase 1 (start a backup or an export), phase 2 (delete once it is
confirmed), and the deletion with no copy that only `reaper:disposable=true` allows.

Where the state between the phases lives, and why there:
  * on the file system, as a tag (`reaper:backup-id` / `reaper:export-task`): durable, visible in
    the console and to `aws fsx describe-file-systems`, read by the next sweep with no extra call,
    and gone with the file system;
  * in the action log, as the restore record (`ActionLog.put_restore`): written in phase 1 and again
    just before the delete, so `reaper restore fs-…` works even if someone deletes the file
    system between the phases, and after the reaper deletes it;
  * on the backup or task itself (`reaper:source-fs`, and the configuration on a backup), so the
    copy can be traced to its file system from the FSx console alone.
Phase 2 re-reads the backup or task right before deleting: anything but confirmed refuses.
The IAM permissions of each action are declared with it, in the package's declaration.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, is_not_found, short
from reaper.core.errors import ActionRefused
from reaper.core.model import HOURS_PER_MONTH, Decision, KindAction, Resource
from reaper.core.timeutil import iso, parse_instant
from reaper.kinds.base import ActContext, BatchAnswer, Made, ReadNow, Unconfirmed, action_named
from reaper.kinds.fsx import ActionName
from reaper.kinds.fsx.artifacts import backups, made_for, made_for_many, tasks
from reaper.kinds.fsx.model import (
    BACKUP_TAG,
    EXPORT_TAG,
    ID_SEPARATOR,
    KIND,
    PHASE_TAGS,
    SOURCE_TAG,
    Artifact,
    FsxFacts,
    Method,
    RestoreRecord,
)
from reaper.kinds.fsx.settings import FsxSettings
from reaper.kinds.recorded import Run, alone, by_action, record_then_change

log = logging.getLogger("reaper")

# (context, file system, decision) -> a phase-1 change made, its record still to be written
Plan1 = Callable[[ActContext, Resource, Decision], "_Started"]

MAX_TAGS = 50
RESTORABLE_LUSTRE = (
    "DeploymentType",
    "PerUnitStorageThroughput",
    "WeeklyMaintenanceStartTime",
    "DailyAutomaticBackupStartTime",
    "AutomaticBackupRetentionDays",
    "CopyTagsToBackups",
    "DriveCacheType",
    "DataCompressionType",
    "LogConfiguration",
    "RootSquashConfiguration",
    "MetadataConfiguration",
    "EfaEnabled",
    "ThroughputCapacity",
    "DataReadCacheConfiguration",
)


def refuse(operation: str, message: str) -> ActionRefused:
    """A refusal at the last moment: the pipeline reports it as an `error`; nothing was changed."""
    return ActionRefused(operation, message)


def token(ctx: ActContext, resource: Resource, action: str) -> str:
    """The same event acting on the same file system asks AWS for the same thing (idempotent)."""
    return hashlib.sha256(f"{ctx.event_id}|{resource.id}|{action}".encode()).hexdigest()[:40]


def security_groups(ctx: ActContext, resource: Resource) -> list[str]:
    """DescribeFileSystems does not say them: they are on the file system's network interfaces."""
    enis = resource.facts_as(FsxFacts).network_interface_ids
    if not enis:
        return []
    found = ctx.clients("ec2").describe_network_interfaces(NetworkInterfaceIds=list(enis[:1])).get("NetworkInterfaces", [])
    return sorted({g["GroupId"] for eni in found for g in eni.get("Groups", [])})


def security_groups_many(ctx: ActContext, resources: Sequence[Resource]) -> dict[str, list[str]]:
    """A batch's security groups, by file system id, in one DescribeNetworkInterfaces of their first network
    interfaces (its NetworkInterfaceIds takes many: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeNetworkInterfaces.html).
    AWS fails the whole call for one unknown id: then {} and each file system's record reads its own."""
    first = {r.id: r.facts_as(FsxFacts).network_interface_ids[:1] for r in resources}
    wanted = sorted({e for enis in first.values() for e in enis})
    if len(wanted) < 2:
        return {}
    try:
        found = ctx.clients("ec2").describe_network_interfaces(NetworkInterfaceIds=wanted).get("NetworkInterfaces", [])
    except AwsError as exc:
        log.warning("reading %d network interfaces at once failed (%s): each alone", len(wanted), short(exc))
        return {}
    groups = {eni["NetworkInterfaceId"]: sorted({g["GroupId"] for g in eni.get("Groups", [])}) for eni in found}
    return {fs: (groups[enis[0]] if enis else []) for fs, enis in first.items() if not enis or enis[0] in groups}


def is_system_tag(key: str) -> bool:
    """`aws:` keys (any case) are AWS's own: CreateBackup and CreateFileSystemFromBackup refuse them
    (https://docs.aws.amazon.com/general/latest/gr/aws_tagging.html ; docs/aws-assumptions.md row 3)."""
    return key.strip().lower().startswith("aws:")


def kept_tags(tags: dict[str, str], prefix: str) -> dict[str, str]:
    """The owner's tags, without AWS's own (which cannot be set) and the reaper's phase state."""
    phase = {(prefix + t).lower() for t in PHASE_TAGS}
    return {k: v for k, v in tags.items() if not is_system_tag(k) and k.lower() not in phase}


def joined_ids(ids: list[str] | tuple[str, ...], limit: int = 256) -> str:
    """Ids in one FSx tag value: space-separated (a comma is refused), whole ids only, within the 256-character limit."""
    out = ""
    for i in ids:
        more = f"{out}{ID_SEPARATOR}{i}" if out else i
        if len(more) > limit:
            break
        out = more
    return out


def configuration(resource: Resource, groups: list[str]) -> dict[str, Any]:
    f = resource.facts_as(FsxFacts)
    lustre = {k: v for k, v in f.lustre.items() if k in RESTORABLE_LUSTRE}
    return {
        "FileSystemType": "LUSTRE",
        "DeploymentType": f.deployment,
        "StorageCapacity": f.capacity_gib,
        "StorageType": f.storage_type,
        "PerUnitStorageThroughput": f.per_unit_throughput,
        "SubnetIds": list(f.subnet_ids),
        "SecurityGroupIds": groups,
        "VpcId": f.vpc_id,
        "KmsKeyId": f.kms_key_id,
        "FileSystemTypeVersion": f.file_system_type_version,
        "LustreConfiguration": lustre,
    }


def restore_record(
    ctx: ActContext, resource: Resource, method: Method, status: str, groups: Mapping[str, list[str]] | None = None
) -> RestoreRecord:
    """`groups`: the batch's security groups (security_groups_many); a file system it lacks reads its own."""
    p = resource.facts_as(FsxFacts).protection
    sgs = groups[resource.id] if groups is not None and resource.id in groups else security_groups(ctx, resource)
    return {
        "kind": KIND,
        "id": resource.id,
        "arn": resource.arn,
        "region": resource.region,
        "account": resource.account,
        "method": method,
        "status": status,
        "coverage": p.coverage,
        "repositories": [
            {"file_system_path": r.file_system_path, "data_repository_path": r.data_repository_path, "association_id": r.association_id}
            for r in p.repositories
        ],
        "config": configuration(resource, sgs),
        "tags": kept_tags(resource.tags, ctx.settings.tag_prefix),
        "system_tags": sorted(k for k in resource.tags if is_system_tag(k)),
        "monthly_usd": None if resource.hourly_usd is None else round(resource.hourly_usd * HOURS_PER_MONTH, 2),
        "recorded_at": iso(ctx.now),
        "event_id": ctx.event_id,
    }


def _backup_tags(ctx: ActContext, resource: Resource, record: RestoreRecord) -> list[dict[str, str]]:
    cfg = record["config"]
    ours = {
        ctx.settings.tag(SOURCE_TAG): resource.id,
        ctx.settings.tag("source-deployment"): str(cfg.get("DeploymentType") or ""),
        ctx.settings.tag("source-capacity-gib"): str(cfg.get("StorageCapacity") or ""),
        ctx.settings.tag("source-throughput"): str(cfg.get("PerUnitStorageThroughput") or ""),
        ctx.settings.tag("source-subnets"): joined_ids(cfg.get("SubnetIds") or []),
        ctx.settings.tag("source-security-groups"): joined_ids(cfg.get("SecurityGroupIds") or []),
    }
    ours = {k: v for k, v in ours.items() if v}
    copied = [(k, v) for k, v in record["tags"].items() if k not in ours and not is_system_tag(k)][: MAX_TAGS - len(ours)]
    return [{"Key": k, "Value": v} for k, v in [*ours.items(), *copied]]


# -- a sweep's batch (reaper.sweep.batch): each begun and gated alone, then what the records need read once ------


def act_many(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """A sweep's backups, exports or deletes, up to ACT_BATCH (reaper.kinds.fsx) at a time: the security groups
    of their records in one DescribeNetworkInterfaces, a backup's earlier backups in one DescribeBackups, a
    delete's backups or exports in one read, the records in one TransactWriteItems; each change its own call."""
    runs: dict[ActionName | None, Run] = {
        ActionName.BACKUP: _backups,
        ActionName.EXPORT: _exports,
        ActionName.DELETE: _deletes,
    }
    return by_action(ctx, items, lambda d: action_named(ActionName, d.action), runs, refuse)  # a discard: never batched


# -- phase 1 -------------------------------------------------------------------------------


# What a backup of our own may be in to be carried on with (API_Backup's Lifecycle values); FAILED,
# DELETED and the others are not a copy. COPYING is a copy to another region: never ours.
ADOPTABLE = frozenset({"CREATING", "PENDING", "TRANSFERRING", "AVAILABLE"})


def earlier_backup(
    ctx: ActContext, resource: Resource, decision: Decision, made: list[Artifact] | None = None
) -> tuple[Artifact | None, list[Artifact]]:
    """The backup an earlier sweep made for this decision and could not mark on the file system (it died,
    or TagResource was throttled, between CreateBackup and the marker), and the reaper's own backups
    that are no copy (FAILED, or running past REAPER_FSX_STUCK_HOURS), to say so. `made`: the reaper's
    backups of it as its batch read them (made_for_many); None reads them now.

    Only one begun inside the idle proof this decision rests on (`idle_proof_from`, rules.decide) is
    carried on: an older one is what phase 2 refuses as older than the proof, and carrying it on would
    only bring it back there. A decision with no idle proof (a kill date, a budget) carries on one begun
    in the last REAPER_FSX_STUCK_HOURS. docs/kinds/fsx.md, "A second backup".
    """
    proof = decision.evidence.get("idle_proof_from")
    stuck = ctx.now - timedelta(hours=ctx.settings.of(FsxSettings).stuck_hours)
    since = parse_instant(str(proof)) if proof else stuck
    if made is None:
        made = made_for(ctx.clients("fsx"), resource.id, ctx.settings.tag(SOURCE_TAG))
    ours = [a for a in made if a.started_at and a.started_at >= since]
    usable = [a for a in ours if a.lifecycle in ADOPTABLE and (a.done or (a.started_at is not None and a.started_at >= stuck))]
    # what is said: a failed one, or one stuck running; a DELETED one (someone removed it) is no news
    unusable = [a for a in ours if a not in usable and (a.lifecycle == "FAILED" or a.running)]
    return (usable[0] if usable else None), unusable


@dataclass
class _Started:
    """A phase-1 change made (its backup or export exists): its record, still to be written (None: not to be,
    its marker could not be set), and what it says."""

    resource: Resource
    record: RestoreRecord | None
    head: str
    tail: str
    note: str = ""

    def said(self) -> str:
        return f"{self.head}{self.note}{self.tail}"


def start_backup(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """The one-resource path (an event, a button, a batch too small): a batch of one."""
    return alone(_backups(ctx, [(resource, decision)]), resource)


def _backups(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """Phase 1 for a backup: carry on with the one an earlier sweep began and could not mark, else make one.

    Once CreateBackup answered, the backup exists: a failure after it (the marker tag, the restore
    record) is said in the detail, never as a failed backup, and the next sweep finds the backup by the
    tags it was created with (`earlier_backup`).
    """
    resources = [r for r, _ in items]
    groups = security_groups_many(ctx, resources)
    earlier: dict[str, list[Artifact]] | None = None
    if len(resources) > 1:
        try:
            earlier = made_for_many(ctx.clients("fsx"), [r.id for r in resources], ctx.settings.tag(SOURCE_TAG))
        except AwsError as exc:
            log.warning("reading the earlier backups of %d file systems at once failed (%s): each alone", len(resources), short(exc))

    def start(ctx: ActContext, r: Resource, d: Decision) -> _Started:
        return _backup(ctx, r, d, groups, None if earlier is None else earlier.get(r.id, []))

    return _phase_one(ctx, items, start)


def _backup(
    ctx: ActContext, resource: Resource, decision: Decision, groups: Mapping[str, list[str]], made: list[Artifact] | None
) -> _Started:
    record = restore_record(ctx, resource, "backup", "backing-up", groups)
    adopted, unusable = earlier_backup(ctx, resource, decision, made)
    if adopted is not None:
        backup_id, lifecycle = adopted.id, adopted.lifecycle
    else:
        backup = ctx.clients("fsx").create_backup(
            FileSystemId=resource.id, ClientRequestToken=token(ctx, resource, "backup"), Tags=_backup_tags(ctx, resource, record)
        )["Backup"]
        backup_id, lifecycle = backup["BackupId"], backup.get("Lifecycle", "CREATING")
    unmarked = _mark(ctx, resource, backup_id)
    record["backup_id"] = backup_id
    began = (
        f"backup {backup_id}, which an earlier sweep began and could not record, carried on ({lifecycle})"
        if adopted is not None
        else f"backup {backup_id} started ({lifecycle})"
    )
    left = "".join(
        f"; the reaper's earlier backup {a.id} is {a.lifecycle}{': ' + a.failure if a.failure else ''}, so not used" for a in unusable
    )
    tail = (
        f"; {resource.id} is deleted at a later sweep once the backup is AVAILABLE and "
        f"only if it stays unused — then `reaper restore {resource.id}` brings it back"
    )
    return _Started(resource, None if unmarked else record, f"{began} in {resource.region}{left}", tail, unmarked)


def _mark(ctx: ActContext, resource: Resource, backup_id: str) -> str:
    """The phase tag on the file system, once the backup exists: a failure here is said (the next sweep finds the
    backup by its own tags), never raised as a failure of a change that was made (docs/safety.md, "A second FSx
    backup"); its restore record is then not written (the next sweep's writes it)."""
    try:
        ctx.clients("fsx").tag_resource(ResourceARN=resource.arn, Tags=[{"Key": ctx.settings.tag(BACKUP_TAG), "Value": backup_id}])
    except AwsError as exc:
        log.warning("backup %s of %s made, but not recorded: %s", backup_id, resource.id, short(exc))
        return f" (not yet recorded on {resource.id}: {short(exc)}; the next sweep finds it by its {ctx.settings.tag(SOURCE_TAG)} tag)"
    return ""


def _phase_one(ctx: ActContext, items: Sequence[tuple[Resource, Decision]], start: Plan1) -> BatchAnswer:
    """Each change made alone (its failure its own), then the records of those made in one write: the copy exists
    whatever that write does, so a failed write is said on each, never a failure (docs/safety.md)."""
    own: dict[str, BaseException] = {}
    started: list[_Started] = []
    for r, d in items:
        try:
            started.append(start(ctx, r, d))
        except Exception as exc:  # refused, an AWS error, or a bug: this file system's (reaper.sweep.batch._own_error)
            own[r.id] = exc
    kept = [(s, s.record) for s in started if s.record is not None]
    if ctx.log is not None and kept:
        try:
            ctx.log.put_restores(KIND, [(s.resource.id, record) for s, record in kept], ctx.now)
        except AwsError as exc:
            log.warning("%d restore records not written: %s", len(kept), short(exc))
            for s, _ in kept:
                s.note += f" (its restore record not written: {short(exc)}; the delete writes it before deleting)"
    return BatchAnswer(done={s.resource.id: s.said() for s in started}, own=own)


def start_export(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """The one-resource path (an event, a button, a batch too small): a batch of one."""
    return alone(_exports(ctx, [(resource, decision)]), resource)


def _exports(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    groups = security_groups_many(ctx, [r for r, _ in items])
    return _phase_one(ctx, items, lambda ctx, r, d: _export(ctx, r, groups))


def _export(ctx: ActContext, resource: Resource, groups: Mapping[str, list[str]]) -> _Started:
    p = resource.facts_as(FsxFacts).protection
    report = p.report_path
    if not report:
        raise refuse("CreateDataRepositoryTask", "no linked S3 path to export to: nothing started")
    record = restore_record(ctx, resource, "export", "exporting", groups)
    fsx = ctx.clients("fsx")
    # "If you have automatic export enabled and want to use an export data repository task, you have
    # to disable automatic export before executing the export data repository task":
    # https://docs.aws.amazon.com/fsx/latest/APIReference/API_DeleteFileSystem.html . The task then
    # exports everything not yet in S3 and reports each failed file, which automatic export does not.
    turned_off = [r for r in p.repositories if r.association_id and r.auto_export]
    for r in turned_off:
        s3: dict[str, Any] = {"AutoExportPolicy": {"Events": []}}
        if r.auto_import:
            s3["AutoImportPolicy"] = {"Events": list(r.auto_import)}
        fsx.update_data_repository_association(AssociationId=r.association_id, S3=s3)
    if turned_off:
        record["auto_export_disabled"] = [str(r.association_id) for r in turned_off]
    task = fsx.create_data_repository_task(
        Type="EXPORT_TO_REPOSITORY",
        FileSystemId=resource.id,
        Report={"Enabled": True, "Path": report, "Format": "REPORT_CSV_20191124", "Scope": "FAILED_FILES_ONLY"},
        ClientRequestToken=token(ctx, resource, "export"),
        Tags=[{"Key": ctx.settings.tag(SOURCE_TAG), "Value": resource.id}],
    )["DataRepositoryTask"]
    task_id = task["TaskId"]
    fsx.tag_resource(ResourceARN=resource.arn, Tags=[{"Key": ctx.settings.tag(EXPORT_TAG), "Value": task_id}])
    record["export_task_id"] = task_id
    auto = (
        f"; automatic export turned off on {', '.join(str(r.association_id) for r in turned_off)} first, as FSx requires for an export task"
        if turned_off else ""
    )  # fmt: skip
    tail = (
        f"; {resource.id} is deleted at a later sweep once it "
        f"SUCCEEDED with no failed file — a failed-files report, if any, goes under {report}{auto}"
    )
    return _Started(resource, record, f"export {task_id} to {p.where()} started ({task.get('Lifecycle', 'PENDING')})", tail)


# -- phase 2 -------------------------------------------------------------------------------


def delete_confirmed(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """The one-resource path (an event, a button, a batch too small): a batch of one."""
    return alone(_deletes(ctx, [(resource, decision)]), resource)


def _deletes(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    """Delete, each having re-read its backup or export after its gate (the batch's in one read): it must still be
    confirmed; the records in one write before the first delete (reaper.kinds.recorded)."""
    groups = security_groups_many(ctx, [r for r, _ in items])
    fsx = ctx.clients("fsx")
    read: dict[str, Artifact] = {}
    try:
        read.update(backups(fsx, [str(b) for _, d in items if (b := d.evidence.get("backup_id"))]))
        read.update(tasks(fsx, [str(t) for _, d in items if not d.evidence.get("backup_id") and (t := d.evidence.get("export_task_id"))]))
    except AwsError as exc:
        log.warning("reading the copies of %d file systems at once failed (%s): each alone", len(items), short(exc))
        read.clear()

    def plan(ctx: ActContext, r: Resource, d: Decision) -> RestoreRecord:
        return _delete_record(ctx, r, d, groups, read)

    return record_then_change(ctx, KIND, items, plan, _delete)


def _delete_record(
    ctx: ActContext, resource: Resource, decision: Decision, groups: Mapping[str, list[str]], read: Mapping[str, Artifact]
) -> RestoreRecord:
    """Its record, refused unless the backup or export it rests on is confirmed now."""
    fsx = ctx.clients("fsx")
    method: Method
    backup_id = decision.evidence.get("backup_id")
    task_id = decision.evidence.get("export_task_id")
    if backup_id:
        art = read.get(backup_id) or backups(fsx, [backup_id])[backup_id]
        if not art.done:
            raise refuse("DeleteFileSystem", f"backup {backup_id} is {art.lifecycle} now, not AVAILABLE: nothing deleted")
        method = "backup"
    elif task_id:
        art = read.get(task_id) or tasks(fsx, [task_id])[task_id]
        if not art.done:
            raise refuse(
                "DeleteFileSystem", f"export {task_id} is {art.lifecycle} with {art.failed_files} failed files now: nothing deleted"
            )
        method = "export"
    else:
        raise refuse("DeleteFileSystem", "no confirmed backup or export recorded on the file system: nothing deleted")
    if ctx.log is None:  # the action declares needs_log; the pipeline refuses first
        raise refuse("DeleteFileSystem", "no action log to keep the restore record in: nothing deleted")
    record = restore_record(ctx, resource, method, "deleted", groups)
    record.update({"backup_id": backup_id, "export_task_id": task_id, "deleted_at": iso(ctx.now)})
    return record


def _delete(ctx: ActContext, resource: Resource, decision: Decision, record: Mapping[str, Any]) -> str:
    """After its record is written."""
    ctx.clients("fsx").delete_file_system(
        FileSystemId=resource.id, ClientRequestToken=token(ctx, resource, "delete"), LustreConfiguration={"SkipFinalBackup": True}
    )
    if record["method"] == "backup":
        where = f"backup {record['backup_id']} (AVAILABLE, {resource.region})"
        again = f"`reaper restore {resource.id}` makes a new file system from it with the same type, capacity, throughput, network and tags"
    else:
        where = f"{resource.facts_as(FsxFacts).protection.where()} (export {record['export_task_id']} SUCCEEDED)"
        again = f"`reaper restore {resource.id}` says where the data is"
    return f"deleted; its data is in {where} — {again}"


def discard(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """Delete with no copy: only for a file system that cannot be backed up and is tagged disposable."""
    if ctx.log is not None:
        record = restore_record(ctx, resource, "none", "deleted")
        record.update({"data_gone": True, "deleted_at": iso(ctx.now)})
        ctx.log.put_restore(KIND, resource.id, dict(record), ctx.now)
    ctx.clients("fsx").delete_file_system(
        FileSystemId=resource.id, ClientRequestToken=token(ctx, resource, "discard"), LustreConfiguration={"SkipFinalBackup": True}
    )
    return f"deleted with no backup ({ctx.settings.tag('disposable')}=true): its data is gone and cannot be restored"


# -- the state check just before acting, and undo -------------------------------------------


def lifecycle(fsx: Any, fs_id: str) -> str | None:
    """The file system's Lifecycle now; None when it is gone."""
    try:
        found = fsx.describe_file_systems(FileSystemIds=[fs_id]).get("FileSystems", [])
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise
    return str(found[0].get("Lifecycle", "UNKNOWN")) if found else None


_FAILED = ("FAILED", "DELETED", "CANCELED", "CANCELING")


def _of(fs_id: str) -> list[dict[str, Any]]:
    return [{"Name": "file-system-id", "Values": [fs_id]}]


def _started(found: list[dict[str, Any]], change: Unconfirmed, what: str, id_key: str) -> Made:
    """Made when one of `found` (backups or tasks of the file system) was created since the change began and has not failed."""
    since = change.since - timedelta(minutes=1)  # AWS's clock and the sweep's may differ by a little
    made = [b for b in found if b.get("CreationTime") and b["CreationTime"] >= since and b.get("Lifecycle") not in _FAILED]
    if made:
        return Made(True, f"{what} {made[0].get(id_key)} {made[0].get('Lifecycle')}")
    return Made(False, f"no {what} of it since the change began")


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A deletion is made once the file system is DELETING or gone (DescribeFileSystems); a backup (an
    export) once DescribeBackups (DescribeDataRepositoryTasks) finds one of it created since the change began
    that has not failed."""
    fsx = clients("fsx")
    match action_named(ActionName, change.action):
        case ActionName.DELETE | ActionName.DISCARD:
            state = lifecycle(fsx, change.id)
            if state is None:
                return Made(True, "gone")
            return Made.by_state("Lifecycle", state, {"DELETING"}, {"AVAILABLE", "UPDATING", "MISCONFIGURED"})
        case ActionName.BACKUP:
            found = fsx.describe_backups(Filters=_of(change.id)).get("Backups", [])
            return _started(found, change, "backup", "BackupId")
        case ActionName.EXPORT:
            found = fsx.describe_data_repository_tasks(Filters=_of(change.id)).get("DataRepositoryTasks", [])
            return _started([t for t in found if t.get("Type") == "EXPORT_TO_REPOSITORY"], change, "export", "TaskId")
        case None:
            return Made(None, f"nothing reads whether {change.action} was made")
        case other:
            assert_never(other)


def current_state(clients: Clients, resource: Resource) -> str | None:
    return lifecycle(clients("fsx"), resource.id)


# DescribeFileSystems' FileSystemIds: "Array Members: Maximum number of 50 items"
# (https://docs.aws.amazon.com/fsx/latest/APIReference/API_DescribeFileSystems.html)
MAX_FILE_SYSTEM_IDS = 50


def current_many(clients: Clients, resources: Sequence[Resource]) -> dict[str, ReadNow]:
    """A batch's file systems read again in one DescribeFileSystems by `FileSystemIds` (paged): the Lifecycle of
    each, None for one that is gone. Tags None: the API reference does not say a file system's `Tags` are always
    in the answer (docs/aws-assumptions.md, *One read for a batch's gates*), so each gate still reads its file
    system's tags with ListTagsForResource. An id FSx no longer knows fails the call (FileSystemNotFound,
    docs/aws-assumptions.md KF-3): the region's file systems are then read once, as discovery reads them, and one
    not among them is gone, so a file system deleted since discovery leaves the others read in the batch.
    """
    fsx = clients("fsx")
    ids = [r.id for r in resources]
    try:
        found = _lifecycles(fsx, ids)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        found = _lifecycles(fsx, None)
    return {r.arn: (found.get(r.id), None) for r in resources}


def _lifecycles(fsx: Any, ids: list[str] | None) -> dict[str, str]:
    """Lifecycle by file system id: of `ids` (MAX_FILE_SYSTEM_IDS a call), or of every file system in the region."""
    chunks = [{}] if ids is None else [{"FileSystemIds": ids[i : i + MAX_FILE_SYSTEM_IDS]} for i in range(0, len(ids), MAX_FILE_SYSTEM_IDS)]
    found: dict[str, str] = {}
    for chunk in chunks:
        for page in fsx.get_paginator("describe_file_systems").paginate(**chunk):
            found.update({str(fs.get("FileSystemId")): str(fs.get("Lifecycle", "UNKNOWN")) for fs in page.get("FileSystems", [])})
    return found


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.DISCARD:
            return f"none: {resource.id} is deleted with its data (it is tagged disposable); nothing can bring it back"
        case ActionName.BACKUP | ActionName.EXPORT | ActionName.DELETE:
            p = resource.facts_as(FsxFacts).protection
            if p.method == "backup":
                return f"reaper restore {resource.id}   # a new file system from the backup: same type, capacity, throughput, network, tags"
            return f"reaper restore {resource.id}   # says where the exported data is: {p.where()}"
        case _:
            assert_never(name)

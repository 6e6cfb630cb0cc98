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
from datetime import timedelta
from typing import Any, assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, is_not_found, short
from reaper.core.errors import ActionRefused
from reaper.core.model import HOURS_PER_MONTH, Decision, KindAction, Resource
from reaper.core.timeutil import iso, parse_instant
from reaper.kinds.base import ActContext, Made, Unconfirmed, action_named
from reaper.kinds.fsx import ActionName
from reaper.kinds.fsx.artifacts import backups, made_for, tasks
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

log = logging.getLogger("reaper")

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


def restore_record(ctx: ActContext, resource: Resource, method: Method, status: str) -> RestoreRecord:
    p = resource.facts_as(FsxFacts).protection
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
        "config": configuration(resource, security_groups(ctx, resource)),
        "tags": kept_tags(resource.tags, ctx.settings.tag_prefix),
        "system_tags": sorted(k for k in resource.tags if is_system_tag(k)),
        "monthly_usd": None if resource.hourly_usd is None else round(resource.hourly_usd * HOURS_PER_MONTH, 2),
        "recorded_at": iso(ctx.now),
        "event_id": ctx.event_id,
    }


def _keep(ctx: ActContext, resource: Resource, record: RestoreRecord) -> None:
    assert ctx.log is not None
    ctx.log.put_restore(KIND, resource.id, dict(record), ctx.now)


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


# -- phase 1 -------------------------------------------------------------------------------


# What a backup of our own may be in to be carried on with (API_Backup's Lifecycle values); FAILED,
# DELETED and the others are not a copy. COPYING is a copy to another region: never ours.
ADOPTABLE = frozenset({"CREATING", "PENDING", "TRANSFERRING", "AVAILABLE"})


def earlier_backup(ctx: ActContext, resource: Resource, decision: Decision) -> tuple[Artifact | None, list[Artifact]]:
    """The backup an earlier sweep made for this decision and could not mark on the file system (it died,
    or TagResource was throttled, between CreateBackup and the marker), and the reaper's own backups
    that are no copy (FAILED, or running past REAPER_FSX_STUCK_HOURS), to say so.

    Only one begun inside the idle proof this decision rests on (`idle_proof_from`, rules.decide) is
    carried on: an older one is what phase 2 refuses as older than the proof, and carrying it on would
    only bring it back there. A decision with no idle proof (a kill date, a budget) carries on one begun
    in the last REAPER_FSX_STUCK_HOURS. docs/kinds/fsx.md, "A second backup".
    """
    proof = decision.evidence.get("idle_proof_from")
    stuck = ctx.now - timedelta(hours=ctx.settings.of(FsxSettings).stuck_hours)
    since = parse_instant(str(proof)) if proof else stuck
    ours = [a for a in made_for(ctx.clients("fsx"), resource.id, ctx.settings.tag(SOURCE_TAG)) if a.started_at and a.started_at >= since]
    usable = [a for a in ours if a.lifecycle in ADOPTABLE and (a.done or (a.started_at is not None and a.started_at >= stuck))]
    # what is said: a failed one, or one stuck running; a DELETED one (someone removed it) is no news
    unusable = [a for a in ours if a not in usable and (a.lifecycle == "FAILED" or a.running)]
    return (usable[0] if usable else None), unusable


def start_backup(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """Phase 1 for a backup: carry on with the one an earlier sweep began and could not mark, else make one.

    Once CreateBackup answered, the backup exists: a failure after it (the marker tag, the restore
    record) is said in the detail, never as a failed backup, and the next sweep finds the backup by the
    tags it was created with (`earlier_backup`).
    """
    record = restore_record(ctx, resource, "backup", "backing-up")
    fsx = ctx.clients("fsx")
    adopted, unusable = earlier_backup(ctx, resource, decision)
    if adopted is not None:
        backup_id, lifecycle = adopted.id, adopted.lifecycle
    else:
        backup = fsx.create_backup(
            FileSystemId=resource.id, ClientRequestToken=token(ctx, resource, "backup"), Tags=_backup_tags(ctx, resource, record)
        )["Backup"]
        backup_id, lifecycle = backup["BackupId"], backup.get("Lifecycle", "CREATING")
    unmarked = _mark(ctx, resource, record, backup_id)
    began = (
        f"backup {backup_id}, which an earlier sweep began and could not record, carried on ({lifecycle})"
        if adopted is not None
        else f"backup {backup_id} started ({lifecycle})"
    )
    left = "".join(
        f"; the reaper's earlier backup {a.id} is {a.lifecycle}{': ' + a.failure if a.failure else ''}, so not used" for a in unusable
    )
    return (
        f"{began} in {resource.region}{left}{unmarked}; {resource.id} is deleted at a later sweep once the backup is AVAILABLE and "
        f"only if it stays unused — then `reaper restore {resource.id}` brings it back"
    )


def _mark(ctx: ActContext, resource: Resource, record: RestoreRecord, backup_id: str) -> str:
    """The phase tag on the file system and the restore record, once the backup exists: what fails here
    is said (the next sweep finds the backup by its own tags), never raised as a failure of a change
    that was made (docs/safety.md, "A second FSx backup")."""
    try:
        ctx.clients("fsx").tag_resource(ResourceARN=resource.arn, Tags=[{"Key": ctx.settings.tag(BACKUP_TAG), "Value": backup_id}])
        if ctx.log is not None:
            record["backup_id"] = backup_id
            _keep(ctx, resource, record)
    except AwsError as exc:
        log.warning("backup %s of %s made, but not recorded: %s", backup_id, resource.id, short(exc))
        return f" (not yet recorded on {resource.id}: {short(exc)}; the next sweep finds it by its {ctx.settings.tag(SOURCE_TAG)} tag)"
    return ""


def start_export(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    p = resource.facts_as(FsxFacts).protection
    report = p.report_path
    if not report:
        raise refuse("CreateDataRepositoryTask", "no linked S3 path to export to: nothing started")
    record = restore_record(ctx, resource, "export", "exporting")
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
    if ctx.log is not None:
        record["export_task_id"] = task_id
        _keep(ctx, resource, record)
    auto = (
        f"; automatic export turned off on {', '.join(str(r.association_id) for r in turned_off)} first, as FSx requires for an export task"
        if turned_off else ""
    )  # fmt: skip
    return (
        f"export {task_id} to {p.where()} started ({task.get('Lifecycle', 'PENDING')}); {resource.id} is deleted at a later sweep once it "
        f"SUCCEEDED with no failed file — a failed-files report, if any, goes under {report}{auto}"
    )


# -- phase 2 -------------------------------------------------------------------------------


def delete_confirmed(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """Delete, having re-read the backup or export a moment ago: it must still be confirmed."""
    fsx = ctx.clients("fsx")
    method: Method
    backup_id = decision.evidence.get("backup_id")
    task_id = decision.evidence.get("export_task_id")
    if backup_id:
        art = backups(fsx, [backup_id])[backup_id]
        if not art.done:
            raise refuse("DeleteFileSystem", f"backup {backup_id} is {art.lifecycle} now, not AVAILABLE: nothing deleted")
        method, where = "backup", f"backup {backup_id} (AVAILABLE, {resource.region})"
    elif task_id:
        art = tasks(fsx, [task_id])[task_id]
        if not art.done:
            raise refuse(
                "DeleteFileSystem", f"export {task_id} is {art.lifecycle} with {art.failed_files} failed files now: nothing deleted"
            )
        method, where = "export", f"{resource.facts_as(FsxFacts).protection.where()} (export {task_id} SUCCEEDED)"
    else:
        raise refuse("DeleteFileSystem", "no confirmed backup or export recorded on the file system: nothing deleted")
    assert ctx.log is not None  # the action declares needs_log; the pipeline refuses without one
    record = restore_record(ctx, resource, method, "deleted")
    record.update({"backup_id": backup_id, "export_task_id": task_id, "deleted_at": iso(ctx.now)})
    _keep(ctx, resource, record)
    fsx.delete_file_system(
        FileSystemId=resource.id, ClientRequestToken=token(ctx, resource, "delete"), LustreConfiguration={"SkipFinalBackup": True}
    )
    again = (
        f"`reaper restore {resource.id}` makes a new file system from it with the same type, capacity, throughput, network and tags"
        if method == "backup"
        else f"`reaper restore {resource.id}` says where the data is"
    )
    return f"deleted; its data is in {where} — {again}"


def discard(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    """Delete with no copy: only for a file system that cannot be backed up and is tagged disposable."""
    if ctx.log is not None:
        record = restore_record(ctx, resource, "none", "deleted")
        record.update({"data_gone": True, "deleted_at": iso(ctx.now)})
        _keep(ctx, resource, record)
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

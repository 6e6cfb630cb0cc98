"""`reaper restore fs-…`: bring back an FSx for Lustre file system the reaper deleted.

It reads the restore record the reaper kept in the action log. From a backup, it creates a new
file system with the same deployment type, capacity, throughput, Lustre settings, subnets,
security groups and tags (plus `reaper:restored-from`). For an exported scratch file system there
is nothing to create from: it says where the data is in S3 and how to link a new file system to it.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any, cast

from botocore.exceptions import ClientError

from reaper.aws.faults import is_not_found
from reaper.core.errors import NoRestoreRecord, RestoreError
from reaper.core.timeutil import iso
from reaper.kinds.base import Say
from reaper.kinds.fsx.actions import is_system_tag, lifecycle
from reaper.kinds.fsx.model import KIND, PHASE_TAGS, RestoreRecord
from reaper.record.runtime import Runtime


def run(rt: Runtime, name: str, now: datetime, say: Say) -> str:
    """The declaration's restorer: NAME is a file system id (its IAM permissions are declared there)."""
    name = name.strip()
    assert rt.log is not None  # reaper.restore.run.restore refuses without the action log
    found = rt.log.latest_restore(KIND, name)
    if found is None:
        raise NoRestoreRecord(f"no restore record for {name}: the reaper never backed it up, exported or deleted it")
    record = cast(RestoreRecord, found)
    fsx = rt.clients(record.get("region") or rt.home_region)("fsx")
    if record.get("restored_as"):
        state = lifecycle(fsx, record["restored_as"])
        if state is not None:
            return f"{name} was restored already, as {record['restored_as']} ({state}) on {record.get('restored_at', '?')}"
    state = lifecycle(fsx, name)
    if state is not None and state != "DELETING":
        kept = f"; its {record['method']} {record.get('backup_id') or record.get('export_task_id') or ''} is kept".rstrip()
        raise RestoreError(f"{name} still exists ({state}): nothing to restore{kept}")
    method = record.get("method")
    if method == "none":
        raise RestoreError(f"{name} was deleted with no backup because it was tagged disposable: its data is gone, nothing can restore it")
    if method == "export":
        return _where_exported(fsx, name, record)
    if method == "backup" and record.get("backup_id"):
        return _from_backup(rt, fsx, name, record, now, say)
    raise RestoreError(f"the restore record for {name} names no backup or export (method {method!r})")


def _from_backup(rt: Runtime, fsx: Any, name: str, record: RestoreRecord, now: datetime, say: Say) -> str:
    backup_id = record["backup_id"]
    try:
        backup = fsx.describe_backups(BackupIds=[backup_id])["Backups"][0]
    except ClientError as exc:
        if is_not_found(exc):  # BackupNotFound
            raise RestoreError(f"backup {backup_id} of {name} no longer exists (someone deleted it): nothing to restore from") from None
        raise
    if backup.get("Lifecycle") != "AVAILABLE":
        progress = f" ({backup['ProgressPercent']}%)" if backup.get("ProgressPercent") is not None else ""
        raise RestoreError(f"backup {backup_id} of {name} is {backup.get('Lifecycle')}{progress}: restore it once it is AVAILABLE")
    cfg = record.get("config") or {}
    prefix = rt.settings.tag_prefix.lower()
    phase = {prefix + t for t in PHASE_TAGS}
    recorded = record.get("tags") or {}
    tags = {k: v for k, v in recorded.items() if k.lower() not in phase and not is_system_tag(k)}
    system = sorted({*(record.get("system_tags") or []), *(k for k in recorded if is_system_tag(k))})
    tags[rt.settings.tag("restored-from")] = name
    lustre = dict(cfg.get("LustreConfiguration") or {})
    if isinstance(lustre.get("MetadataConfiguration"), dict):
        lustre["MetadataConfiguration"] = metadata_for_restore(lustre["MetadataConfiguration"])
    for key in ("DeploymentType", "PerUnitStorageThroughput"):
        if cfg.get(key) is not None:
            lustre[key] = cfg[key]
    params: dict[str, Any] = {
        "BackupId": backup_id,
        "ClientRequestToken": hashlib.sha256(f"restore|{name}|{backup_id}|{record.get('recorded_at')}".encode()).hexdigest()[:40],
        "SubnetIds": cfg.get("SubnetIds") or (backup.get("FileSystem") or {}).get("SubnetIds") or [],
        "Tags": [{"Key": k, "Value": v} for k, v in list(tags.items())[:50]],
        "LustreConfiguration": lustre,
    }
    for key in ("SecurityGroupIds", "StorageType", "KmsKeyId", "FileSystemTypeVersion"):
        if cfg.get(key):
            params[key] = cfg[key]
    backup_tags = {t["Key"]: t["Value"] for t in backup.get("Tags") or []}
    if not params.get("SecurityGroupIds"):  # the record has none: the backup's own tag says them
        groups_tag = split_ids(backup_tags.get(rt.settings.tag("source-security-groups"), ""))
        if groups_tag:
            params["SecurityGroupIds"] = groups_tag
    if not params["SubnetIds"]:
        params["SubnetIds"] = split_ids(backup_tags.get(rt.settings.tag("source-subnets"), ""))
    if not params["SubnetIds"]:
        raise RestoreError(f"the restore record for {name} has no subnet to create the file system in")
    say(f"creating a file system from {backup_id} in {', '.join(params['SubnetIds'])}")
    created = fsx.create_file_system_from_backup(**params)["FileSystem"]
    new_id = created["FileSystemId"]
    assert rt.log is not None
    rt.log.put_restore(KIND, name, {**record, "status": "restored", "restored_as": new_id, "restored_at": iso(now)}, now)
    got = created.get("StorageCapacity")
    size = f"{got:,} GiB" if got == cfg.get("StorageCapacity") else f"{got} GiB (the original had {cfg.get('StorageCapacity')} GiB)"
    throughput = f", {cfg['PerUnitStorageThroughput']} MB/s/TiB" if cfg.get("PerUnitStorageThroughput") else ""
    groups = ", ".join(params.get("SecurityGroupIds") or []) or "the VPC's default (none were recorded)"
    lost = f" (not {', '.join(system)}: AWS's own tags, which only AWS can write)" if system else ""
    return (
        f"{name} restored as {new_id} from {backup_id}: {lustre.get('DeploymentType')}, {size}{throughput}; subnets "
        f"{', '.join(params['SubnetIds'])}; security groups {groups}; {len(params['Tags'])} tags{lost}. It is "
        f"{created.get('Lifecycle', 'CREATING')} "
        f"now (usually AVAILABLE within 30 min); mount it by its new DNS name {created.get('DNSName', '?')}. It is reaped again "
        f"like any other if it sits idle: tag {rt.settings.tag('snooze-until')}=YYYY-MM-DD to keep it a while"
    )


def split_ids(value: str) -> list[str]:
    """Ids from a backup's tag: space-separated now, comma-separated on backups made before FSx's
    refusal of commas was followed (docs/aws-assumptions.md row 2); '+' and '/' are read too."""
    return [i for i in re.split(r"[\s,+/]+", value.strip()) if i]


def metadata_for_restore(metadata: dict[str, Any]) -> dict[str, Any]:
    """MetadataConfiguration for CreateFileSystemFromBackup: `Iops` only in USER_PROVISIONED mode.

    DescribeFileSystems reports the Iops AWS chose in AUTOMATIC mode too, but the create calls take
    Iops "(USER_PROVISIONED mode only)":
    https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateFileSystemLustreMetadataConfiguration.html
    """
    mode = str(metadata.get("Mode") or "")
    out: dict[str, Any] = {"Mode": mode} if mode else {}
    if mode == "USER_PROVISIONED" and metadata.get("Iops") is not None:
        out["Iops"] = metadata["Iops"]
    return out


def _where_exported(fsx: Any, name: str, record: RestoreRecord) -> str:
    repos = record.get("repositories") or []
    cfg = record.get("config") or {}
    where = "; ".join(f"{r['file_system_path']} → {r['data_repository_path']}" for r in repos) or "(no path recorded)"
    task_id = record.get("export_task_id")
    caveat = ""
    if record.get("status") != "deleted" and task_id:
        try:
            task = fsx.describe_data_repository_tasks(TaskIds=[task_id])["DataRepositoryTasks"][0]
            failed = int((task.get("Status") or {}).get("FailedCount") or 0)
            if task.get("Lifecycle") != "SUCCEEDED" or failed:
                caveat = (
                    f" CAUTION: {name} was deleted by someone else while export {task_id} was {task.get('Lifecycle')} ({failed} "
                    "failed files): S3 may not hold everything."
                )
        except ClientError as exc:
            if not is_not_found(exc):  # DataRepositoryTaskNotFound
                raise
            caveat = f" CAUTION: export {task_id} can no longer be read: S3 may not hold everything."
    partial = (
        " Files outside these paths were not exported (it was tagged disposable) and are gone."
        if record.get("coverage") == "partial"
        else ""
    )
    subnets = ",".join(cfg.get("SubnetIds") or []) or "SUBNET"
    groups = ",".join(cfg.get("SecurityGroupIds") or []) or "SG"
    first = repos[0] if repos else {"data_repository_path": "s3://BUCKET/PREFIX", "file_system_path": "/"}
    if first.get("association_id"):
        link = (
            f"aws fsx create-file-system --file-system-type LUSTRE --storage-capacity {cfg.get('StorageCapacity') or 1200} "
            f"--subnet-ids {subnets} --security-group-ids {groups} --lustre-configuration "
            f"DeploymentType={cfg.get('DeploymentType') or 'SCRATCH_2'}\n"
            f"  aws fsx create-data-repository-association --file-system-id NEW_FS_ID --file-system-path {first['file_system_path']} "
            f"--data-repository-path {first['data_repository_path']} --batch-import-meta-data-on-create"
        )
    else:
        link = (
            f"aws fsx create-file-system --file-system-type LUSTRE --storage-capacity {cfg.get('StorageCapacity') or 1200} "
            f"--subnet-ids {subnets} --security-group-ids {groups} "
            f"--lustre-configuration DeploymentType={cfg.get('DeploymentType') or 'SCRATCH_2'},ImportPath={first['data_repository_path']}"
        )
    return (
        f"{name} was a {cfg.get('DeploymentType') or 'scratch'} file system ({cfg.get('StorageCapacity') or '?'} GiB); scratch file "
        "systems "
        f"cannot be backed up, so its data was exported to S3 by {task_id or 'an export task'} before it was deleted: "
        f"{where}.{partial}{caveat}\n"
        f"To work on it again, create a file system linked to that path:\n  {link}"
    )

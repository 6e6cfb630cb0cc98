"""Seeding helpers for the storage kind: the reaper's own FSx backups of deleted file systems, ML volumes
attached to nothing, and GPU boxes stopped for weeks. Shared by the storage tests and the benchmark.

Things are made through the API; what only time sets (when a backup or volume was made, when a box
stopped) goes through the moto extensions' controls.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper_devkit import seed_fsx
from reaper_devkit.moto_ext import ebs as ebs_ext
from reaper_devkit.moto_ext import fsx as fsx_ext

ML = {"ml:owner": "ana@example.com", "ml:project": "llm"}
ZONE = "us-east-1a"


def reaper_backup(
    fsx: Any, subnet: str, group: str, made: datetime, *, tags: dict[str, str] | None = None, keep_file_system: bool = False
) -> tuple[str, str]:
    """A backup as the fsx kind makes it (tagged reaper:source-fs at creation), AVAILABLE, made at `made`, of a
    file system deleted since (unless `keep_file_system`); returns (backup id, file system id)."""
    fs_id = seed_fsx.file_system(fsx, subnet, group, tags=seed_fsx.DEV)
    own = {"reaper:source-fs": fs_id, **seed_fsx.DEV, **(tags or {})}
    backup_id: str = fsx.create_backup(FileSystemId=fs_id, Tags=[{"Key": k, "Value": v} for k, v in own.items()])["Backup"]["BackupId"]
    fsx_ext.settle_backups("AVAILABLE", [backup_id])
    fsx_ext.set_backup(backup_id, made)
    if not keep_file_system:
        fsx.delete_file_system(FileSystemId=fs_id, LustreConfiguration={"SkipFinalBackup": True})
    return backup_id, fs_id


def someone_elses_backup(fsx: Any, subnet: str, group: str, made: datetime) -> str:
    """A user-initiated backup the reaper did not make (no reaper:source-fs), of a deleted file system."""
    fs_id = seed_fsx.file_system(fsx, subnet, group, tags=seed_fsx.DEV)
    backup_id: str = fsx.create_backup(FileSystemId=fs_id, Tags=[{"Key": "team", "Value": "vision"}])["Backup"]["BackupId"]
    fsx_ext.settle_backups("AVAILABLE", [backup_id])
    fsx_ext.set_backup(backup_id, made)
    fsx.delete_file_system(FileSystemId=fs_id, LustreConfiguration={"SkipFinalBackup": True})
    return backup_id


def volume(
    ec2: Any,
    made: datetime,
    *,
    tags: dict[str, str] | None = None,
    size: int = 100,
    volume_type: str = "gp3",
    iops: int | None = 4000,
    throughput: int | None = 250,
) -> str:
    """An EBS volume attached to nothing, made at `made`; returns its id."""
    kwargs: dict[str, Any] = {"AvailabilityZone": ZONE, "Size": size, "VolumeType": volume_type}
    if iops:
        kwargs["Iops"] = iops
    if throughput:
        kwargs["Throughput"] = throughput
    if tags:
        kwargs["TagSpecifications"] = [{"ResourceType": "volume", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    volume_id: str = ec2.create_volume(**kwargs)["VolumeId"]
    ebs_ext.set_volume(volume_id, made)
    return volume_id


def stopped_gpu_box(ec2: Any, stopped: datetime | None, *, now: datetime, tags: dict[str, str] | None = None) -> str:
    """A GPU instance (g5.xlarge, its root volume from the image) stopped at `stopped` (None: EC2 does not say); returns its id."""
    from reaper_devkit import seed_ec2

    iid = seed_ec2.instance(ec2, "g5.xlarge", tags or ML, now=now, launched_ago=now - (stopped or now) + timedelta(days=1))
    ec2.stop_instances(InstanceIds=[iid])
    ebs_ext.stopped_at(iid, stopped)
    return iid


def volume_state(ec2: Any, volume_id: str) -> str | None:
    found = ec2.describe_volumes(Filters=[{"Name": "volume-id", "Values": [volume_id]}])["Volumes"]
    return str(found[0]["State"]) if found else None


def backup_exists(fsx: Any, backup_id: str) -> bool:
    return any(b["BackupId"] == backup_id for b in fsx.describe_backups()["Backups"])

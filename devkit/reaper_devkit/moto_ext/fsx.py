"""FSx for Lustre as the reaper meets it in AWS, where moto 5.2.5 falls short.

What moto lacks, and what this module adds to its FSx backend (in-process and server mode alike):
  * file systems: `Lifecycle` (AVAILABLE), `CreationTime`, `OwnerId`, `VpcId`,
    `NetworkInterfaceIds` (real ENIs in moto's EC2 backend, carrying the security groups, when
    the subnets exist there), and the real `LustreConfiguration` shape: `DeploymentType`
    (SCRATCH_1 by default), `MountName`, and `DataRepositoryConfiguration` for ImportPath/ExportPath;
  * backups: the `FileSystem` structure real DescribeBackups returns (the file system as it was,
    kept after it is deleted), `Type`, `ProgressPercent`, `FailureDetails`; they stay CREATING
    until a test settles them (`settle_backups`) to AVAILABLE or FAILED. CreateBackup refuses
    scratch file systems and every file system linked to a data repository (the old
    ImportPath/ExportPath link or a data repository association), as AWS does; DescribeBackups
    with an unknown id raises BackupNotFound, as AWS does;
  * DescribeFileSystems with an unknown id raises FileSystemNotFound (moto leaves it out of the answer)
    https://docs.aws.amazon.com/fsx/latest/APIReference/API_DescribeFileSystems.html (Errors);
  * DeleteFileSystem refuses (BadRequest) while a data repository task is PENDING or EXECUTING;
  * CreateFileSystemFromBackup (from an AVAILABLE backup only; the new file system is CREATING);
  * data repository associations: Create/Describe/UpdateDataRepositoryAssociation(s);
    an EXPORT_TO_REPOSITORY task is refused while an association of the file system has automatic
    export on ("you have to disable automatic export before executing the export data repository
    task": https://docs.aws.amazon.com/fsx/latest/APIReference/API_DeleteFileSystem.html);
  * data repository tasks: Create/DescribeDataRepositoryTasks. A task needs a linked repository
    and no other task running on the file system; it stays PENDING until `settle_tasks` ends it
    SUCCEEDED (optionally with failed files) or FAILED, or leaves it EXECUTING (stuck).
  * ClientRequestToken: a repeated token returns the first result (backups, tasks, restores); on
    CreateBackup, a repeated token with other parameters (file system, volume, tags) is refused with
    IncompatibleParameterError: "If a backup with the specified client request token exists and the
    parameters match, this operation returns the description of the existing backup. If a backup
    with the specified client request token exists and the parameters don't match, this operation
    returns IncompatibleParameterError" (API_CreateBackup). Tags given to CreateBackup are on the
    backup from its creation, and DescribeBackups returns them with it (moto's own, kept).

Where each rule comes from (AWS documentation):
  * CreateBackup, Lustre: "you can create a backup only for file systems that have ... a Persistent
    deployment type [and] are not linked to a data repository"
    https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateBackup.html
    (https://docs.aws.amazon.com/cli/v1/reference/fsx/create-backup.html says the same);
    scratch: "Amazon FSx doesn't support backups on scratch file systems"
    https://repost.aws/knowledge-center/fsx-for-lustre-scratch-file-system
  * DeleteFileSystem: "Deleting an Amazon FSx for Lustre file system will fail with a 400 BadRequest
    if a data repository task is in a PENDING or EXECUTING state"; "Backups cannot be enabled on
    S3-linked file systems. To ensure all of your data is written back to S3 ... run an export data
    repository task" https://docs.aws.amazon.com/fsx/latest/APIReference/API_DeleteFileSystem.html
  * DataRepositoryTask lifecycle PENDING, EXECUTING, FAILED, SUCCEEDED, CANCELED, CANCELING
    https://docs.aws.amazon.com/fsx/latest/APIReference/API_DataRepositoryTask.html
  * data repository associations: "supported on all FSx for Lustre 2.12 and 2.15 file systems,
    excluding scratch_1 deployment type"
    https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateDataRepositoryAssociation.html
  * MetadataConfiguration (PERSISTENT_2): DescribeFileSystems reports `Iops` in both modes (in
    AUTOMATIC, the IOPS AWS provisioned from the capacity: 1500 here); CreateFileSystem and
    CreateFileSystemFromBackup take `Iops` "(USER_PROVISIONED mode only)" and are refused otherwise
    https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateFileSystemLustreMetadataConfiguration.html
    https://docs.aws.amazon.com/fsx/latest/APIReference/API_FileSystemLustreMetadataConfiguration.html
  * tags on every FSx request: aws_rules.py (no `aws:` keys, no comma in values).

Test controls (`settle_backups`, `settle_tasks`, `set_file_system`) change the shared backends
directly, so they work under mock_aws and against a ThreadedMotoServer in the same process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from uuid import uuid4

from moto.core.exceptions import JsonRESTError
from moto.fsx import models, responses

ACCOUNT = "123456789012"
RUNNING_TASK_STATES = ("PENDING", "EXECUTING", "CANCELING")


class _Error(JsonRESTError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)


# -- file systems ------------------------------------------------------------------------


AUTOMATIC_METADATA_IOPS = 1500


def metadata_problem(lustre: dict[str, Any] | None) -> str | None:
    """Why AWS refuses this create's MetadataConfiguration, or None: Iops is USER_PROVISIONED only."""
    metadata = (lustre or {}).get("MetadataConfiguration")
    if isinstance(metadata, dict) and metadata.get("Iops") is not None and metadata.get("Mode") != "USER_PROVISIONED":
        return "Metadata IOPS can only be specified in USER_PROVISIONED mode."
    return None


def _lustre_shape(fs_id: str, given: dict[str, Any] | None) -> dict[str, Any]:
    """The LustreConfiguration DescribeFileSystems returns, from what CreateFileSystem was given."""
    given = dict(given or {})
    out: dict[str, Any] = {
        k: v for k, v in given.items() if k not in ("ImportPath", "ExportPath", "AutoImportPolicy", "ImportedFileChunkSize")
    }
    out.setdefault("DeploymentType", "SCRATCH_1")
    out.setdefault("MountName", uuid4().hex[:8])
    out.setdefault("WeeklyMaintenanceStartTime", "7:03:00")
    metadata = given.get("MetadataConfiguration")
    if isinstance(metadata, dict) and metadata.get("Mode") == "AUTOMATIC":
        out["MetadataConfiguration"] = {"Mode": "AUTOMATIC", "Iops": metadata.get("Iops") or AUTOMATIC_METADATA_IOPS}
    if given.get("ImportPath") or given.get("ExportPath"):
        import_path = given.get("ImportPath")
        export_path = given.get("ExportPath") or (
            f"{import_path.rstrip('/')}/FSxLustre{time.strftime('%Y%m%dT%H%M%SZ')}" if import_path else None
        )
        out["DataRepositoryConfiguration"] = {
            k: v
            for k, v in {
                "Lifecycle": "AVAILABLE",
                "ImportPath": import_path,
                "ExportPath": export_path,
                "ImportedFileChunkSize": given.get("ImportedFileChunkSize", 1024),
                "AutoImportPolicy": given.get("AutoImportPolicy", "NONE"),
            }.items()
            if v is not None
        }
    return out


def _network(fs: Any) -> None:
    """ENIs in moto's EC2 backend for the file system's subnets, carrying its security groups."""
    from moto.ec2.models import ec2_backends

    fs.vpc_id, fs.network_interface_ids = None, []
    try:
        ec2 = ec2_backends[fs.backend.account_id][fs.backend.region_name]
        for subnet_id in fs.subnet_ids or []:
            subnet = ec2.get_subnet(subnet_id)
            fs.vpc_id = subnet.vpc_id
            eni = ec2.create_network_interface(
                subnet, None, group_ids=list(fs.security_group_ids or []), description=f"ENI for Amazon FSx {fs.file_system_id}"
            )
            fs.network_interface_ids.append(eni.id)
    except Exception:  # noqa: BLE001 - subnets moto's EC2 does not know: a file system without ENIs
        fs.network_interface_ids = []


def _fs_init(original: Any) -> Any:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.lifecycle = "AVAILABLE"
        self.creation_time = time.time()
        self.file_system_type_version = "2.15" if self.file_system_type == "LUSTRE" else None
        if self.file_system_type == "LUSTRE":
            self.lustre_configuration = _lustre_shape(self.file_system_id, self.lustre_configuration)
        _network(self)

    return __init__


def _fs_to_dict(original: Any) -> Any:
    def to_dict(self: Any) -> dict[str, Any]:
        out: dict[str, Any] = original(self)
        out.pop("SecurityGroupIds", None)  # not in the real FileSystem structure (it is on the ENIs)
        out.update(
            {
                "OwnerId": self.backend.account_id,
                "CreationTime": getattr(self, "creation_time", None),
                "Lifecycle": getattr(self, "lifecycle", "AVAILABLE"),
                "VpcId": getattr(self, "vpc_id", None),
                "NetworkInterfaceIds": getattr(self, "network_interface_ids", None),
                "FileSystemTypeVersion": getattr(self, "file_system_type_version", None),
            }
        )
        return {k: v for k, v in out.items() if v not in (None, [], {})}

    return to_dict


# -- backups -----------------------------------------------------------------------------


def _backup_init(original: Any) -> Any:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        fs = self.backend.file_systems.get(self.file_system_id)
        self.file_system_snapshot = fs.to_dict() if fs is not None else None
        self.backup_type = "USER_INITIATED"
        self.progress_percent = 0
        self.failure_message: str | None = None
        self.file_system_type = fs.file_system_type if fs is not None else None

    return __init__


def _backup_to_dict(original: Any) -> Any:
    def to_dict(self: Any) -> dict[str, Any]:
        out: dict[str, Any] = original(self)
        out.pop("FileSystemId", None)  # real backups say it inside FileSystem
        out.pop("ClientRequestToken", None)
        out.update(
            {
                "Type": self.backup_type,
                "ProgressPercent": self.progress_percent,
                "OwnerId": self.backend.account_id,
                "ResourceType": "FILE_SYSTEM",
                "FileSystem": self.file_system_snapshot or {"FileSystemId": self.file_system_id},
            }
        )
        if self.failure_message:
            out["FailureDetails"] = {"Message": self.failure_message}
        return out

    return to_dict


def _create_backup(original: Any) -> Any:
    def create_backup(self: Any, file_system_id: str, client_request_token: str | None, volume_id: str | None, tags: Any) -> Any:
        tokens = _state(self, "backup_tokens")
        asked = _backup_request(file_system_id, volume_id, tags)
        if client_request_token and client_request_token in tokens and tokens[client_request_token][0] in self.backups:
            made, first = tokens[client_request_token]
            if first != asked:  # API_CreateBackup: same token, parameters that don't match
                raise _Error("IncompatibleParameterError", "A request with this client request token had different parameters.")
            return self.backups[made]
        fs = self.file_systems.get(file_system_id)
        if fs is not None and fs.file_system_type == "LUSTRE":
            # API_CreateBackup: Lustre backups only for a persistent file system not linked to a data repository
            lustre = fs.lustre_configuration or {}
            if str(lustre.get("DeploymentType", "")).startswith("SCRATCH"):
                raise _Error("BadRequest", "Backups are not supported on scratch file systems.")
            if _linked(self, fs):
                raise _Error("BadRequest", "Backups are not supported on file systems linked to a data repository.")
        backup = original(self, file_system_id, client_request_token, volume_id, tags)
        if client_request_token:
            tokens[client_request_token] = (backup.backup_id, asked)
        return backup

    return create_backup


def _backup_request(file_system_id: str, volume_id: str | None, tags: Any) -> tuple[Any, ...]:
    """What a CreateBackup asked for, to compare a repeated client request token's parameters."""
    return (file_system_id, volume_id, tuple(sorted((t["Key"], t.get("Value", "")) for t in tags or [])))


def _describe_backups(original: Any) -> Any:
    def describe_backups(self: Any, backup_ids: list[str], filters: Any = None, **kwargs: Any) -> Any:
        for backup_id in backup_ids or []:
            if backup_id not in self.backups:
                raise _Error("BackupNotFound", f"No backups found for {backup_id}.")
        return original(self, backup_ids, filters, **kwargs)

    return describe_backups


def _describe_file_systems(original: Any) -> Any:
    """DescribeFileSystems with an id FSx does not know: `FileSystemNotFound` ("No Amazon FSx file systems were
    found based upon supplied parameters", API_DescribeFileSystems, Errors). moto leaves the id out of the answer.
    The page does not say whether one unknown id among known ones fails the call; the kit takes the stricter
    reading (the whole call fails, as DescribeBackups does with BackupNotFound), so code that handles it handles both."""

    def describe_file_systems(self: Any, file_system_ids: list[str] | None = None, **kwargs: Any) -> Any:
        for file_system_id in file_system_ids or []:
            if file_system_id not in self.file_systems:
                raise _Error("FileSystemNotFound", f"File system '{file_system_id}' does not exist.")
        return original(self, file_system_ids=file_system_ids, **kwargs)

    return describe_file_systems


def _delete_file_system(original: Any) -> Any:
    def delete_file_system(self: Any, file_system_id: str, *args: Any, **kwargs: Any) -> Any:
        # API_DeleteFileSystem: 400 BadRequest while a data repository task is PENDING or EXECUTING
        running = [
            t["TaskId"]
            for t in _state(self, "tasks").values()
            if t["FileSystemId"] == file_system_id and t["Lifecycle"] in ("PENDING", "EXECUTING")
        ]
        if running:
            raise _Error("BadRequest", f"Cannot delete file system {file_system_id}: data repository task {running[0]} is running.")
        result = original(self, file_system_id, *args, **kwargs)
        associations = _state(self, "associations")
        for dra_id in [k for k, v in associations.items() if v["FileSystemId"] == file_system_id]:
            del associations[dra_id]
        return result

    return delete_file_system


# -- state the extension keeps on each backend (moto's reset makes new backends) -----------


def _state(backend: Any, name: str) -> dict[str, Any]:
    store: dict[str, dict[str, Any]] = backend.__dict__.setdefault("_reaper_fsx", {})
    return store.setdefault(name, {})


def _fs_or_404(backend: Any, file_system_id: str) -> Any:
    fs = backend.file_systems.get(file_system_id)
    if fs is None:
        raise _Error("FileSystemNotFound", f"File system '{file_system_id}' does not exist.")
    return fs


def _page(items: list[Any], max_results: int | None, token: str | None) -> tuple[list[Any], str | None]:
    start = int(token or 0)
    size = max_results or len(items) or 1
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def _filters(filters: list[dict[str, Any]] | None) -> dict[str, list[str]]:
    return {f["Name"]: list(f.get("Values") or []) for f in filters or []}


# -- new operations on the backend ---------------------------------------------------------


def create_data_repository_association(backend: Any, params: dict[str, Any]) -> dict[str, Any]:
    fs = _fs_or_404(backend, params["FileSystemId"])
    if (fs.lustre_configuration or {}).get("DeploymentType") == "SCRATCH_1":
        raise _Error("BadRequest", "Data repository associations are not supported on SCRATCH_1 file systems.")
    dra_id = f"dra-{uuid4().hex[:17]}"
    dra = {
        "AssociationId": dra_id,
        "ResourceARN": f"arn:aws:fsx:{backend.region_name}:{backend.account_id}:association/{fs.file_system_id}/{dra_id}",
        "FileSystemId": fs.file_system_id,
        "Lifecycle": "AVAILABLE",
        "FileSystemPath": params.get("FileSystemPath") or "/",
        "DataRepositoryPath": params["DataRepositoryPath"],
        "BatchImportMetaDataOnCreate": bool(params.get("BatchImportMetaDataOnCreate", False)),
        "ImportedFileChunkSize": params.get("ImportedFileChunkSize", 1024),
        "S3": params.get("S3") or {},
        "Tags": params.get("Tags") or [],
        "CreationTime": time.time(),
    }
    _state(backend, "associations")[dra_id] = dra
    return dra


def update_data_repository_association(backend: Any, params: dict[str, Any]) -> dict[str, Any]:
    dra = _state(backend, "associations").get(params["AssociationId"])
    if dra is None:
        raise _Error("DataRepositoryAssociationNotFound", f"No data repository associations found for {params['AssociationId']}.")
    s3 = dict(dra.get("S3") or {})
    s3.update(params.get("S3") or {})
    dra["S3"] = s3
    for key in ("ImportedFileChunkSize",):
        if key in params:
            dra[key] = params[key]
    return dict(dra)


def describe_data_repository_associations(backend: Any, params: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    associations = _state(backend, "associations")
    wanted = params.get("AssociationIds") or []
    for dra_id in wanted:
        if dra_id not in associations:
            raise _Error("DataRepositoryAssociationNotFound", f"No data repository associations found for {dra_id}.")
    items = [associations[i] for i in wanted] if wanted else list(associations.values())
    by_fs = _filters(params.get("Filters")).get("file-system-id")
    if by_fs:
        items = [d for d in items if d["FileSystemId"] in by_fs]
    max_results = params.get("MaxResults")
    if max_results is not None and not 1 <= int(max_results) <= 25:
        raise _Error("BadRequest", "MaxResults must be between 1 and 25.")
    return _page(items, max_results or 25, params.get("NextToken"))


def _linked(backend: Any, fs: Any) -> bool:
    if (fs.lustre_configuration or {}).get("DataRepositoryConfiguration"):
        return True
    return any(d["FileSystemId"] == fs.file_system_id for d in _state(backend, "associations").values())


def create_data_repository_task(backend: Any, params: dict[str, Any]) -> dict[str, Any]:
    tokens = _state(backend, "task_tokens")
    tasks = _state(backend, "tasks")
    token = params.get("ClientRequestToken")
    if token and token in tokens:
        return dict(tasks[tokens[token]])
    fs = _fs_or_404(backend, params["FileSystemId"])
    if not _linked(backend, fs):
        raise _Error("BadRequest", "The file system is not linked to a data repository, so a data repository task cannot run.")
    if any(t["FileSystemId"] == fs.file_system_id and t["Lifecycle"] in RUNNING_TASK_STATES for t in tasks.values()):
        raise _Error("DataRepositoryTaskExecuting", "Another data repository task is running on this file system.")
    if params.get("Type") == "EXPORT_TO_REPOSITORY":
        auto = [
            a["AssociationId"] for a in _state(backend, "associations").values()
            if a["FileSystemId"] == fs.file_system_id and ((a.get("S3") or {}).get("AutoExportPolicy") or {}).get("Events")
        ]  # fmt: skip
        if auto:
            raise _Error(
                "BadRequest", f"Automatic export is enabled on {', '.join(auto)}: disable it before an export data repository task."
            )
    report = params.get("Report") or {}
    if report.get("Enabled") and not report.get("Path"):
        raise _Error("BadRequest", "Report.Path is required when the completion report is enabled.")
    task_id = f"task-{uuid4().hex[:17]}"
    task = {
        "TaskId": task_id,
        "Lifecycle": "PENDING",
        "Type": params["Type"],
        "CreationTime": time.time(),
        "ResourceARN": f"arn:aws:fsx:{backend.region_name}:{backend.account_id}:task/{task_id}",
        "Tags": params.get("Tags") or [],
        "FileSystemId": fs.file_system_id,
        "Paths": params.get("Paths") or [],
        "Status": {"TotalCount": 0, "SucceededCount": 0, "FailedCount": 0},
        "Report": report,
    }
    tasks[task_id] = task
    if token:
        tokens[token] = task_id
    return dict(task)


def describe_data_repository_tasks(backend: Any, params: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    tasks = _state(backend, "tasks")
    wanted = params.get("TaskIds") or []
    for task_id in wanted:
        if task_id not in tasks:
            raise _Error("DataRepositoryTaskNotFound", f"No data repository tasks found for {task_id}.")
    items = [tasks[i] for i in wanted] if wanted else list(tasks.values())
    f = _filters(params.get("Filters"))
    if f.get("file-system-id"):
        items = [t for t in items if t["FileSystemId"] in f["file-system-id"]]
    if f.get("task-lifecycle"):
        items = [t for t in items if t["Lifecycle"] in f["task-lifecycle"]]
    return _page([dict(t) for t in items], params.get("MaxResults"), params.get("NextToken"))


def create_file_system_from_backup(backend: Any, params: dict[str, Any]) -> Any:
    tokens = _state(backend, "restore_tokens")
    token = params.get("ClientRequestToken")
    if token and token in tokens and tokens[token] in backend.file_systems:
        return backend.file_systems[tokens[token]]
    backup = backend.backups.get(params["BackupId"])
    if backup is None:
        raise _Error("BackupNotFound", f"Backup {params['BackupId']} does not exist.")
    if backup.lifecycle != "AVAILABLE":
        raise _Error("BadRequest", f"Backup {backup.backup_id} is {backup.lifecycle}; only AVAILABLE backups can be restored.")
    problem = metadata_problem(params.get("LustreConfiguration"))
    if problem:
        raise _Error("BadRequest", problem)
    source = backup.file_system_snapshot or {}
    lustre = {k: v for k, v in (source.get("LustreConfiguration") or {}).items() if k not in ("MountName", "DataRepositoryConfiguration")}
    lustre.update(params.get("LustreConfiguration") or {})
    fs = backend.create_file_system(
        client_request_token=token,
        file_system_type=source.get("FileSystemType", "LUSTRE"),
        storage_capacity=source.get("StorageCapacity"),
        storage_type=params.get("StorageType") or source.get("StorageType") or "SSD",
        subnet_ids=params["SubnetIds"],
        security_group_ids=params.get("SecurityGroupIds") or [],
        tags=params.get("Tags"),
        kms_key_id=params.get("KmsKeyId") or source.get("KmsKeyId"),
        windows_configuration=None,
        lustre_configuration=lustre,
        ontap_configuration=None,
        file_system_type_version=params.get("FileSystemTypeVersion"),
        open_zfs_configuration=None,
    )
    fs.lifecycle = "CREATING"
    if token:
        tokens[token] = fs.file_system_id
    return fs


# -- the response methods (FSxResponse dispatches to them by operation name) ---------------


def _resp_create_dra(self: Any) -> str:
    return json.dumps({"Association": create_data_repository_association(self.fsx_backend, json.loads(self.body))})


def _resp_describe_dras(self: Any) -> str:
    items, token = describe_data_repository_associations(self.fsx_backend, json.loads(self.body))
    return json.dumps({"Associations": items, "NextToken": token})


def _resp_update_dra(self: Any) -> str:
    return json.dumps({"Association": update_data_repository_association(self.fsx_backend, json.loads(self.body))})


def _resp_create_task(self: Any) -> str:
    return json.dumps({"DataRepositoryTask": create_data_repository_task(self.fsx_backend, json.loads(self.body))})


def _resp_describe_tasks(self: Any) -> str:
    items, token = describe_data_repository_tasks(self.fsx_backend, json.loads(self.body))
    return json.dumps({"DataRepositoryTasks": items, "NextToken": token})


def _resp_from_backup(self: Any) -> str:
    fs = create_file_system_from_backup(self.fsx_backend, json.loads(self.body))
    return json.dumps({"FileSystem": fs.to_dict()})


# -- test controls -------------------------------------------------------------------------


def _backends(region: str | None = None, account: str = ACCOUNT) -> Iterable[Any]:
    by_region = models.fsx_backends[account]
    regions = [region] if region else list(by_region.keys())
    return [by_region[r] for r in regions]


def settle_backups(
    lifecycle: str = "AVAILABLE", backup_ids: Iterable[str] | None = None, message: str | None = None, region: str | None = None
) -> list[str]:
    """End CREATING backups (all, or the ids given) as AVAILABLE or FAILED; returns their ids."""
    wanted = set(backup_ids) if backup_ids is not None else None
    done: list[str] = []
    for backend in _backends(region):
        for backup in backend.backups.values():
            if (wanted is None and backup.lifecycle in ("CREATING", "PENDING", "TRANSFERRING")) or (wanted and backup.backup_id in wanted):
                backup.lifecycle = lifecycle
                backup.progress_percent = 100 if lifecycle == "AVAILABLE" else backup.progress_percent
                backup.failure_message = (message or "The backup could not be completed.") if lifecycle == "FAILED" else None
                done.append(backup.backup_id)
    return done


def settle_tasks(
    lifecycle: str = "SUCCEEDED",
    failed_files: int = 0,
    total_files: int = 120,
    task_ids: Iterable[str] | None = None,
    message: str | None = None,
    region: str | None = None,
    at: datetime | None = None,
) -> list[str]:
    """End running data repository tasks (all, or the ids given): SUCCEEDED (with `failed_files`
    failed), FAILED, or EXECUTING to leave one stuck. Returns their ids."""
    wanted = set(task_ids) if task_ids is not None else None
    stamp = at.timestamp() if at is not None else time.time()
    done: list[str] = []
    for backend in _backends(region):
        for task in _state(backend, "tasks").values():
            if (wanted is None and task["Lifecycle"] in RUNNING_TASK_STATES) or (wanted and task["TaskId"] in wanted):
                task["Lifecycle"] = lifecycle
                task["StartTime"] = task.get("StartTime") or max(task["CreationTime"], stamp - 60)
                if lifecycle != "EXECUTING":
                    task["EndTime"] = stamp
                failed = failed_files if lifecycle == "SUCCEEDED" else 0
                task["Status"] = {
                    "TotalCount": total_files,
                    "SucceededCount": total_files - failed,
                    "FailedCount": failed,
                    "LastUpdatedTime": stamp,
                }
                if lifecycle == "FAILED":
                    task["FailureDetails"] = {"Message": message or "The export could not be completed."}
                done.append(task["TaskId"])
    return done


def set_file_system(
    file_system_id: str, lifecycle: str | None = None, created_at: datetime | None = None, region: str | None = None
) -> None:
    """Set what AWS sets over time: a file system's lifecycle, or when it was created."""
    for backend in _backends(region):
        fs = backend.file_systems.get(file_system_id)
        if fs is None:
            continue
        if lifecycle is not None:
            fs.lifecycle = lifecycle
        if created_at is not None:
            fs.creation_time = created_at.timestamp()
        return
    raise KeyError(f"no file system {file_system_id}")


def set_backup(backup_id: str, created_at: datetime, region: str | None = None) -> None:
    """When a backup was made (moto stamps the moment it was made): what the storage kind's retention reads."""
    for backend in _backends(region):
        backup = backend.backups.get(backup_id)
        if backup is not None:
            backup.creation_time = created_at.timestamp()
            return
    raise KeyError(f"no backup {backup_id}")


def set_association(association_id: str, lifecycle: str, region: str | None = None) -> None:
    for backend in _backends(region):
        dra = _state(backend, "associations").get(association_id)
        if dra is not None:
            dra["Lifecycle"] = lifecycle
            return
    raise KeyError(f"no data repository association {association_id}")


# -- apply -------------------------------------------------------------------------------


def apply() -> None:
    if getattr(models.FSxBackend, "_reaper_fsx", False):
        return
    models.FileSystem.__init__ = _fs_init(models.FileSystem.__init__)  # type: ignore[method-assign]
    models.FileSystem.to_dict = _fs_to_dict(models.FileSystem.to_dict)  # type: ignore[method-assign]
    models.Backup.__init__ = _backup_init(models.Backup.__init__)  # type: ignore[method-assign]
    models.Backup.to_dict = _backup_to_dict(models.Backup.to_dict)  # type: ignore[method-assign]
    backend = models.FSxBackend
    backend.create_backup = _create_backup(backend.create_backup)  # type: ignore[method-assign]
    # describe_backups is wrapped by moto's @paginate: wrap outside it so unknown ids fail first
    backend.describe_backups = _describe_backups(backend.describe_backups)  # type: ignore[method-assign]
    backend.describe_file_systems = _describe_file_systems(backend.describe_file_systems)  # type: ignore[method-assign]
    backend.delete_file_system = _delete_file_system(backend.delete_file_system)  # type: ignore[method-assign]
    resp = responses.FSxResponse
    resp.create_data_repository_association = _resp_create_dra  # type: ignore[attr-defined]
    resp.describe_data_repository_associations = _resp_describe_dras  # type: ignore[attr-defined]
    resp.create_data_repository_task = _resp_create_task  # type: ignore[attr-defined]
    resp.update_data_repository_association = _resp_update_dra  # type: ignore[attr-defined]
    resp.describe_data_repository_tasks = _resp_describe_tasks  # type: ignore[attr-defined]
    resp.create_file_system_from_backup = _resp_from_backup  # type: ignore[attr-defined]
    backend._reaper_fsx = True  # type: ignore[attr-defined]

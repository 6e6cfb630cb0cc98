"""The FSx moto extension behaves like FSx where the reaper depends on it, in-process and in server mode."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from reaper_devkit import seed_fsx as sf
from reaper_devkit.local_aws import local_account, session
from reaper_devkit.moto_ext import fsx as fsx_ext


def code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def test_file_systems_have_lifecycle_creation_time_network_and_the_real_lustre_shape(aws):
    fsx, ec2 = aws.client("fsx"), aws.client("ec2")
    subnet, group = sf.network(ec2)
    fs_id = sf.file_system(fsx, subnet, group, deployment="SCRATCH_1", throughput=None, import_path="s3://b/in")
    fs = fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]
    assert fs["Lifecycle"] == "AVAILABLE" and fs["CreationTime"] <= datetime.now(UTC) and fs["VpcId"].startswith("vpc-")
    link = fs["LustreConfiguration"]["DataRepositoryConfiguration"]
    assert link["Lifecycle"] == "AVAILABLE" and link["ImportPath"] == "s3://b/in" and link["ExportPath"].startswith("s3://b/in/FSxLustre")
    eni = ec2.describe_network_interfaces(NetworkInterfaceIds=fs["NetworkInterfaceIds"])["NetworkInterfaces"][0]
    assert [g["GroupId"] for g in eni["Groups"]] == [group]
    fsx_ext.set_file_system(fs_id, lifecycle="UPDATING", created_at=datetime(2026, 1, 1, tzinfo=UTC))
    again = fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]
    assert again["Lifecycle"] == "UPDATING" and again["CreationTime"] == datetime(2026, 1, 1, tzinfo=UTC)


def test_backups_wait_until_settled_and_keep_the_file_system_description_after_it_is_gone(aws):
    fsx = aws.client("fsx")
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(fsx, subnet, group, capacity=2400)
    backup = fsx.create_backup(FileSystemId=fs_id, ClientRequestToken="t-1")["Backup"]
    assert backup["Lifecycle"] == "CREATING" and backup["Type"] == "USER_INITIATED"
    assert fsx.create_backup(FileSystemId=fs_id, ClientRequestToken="t-1")["Backup"]["BackupId"] == backup["BackupId"]
    fsx.delete_file_system(FileSystemId=fs_id)
    assert fsx_ext.settle_backups() == [backup["BackupId"]]
    described = fsx.describe_backups(BackupIds=[backup["BackupId"]])["Backups"][0]
    assert described["Lifecycle"] == "AVAILABLE" and described["FileSystem"]["FileSystemId"] == fs_id
    assert (
        described["FileSystem"]["StorageCapacity"] == 2400
        and described["FileSystem"]["LustreConfiguration"]["DeploymentType"] == "PERSISTENT_2"
    )
    with pytest.raises(ClientError) as unknown:
        fsx.describe_backups(BackupIds=[backup["BackupId"], "backup-0000000000000000a"])
    assert code(unknown) == "BackupNotFound"


def test_backups_fail_on_request_and_are_refused_where_aws_refuses_them(aws):
    fsx = aws.client("fsx")
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(fsx, subnet, group)
    backup_id = fsx.create_backup(FileSystemId=fs_id)["Backup"]["BackupId"]
    fsx_ext.settle_backups("FAILED", message="internal error")
    failed = fsx.describe_backups(BackupIds=[backup_id])["Backups"][0]
    assert failed["Lifecycle"] == "FAILED" and failed["FailureDetails"]["Message"] == "internal error"
    with pytest.raises(ClientError) as restore:
        fsx.create_file_system_from_backup(BackupId=backup_id, SubnetIds=[subnet])
    assert code(restore) == "BadRequest"
    scratch = sf.file_system(fsx, subnet, group, deployment="SCRATCH_2", throughput=None)
    with pytest.raises(ClientError) as refused:
        fsx.create_backup(FileSystemId=scratch)
    assert code(refused) == "BadRequest"


def test_export_tasks_need_a_link_run_one_at_a_time_and_end_as_told(aws):
    fsx = aws.client("fsx")
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(fsx, subnet, group, deployment="SCRATCH_2", throughput=None)
    report = {"Enabled": True, "Path": "s3://b/out", "Format": "REPORT_CSV_20191124", "Scope": "FAILED_FILES_ONLY"}
    with pytest.raises(ClientError) as unlinked:
        fsx.create_data_repository_task(Type="EXPORT_TO_REPOSITORY", FileSystemId=fs_id, Report=report)
    assert code(unlinked) == "BadRequest"
    sf.link(fsx, fs_id, "s3://b/out")
    assert (
        fsx.describe_data_repository_associations(Filters=[{"Name": "file-system-id", "Values": [fs_id]}])["Associations"][0][
            "FileSystemPath"
        ]
        == "/"
    )
    task = fsx.create_data_repository_task(Type="EXPORT_TO_REPOSITORY", FileSystemId=fs_id, Report=report)["DataRepositoryTask"]
    assert task["Lifecycle"] == "PENDING"
    with pytest.raises(ClientError) as busy:
        fsx.create_data_repository_task(Type="EXPORT_TO_REPOSITORY", FileSystemId=fs_id, Report=report)
    assert code(busy) == "DataRepositoryTaskExecuting"
    fsx_ext.settle_tasks(failed_files=2, total_files=50)
    done = fsx.describe_data_repository_tasks(TaskIds=[task["TaskId"]])["DataRepositoryTasks"][0]
    assert done["Lifecycle"] == "SUCCEEDED" and done["Status"]["FailedCount"] == 2 and done["EndTime"] >= done["StartTime"]
    with pytest.raises(ClientError) as unknown:
        fsx.describe_data_repository_tasks(TaskIds=["task-0000000000000000a"])
    assert code(unknown) == "DataRepositoryTaskNotFound"


@pytest.mark.slow
def test_the_extension_works_against_a_moto_server_too():
    with local_account():
        s = session()
        fsx = s.client("fsx")
        subnet, group = sf.network(s.client("ec2"))
        fs_id = sf.file_system(fsx, subnet, group, created_at=datetime.now(UTC) - timedelta(days=1))
        backup_id = fsx.create_backup(FileSystemId=fs_id)["Backup"]["BackupId"]
        fsx_ext.settle_backups()
        restored = fsx.create_file_system_from_backup(BackupId=backup_id, SubnetIds=[subnet], SecurityGroupIds=[group])["FileSystem"]
        assert restored["Lifecycle"] == "CREATING" and restored["StorageCapacity"] == 1200
        assert fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["CreationTime"] < datetime.now(UTC) - timedelta(hours=23)


def test_create_backup_is_idempotent_by_token_and_refuses_the_same_token_with_other_parameters(aws):
    # API_CreateBackup: same token + same parameters = the same backup; other parameters = IncompatibleParameterError
    fsx = aws.client("fsx")
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(fsx, subnet, group)
    other = sf.file_system(fsx, subnet, group)
    tags = [{"Key": "reaper:source-fs", "Value": fs_id}]
    first = fsx.create_backup(FileSystemId=fs_id, ClientRequestToken="t-2", Tags=tags)["Backup"]
    assert fsx.create_backup(FileSystemId=fs_id, ClientRequestToken="t-2", Tags=tags)["Backup"]["BackupId"] == first["BackupId"]
    for changed in ({"FileSystemId": other, "Tags": tags}, {"FileSystemId": fs_id, "Tags": [*tags, {"Key": "Name", "Value": "x"}]}):
        with pytest.raises(ClientError) as refused:
            fsx.create_backup(ClientRequestToken="t-2", **changed)
        assert code(refused) == "IncompatibleParameterError"
    # and the tags given at creation come back with the backup, found by the filters the reaper reads with
    filters = [{"Name": "file-system-id", "Values": [fs_id]}, {"Name": "backup-type", "Values": ["USER_INITIATED"]}]
    found = fsx.describe_backups(Filters=filters)["Backups"]
    assert [b["BackupId"] for b in found] == [first["BackupId"]] and {"Key": "reaper:source-fs", "Value": fs_id} in found[0]["Tags"]
    assert fsx.describe_backups(Filters=[{"Name": "file-system-id", "Values": [other]}])["Backups"] == []


def test_describe_file_systems_refuses_an_id_fsx_does_not_know(aws):
    # Given one file system, and one that was deleted (moto forgets it at once; FSx after its DELETING)
    fsx = aws.client("fsx")
    subnet, group = sf.network(aws.client("ec2"))
    live = sf.file_system(fsx, subnet, group)
    gone = sf.file_system(fsx, subnet, group)
    fsx.delete_file_system(FileSystemId=gone)
    # When it is asked for by id, alone or with a file system that exists
    for ids in ([gone], [live, gone]):
        with pytest.raises(ClientError) as unknown:
            fsx.describe_file_systems(FileSystemIds=ids)
        # Then FSx's answer (API_DescribeFileSystems, Errors), not a silent omission
        assert code(unknown) == "FileSystemNotFound"
    assert [f["FileSystemId"] for f in fsx.describe_file_systems(FileSystemIds=[live])["FileSystems"]] == [live]
    assert [f["FileSystemId"] for f in fsx.describe_file_systems()["FileSystems"]] == [live]

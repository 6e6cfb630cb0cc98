"""The `reaper` command line on FSx, in-process under moto: plan, sweep --json, exit codes, and
`reaper restore fs-…` bringing a file system back (and the restore function doing the same)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper_devkit import seed_fsx as sf
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import fsx as fsx_ext
from reaper_devkit.template import function_actions
from tests.conftest import load_function

REQUIRED = {"kind", "id", "arn", "region", "verdict", "action", "reason", "executed", "hourly_usd", "owner"}
TAGS = {**sf.DEV, "Name": "llm-data", "cost-center": "4711"}


@pytest.fixture
def logged(table, monkeypatch) -> str:
    monkeypatch.setenv("REAPER_TABLE", table)
    return table


@pytest.fixture
def net(aws) -> tuple[str, str]:
    return sf.network(aws.client("ec2"))


def idle(aws, net, now: datetime, **kw: Any) -> str:
    fs_id = sf.file_system(aws.client("fsx"), *net, tags=kw.pop("tags", TAGS), created_at=now - timedelta(days=2), **kw)
    sf.io(aws.client("cloudwatch"), fs_id, now)
    return fs_id


def rows(out: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(line) for line in out.splitlines() if line.strip())}


def enforce(*extra: str) -> list[str]:
    return ["sweep", "--kind", "fsx", "--mode", "enforce", "--grace-minutes", "0", "--json", *extra]


def test_plan_says_would_and_after_phase_one_in_progress(aws, net, logged, capsys):
    now = datetime.now(UTC)
    fs_id = idle(aws, net, now)
    assert main(["plan", "--kind", "fsx"]) == 0
    out = capsys.readouterr().out
    assert "would backup" in out and fs_id in out and "$174/month" in out
    assert main(enforce()) == 0
    capsys.readouterr()
    assert main(["plan", "--kind", "fsx"]) == 0
    out = capsys.readouterr().out
    assert "in progress: backup backup-" in out and "CREATING" in out


def test_sweep_json_has_the_contract_fields_and_a_failed_backup_exits_1(aws, net, logged, capsys):
    now = datetime.now(UTC)
    fs_id = idle(aws, net, now)
    assert main(enforce()) == 0
    first = rows(capsys.readouterr().out)[fs_id]
    assert set(first) >= REQUIRED and first["executed"] is True and first["action"] == "backup"
    assert first["owner"] == "ana@example.com" and first["hourly_usd"] == pytest.approx(0.2384)
    fsx_ext.settle_backups("FAILED")
    assert main(enforce()) == 1
    row = rows(capsys.readouterr().out)[fs_id]
    assert (
        row["verdict"] == "error"
        and row["executed"] is False
        and fs_id in {f["FileSystemId"] for f in aws.client("fsx").describe_file_systems()["FileSystems"]}
    )


def test_restore_round_trip_same_type_capacity_throughput_network_and_tags(aws, net, logged, capsys):
    now = datetime.now(UTC)
    fsx, ec2 = aws.client("fsx"), aws.client("ec2")
    fs_id = idle(aws, net, now, deployment="PERSISTENT_1", throughput=200, capacity=2400)
    assert main(enforce()) == 0
    fsx_ext.settle_backups()
    assert main(enforce()) == 0
    assert rows(capsys.readouterr().out)[fs_id]["action"] == "delete"
    assert fs_id not in {f["FileSystemId"] for f in fsx.describe_file_systems()["FileSystems"]}
    # When the owner asks for it back
    with recording() as calls:
        assert main(["restore", fs_id]) == 0
    said = capsys.readouterr().out
    new_id = said.split(" restored as ")[1].split()[0]
    # Then a new file system from the backup has what the old one had
    new = fsx.describe_file_systems(FileSystemIds=[new_id])["FileSystems"][0]
    assert new["LustreConfiguration"]["DeploymentType"] == "PERSISTENT_1" and new["LustreConfiguration"]["PerUnitStorageThroughput"] == 200
    assert new["StorageCapacity"] == 2400 and new["SubnetIds"] == [net[0]]
    groups = ec2.describe_network_interfaces(NetworkInterfaceIds=new["NetworkInterfaceIds"])["NetworkInterfaces"][0]["Groups"]
    assert [g["GroupId"] for g in groups] == [net[1]]
    tags = {t["Key"]: t["Value"] for t in new["Tags"]}
    assert {k: tags[k] for k in TAGS} == TAGS and tags["reaper:restored-from"] == fs_id
    assert "reaper:backup-id" not in tags and "reaper:warned-at" not in tags  # the restored one starts afresh
    assert "2,400 GiB" in said and "200 MB/s/TiB" in said and net[1] in said
    assert calls.actions <= function_actions("RestoreFunction")
    assert calls.ungranted("RestoreFunction") == []  # on the resource it names, conditions included
    # And asking again does not make a second one
    assert main(["restore", fs_id]) == 0
    assert "restored already, as " + new_id in capsys.readouterr().out
    assert len(fsx.describe_file_systems()["FileSystems"]) == 1


def test_what_aws_refuses_is_not_sent_on_backup_or_restore(aws, net, logged, capsys):
    # Given a PERSISTENT_2 file system CloudFormation made: two security groups, metadata IOPS in
    # AUTOMATIC mode (DescribeFileSystems reports the Iops AWS chose), and AWS's own aws: tags
    now = datetime.now(UTC)
    fsx, ec2 = aws.client("fsx"), aws.client("ec2")
    vpc = ec2.describe_subnets(SubnetIds=[net[0]])["Subnets"][0]["VpcId"]
    second = ec2.create_security_group(GroupName="lustre-more", Description="more", VpcId=vpc)["GroupId"]
    fs_id = idle(aws, net, now, more_groups=[second], metadata_mode="AUTOMATIC")
    fs = fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]
    assert fs["LustreConfiguration"]["MetadataConfiguration"] == {"Mode": "AUTOMATIC", "Iops": 1500}
    sf.system_tags(fs["ResourceARN"], {"aws:cloudformation:stack-name": "data", "AWS:CloudFormation:logical-id": "Lustre"})
    # When it is backed up (FSx refuses a comma in a tag value, and any aws: key)
    assert main(enforce()) == 0, capsys.readouterr().err
    backup = fsx.describe_backups()["Backups"][0]
    btags = {t["Key"]: t["Value"] for t in backup["Tags"]}
    # Then the ids are space-separated, and no aws: tag was copied
    assert sorted(btags["reaper:source-security-groups"].split(" ")) == sorted([net[1], second])
    assert not any(k.lower().startswith("aws:") for k in btags)
    fsx_ext.settle_backups()
    assert main(enforce()) == 0
    capsys.readouterr()
    # When it is restored (Iops is USER_PROVISIONED only on CreateFileSystemFromBackup: the kit refuses it too)
    assert main(["restore", fs_id]) == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    new_id = said.split(" restored as ")[1].split()[0]
    new = fsx.describe_file_systems(FileSystemIds=[new_id])["FileSystems"][0]
    # Then it is AUTOMATIC again, has both groups and the owner's tags, and says which tags it could not bring back
    assert new["LustreConfiguration"]["MetadataConfiguration"]["Mode"] == "AUTOMATIC"
    groups = ec2.describe_network_interfaces(NetworkInterfaceIds=new["NetworkInterfaceIds"])["NetworkInterfaces"][0]["Groups"]
    assert sorted(g["GroupId"] for g in groups) == sorted([net[1], second])
    assert not any(t["Key"].lower().startswith("aws:") for t in new["Tags"])
    assert "(not AWS:CloudFormation:logical-id, aws:cloudformation:stack-name: AWS's own tags" in said


@pytest.mark.parametrize("value", ["sg-0a1 sg-0b2", "sg-0a1,sg-0b2", "sg-0a1+sg-0b2", " sg-0a1 , sg-0b2 "])
def test_ids_in_a_backup_tag_are_read_in_every_form_it_was_written(value):
    from reaper.kinds.fsx.restore import split_ids

    assert split_ids(value) == ["sg-0a1", "sg-0b2"]


def test_metadata_iops_goes_to_a_restore_only_when_user_provisioned():
    from reaper.kinds.fsx.restore import metadata_for_restore

    assert metadata_for_restore({"Mode": "AUTOMATIC", "Iops": 1500}) == {"Mode": "AUTOMATIC"}
    assert metadata_for_restore({"Mode": "USER_PROVISIONED", "Iops": 6000}) == {"Mode": "USER_PROVISIONED", "Iops": 6000}
    assert metadata_for_restore({"Iops": 3000}) == {}


def test_ids_in_one_tag_value_are_whole_and_within_256_characters():
    from reaper.kinds.fsx.actions import joined_ids

    ids = [f"sg-{i:017x}" for i in range(20)]  # 20 ids of 20 characters: 419 joined
    value = joined_ids(ids)
    assert len(value) <= 256 and "," not in value and all(part in ids for part in value.split(" "))
    assert joined_ids([]) == ""


def test_automatic_export_is_turned_off_before_the_export_task_as_fsx_requires(aws, net, logged, capsys):
    # Given a PERSISTENT_2 file system linked at / with automatic export (and import) on
    now = datetime.now(UTC)
    fsx = aws.client("fsx")
    fs_id = idle(aws, net, now)
    dra = sf.link(fsx, fs_id, "s3://ml-data/llm/", auto_export=["NEW", "CHANGED", "DELETED"], auto_import=["NEW"])
    # When the sweep starts its copy (FSx refuses an export task while automatic export is on: so does the kit)
    with recording() as calls:
        assert main(enforce()) == 0, capsys.readouterr().err
    row = rows(capsys.readouterr().out)[fs_id]
    # Then automatic export was turned off first (import kept), and the export task runs
    assert row["action"] == "export" and row["executed"] is True and f"automatic export turned off on {dra}" in row["detail"]
    s3 = fsx.describe_data_repository_associations(AssociationIds=[dra])["Associations"][0]["S3"]
    assert s3["AutoExportPolicy"]["Events"] == [] and s3["AutoImportPolicy"]["Events"] == ["NEW"]
    assert [t["Type"] for t in fsx.describe_data_repository_tasks()["DataRepositoryTasks"]] == ["EXPORT_TO_REPOSITORY"]
    assert calls.actions <= function_actions("FsxFunction") and calls.ungranted("FsxFunction") == []


def test_an_association_without_automatic_export_is_left_as_it_is(aws, net, logged, capsys):
    now = datetime.now(UTC)
    fsx = aws.client("fsx")
    fs_id = idle(aws, net, now)
    dra = sf.link(fsx, fs_id, "s3://ml-data/llm/", auto_import=["NEW", "CHANGED"])
    with recording() as calls:
        assert main(enforce()) == 0
    assert "automatic export" not in rows(capsys.readouterr().out)[fs_id]["detail"]
    assert "fsx:UpdateDataRepositoryAssociation" not in calls.actions
    assert fsx.describe_data_repository_associations(AssociationIds=[dra])["Associations"][0]["S3"] == {
        "AutoImportPolicy": {"Events": ["NEW", "CHANGED"]}
    }


def test_restore_of_an_exported_scratch_file_system_says_where_the_data_is(aws, net, logged, capsys):
    now = datetime.now(UTC)
    fs_id = idle(aws, net, now, deployment="SCRATCH_2", throughput=None)
    sf.link(aws.client("fsx"), fs_id, "s3://ml-data/run-12")
    assert main(enforce()) == 0
    fsx_ext.settle_tasks()
    assert main(enforce()) == 0
    capsys.readouterr()
    assert main(["restore", fs_id]) == 0
    out = capsys.readouterr().out
    assert "s3://ml-data/run-12" in out and "create-data-repository-association" in out and "task-" in out


def test_restore_refuses_what_cannot_be_restored(aws, net, logged, capsys):
    now = datetime.now(UTC)
    disposable = idle(aws, net, now, deployment="SCRATCH_2", throughput=None, tags={**TAGS, "reaper:disposable": "true"})
    waiting = idle(aws, net, now)
    assert main(enforce()) == 0
    capsys.readouterr()
    # A disposable one: its data is gone, and it says so
    assert main(["restore", disposable]) == 2
    assert "its data is gone" in capsys.readouterr().err
    # One still there, between the phases: nothing to restore
    assert main(["restore", waiting]) == 2
    assert "still exists (AVAILABLE)" in capsys.readouterr().err
    # Deleted by someone while its backup is CREATING: restore waits for the backup
    aws.client("fsx").delete_file_system(FileSystemId=waiting)
    assert main(["restore", waiting]) == 2
    assert "is CREATING" in capsys.readouterr().err
    # Never touched by the reaper
    assert main(["restore", "fs-0123456789abcdef0"]) == 2
    assert "no restore record" in capsys.readouterr().err


def test_without_an_action_log_it_refuses_to_start_what_it_could_not_restore(aws, net, capsys):
    now = datetime.now(UTC)
    persistent = idle(aws, net, now)
    disposable = idle(aws, net, now, deployment="SCRATCH_2", throughput=None, tags={**TAGS, "reaper:disposable": "true"})
    assert main(enforce()) == 1
    out = rows(capsys.readouterr().out)
    assert out[persistent]["verdict"] == "error" and "no action log" in out[persistent]["reason"]
    assert aws.client("fsx").describe_backups()["Backups"] == []
    assert out[disposable]["executed"] is True  # nothing to restore there anyway: the owner allowed it


def test_the_restore_function_restores_an_fsx_file_system_too(aws, net, deployed_env, monkeypatch, lambda_context):
    monkeypatch.setenv("REAPER_TABLE", deployed_env["REAPER_TABLE"])
    now = datetime.now(UTC)
    fs_id = idle(aws, net, now)
    assert main(enforce()) == 0
    fsx_ext.settle_backups()
    assert main(enforce()) == 0
    with recording() as calls:
        result = load_function("restore").handler({"name": fs_id}, lambda_context)
    assert result["ok"] is True and f"{fs_id} restored as fs-" in result["result"]
    assert calls.actions <= function_actions("RestoreFunction")
    assert calls.ungranted("RestoreFunction") == []  # on the resource it names, conditions included

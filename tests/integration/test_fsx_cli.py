"""The `reaper` command line on FSx, in-process under moto: plan, sweep --json, exit codes, and
`reaper restore fs-…` bringing a file system back (and the restore function doing the same)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli import main
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
    assert row["verdict"] == "error" and row["executed"] is False and fs_id in {f["FileSystemId"] for f in aws.client("fsx").describe_file_systems()["FileSystems"]}


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

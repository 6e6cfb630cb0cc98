"""The storage function, called with events/storage-schedule.json against moto: the reaper's own FSx backups
(deleted only with the retention set, kept when tagged reaper:keep, never someone else's, never while their
file system lives), and an unattached ML volume snapshotted before it is deleted, then restored from the
snapshot by `reaper restore`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

import pytest

from reaper.cli.main import main
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_fsx, seed_storage
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import ebs as ebs_ext
from reaper_devkit.template import function_actions
from tests.conftest import TABLE, drain, event, load_function

CHANGING = {"fsx:DeleteBackup", "ec2:CreateSnapshot", "ec2:DeleteVolume", "ec2:CreateTags", "fsx:TagResource"}


@pytest.fixture
def fsx(aws: Any) -> Any:
    return aws.client("fsx")


@pytest.fixture
def ec2(aws: Any) -> Any:
    return aws.client("ec2")


@pytest.fixture
def backups(fsx: Any, ec2: Any) -> dict[str, str]:
    subnet, group = seed_fsx.network(ec2)
    old = datetime.now(UTC) - timedelta(days=40)
    return {
        "old": seed_storage.reaper_backup(fsx, subnet, group, old)[0],
        "kept": seed_storage.reaper_backup(fsx, subnet, group, old, tags={"reaper:keep": "true"})[0],
        "recent": seed_storage.reaper_backup(fsx, subnet, group, datetime.now(UTC) - timedelta(days=3))[0],
        "living": seed_storage.reaper_backup(fsx, subnet, group, old, keep_file_system=True)[0],
        "not-ours": seed_storage.someone_elses_backup(fsx, subnet, group, old),
    }


@pytest.fixture
def volumes(ec2: Any) -> dict[str, str]:
    weeks_ago = datetime.now(UTC) - timedelta(weeks=6)
    return {
        "ml": seed_storage.volume(ec2, weeks_ago, tags={**seed_storage.ML, "Name": "scratch"}),
        "new": seed_storage.volume(ec2, datetime.now(UTC) - timedelta(days=2), tags=seed_storage.ML),
        "not-ml": seed_storage.volume(ec2, weeks_ago, tags={"team": "web"}),
        "prod": seed_storage.volume(ec2, weeks_ago, tags={**seed_storage.ML, "ml:stage": "prod"}),
    }


def enforce(monkeypatch: pytest.MonkeyPatch, grace: int = 0, retention: int | None = None) -> None:
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", str(grace))
    if retention is not None:
        monkeypatch.setenv("REAPER_STORAGE_BACKUP_RETENTION_DAYS", str(retention))


def sweep(lambda_context: Any) -> dict[str, Any]:
    """One scheduled sweep: each its own delivery (a repeated delivery of one event acts once: invariant 5)."""
    result: dict[str, Any] = load_function("storage").handler(event("storage-schedule.json", id=str(uuid4())), lambda_context)
    return result


def test_the_reapers_old_backup_is_kept_without_a_retention(fsx, backups, deployed_env, lambda_context, monkeypatch):
    # Given the reaper's backups, enforce, grace 0, and no StorageBackupRetentionDays (the default)
    enforce(monkeypatch)
    # When the scheduled sweep runs
    with recording() as calls:
        result = sweep(lambda_context)
    # Then nothing is deleted: keeping is the default
    assert result["acted"] == [] and calls.calls["fsx:DeleteBackup"] == 0
    assert all(seed_storage.backup_exists(fsx, b) for b in backups.values())


def test_with_a_retention_only_the_reapers_old_backup_of_a_deleted_file_system_is_deleted(
    aws, fsx, backups, deployed_env, lambda_context, monkeypatch
):
    # Given a retention of 30 days
    enforce(monkeypatch, retention=30)
    # When the scheduled sweep runs
    with recording() as calls:
        result = sweep(lambda_context)
    # Then the reaper's 40-day-old backup of a deleted file system is deleted
    assert result["acted"] == [backups["old"]] and not seed_storage.backup_exists(fsx, backups["old"])
    # and the one tagged reaper:keep, the recent one, the one whose file system lives and someone else's are kept
    for name in ("kept", "recent", "living", "not-ours"):
        assert seed_storage.backup_exists(fsx, backups[name]), name
    assert calls.calls["fsx:DeleteBackup"] == 1
    assert calls.actions <= function_actions("StorageFunction")
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("kind") == "storage"}
    deleted = messages[backups["old"]]
    assert deleted["verdict"] == "act" and deleted["executed"] is True and "past the retention of 30 d" in deleted["reason"]
    assert "unpriced" in deleted["reason"]  # the shipped copy has no FSx backup price: never $0


def test_a_keep_tag_set_after_discovery_still_keeps_the_backup(fsx, backups, deployed_env, lambda_context, monkeypatch):
    # Given a retention, and reaper:keep written on the old backup between discovery and the delete
    import dataclasses

    from reaper.kinds.storage import parts

    enforce(monkeypatch, retention=30)
    original = parts.PARTS.discover

    def then_kept(*args: Any) -> Any:
        found = original(*args)
        arn = next(r.arn for r in found if r.id == backups["old"])
        fsx.tag_resource(ResourceARN=arn, Tags=[{"Key": "reaper:keep", "Value": "true"}])
        return found

    monkeypatch.setattr(parts, "PARTS", dataclasses.replace(parts.PARTS, discover=then_kept))
    # When the sweep runs
    result = sweep(lambda_context)
    # Then the gate reads the tag again and keeps it
    assert result["acted"] == [] and seed_storage.backup_exists(fsx, backups["old"])


def test_an_unattached_ml_volume_is_snapshotted_then_deleted_once_the_snapshot_completes_and_restored_from_it(
    aws, ec2, volumes, deployed_env, lambda_context, monkeypatch
):
    # Given an ML volume attached to nothing for six weeks, enforce, grace 0
    enforce(monkeypatch)
    vol = volumes["ml"]
    # When the first sweep runs: a snapshot is started, the volume is kept
    with recording() as calls:
        first = sweep(lambda_context)
    assert first["acted"] == [vol] and seed_storage.volume_state(ec2, vol) == "available"
    assert calls.calls["ec2:CreateSnapshot"] == 1 and calls.calls["ec2:DeleteVolume"] == 0
    assert calls.actions <= function_actions("StorageFunction")
    [snap] = ec2.describe_snapshots(OwnerIds=["self"], Filters=[{"Name": "volume-id", "Values": [vol]}])["Snapshots"]
    snap_tags = {t["Key"]: t["Value"] for t in snap["Tags"]}
    assert snap["State"] == "pending"
    assert snap_tags["reaper:source-volume"] == vol and snap_tags["reaper:source-az"] == "us-east-1a"
    assert snap_tags["reaper:source-type"] == "gp3" and snap_tags["reaper:source-size-gib"] == "100"
    assert snap_tags["reaper:source-iops"] == "4000" and snap_tags["reaper:source-throughput"] == "250"
    assert snap_tags["ml:owner"] == "ana@example.com" and snap_tags["Name"] == "scratch"
    # and the other volumes are untouched (new, not ML, production)
    for name in ("new", "not-ml", "prod"):
        assert seed_storage.volume_state(ec2, volumes[name]) == "available", name
    # When a sweep runs while the snapshot is pending: nothing is deleted, nothing waits
    second = sweep(lambda_context)
    assert second["acted"] == [] and seed_storage.volume_state(ec2, vol) == "available"
    # When the snapshot completes and the next sweep runs: the volume is deleted
    ebs_ext.settle_snapshots("completed", [snap["SnapshotId"]])
    with recording() as calls:
        third = sweep(lambda_context)
    assert third["acted"] == [vol] and seed_storage.volume_state(ec2, vol) is None
    assert calls.calls["ec2:DeleteVolume"] == 1 and calls.calls["ec2:CreateSnapshot"] == 0
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("storage", vol)
    assert record is not None and record["status"] == "deleted" and record["snapshot_id"] == snap["SnapshotId"]
    # When `reaper restore` is asked for it: a volume from the snapshot, same zone, type, size, IOPS, throughput, tags
    with recording() as calls:
        assert main(["restore", vol]) == 0
    assert calls.actions <= function_actions("RestoreFunction")
    [new] = ec2.describe_volumes(Filters=[{"Name": "tag:reaper:restored-from", "Values": [vol]}])["Volumes"]
    assert new["SnapshotId"] == snap["SnapshotId"] and new["AvailabilityZone"] == "us-east-1a"
    assert (new["VolumeType"], new["Size"], new["Iops"], new["Throughput"]) == ("gp3", 100, 4000, 250)
    tags = {t["Key"]: t["Value"] for t in new["Tags"]}
    assert tags["ml:owner"] == "ana@example.com" and tags["Name"] == "scratch" and "reaper:snapshot-id" not in tags
    assert "Attachments" not in new or new["Attachments"] == []
    # and a second restore says so and creates nothing
    assert main(["restore", vol]) == 0
    assert len(ec2.describe_volumes(Filters=[{"Name": "tag:reaper:restored-from", "Values": [vol]}])["Volumes"]) == 1


def test_a_failed_snapshot_is_an_error_and_the_volume_is_never_deleted(ec2, volumes, deployed_env, lambda_context, monkeypatch):
    enforce(monkeypatch)
    sweep(lambda_context)
    ebs_ext.settle_snapshots("error")
    result = sweep(lambda_context)
    assert result["acted"] == [] and seed_storage.volume_state(ec2, volumes["ml"]) == "available"
    assert any(volumes["ml"] in e and "error" in e for e in result["errors"])


def test_with_a_grace_the_first_sweep_only_warns(ec2, volumes, deployed_env, lambda_context, monkeypatch):
    enforce(monkeypatch, grace=60)
    with recording() as calls:
        result = sweep(lambda_context)
    assert result["acted"] == [] and calls.calls["ec2:CreateSnapshot"] == 0
    tags = {t["Key"]: t["Value"] for t in ec2.describe_volumes(VolumeIds=[volumes["ml"]])["Volumes"][0]["Tags"]}
    assert "reaper:warned-at" in tags


def test_dry_run_changes_nothing(ec2, fsx, volumes, backups, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_STORAGE_BACKUP_RETENTION_DAYS", "30")
    with recording() as calls:
        result = sweep(lambda_context)
    assert result["acted"] == [] and not calls.actions & CHANGING
    assert seed_storage.volume_state(ec2, volumes["ml"]) == "available" and seed_storage.backup_exists(fsx, backups["old"])


def test_a_snapshot_deleted_between_the_phases_is_taken_again_and_the_volume_is_not_deleted(
    ec2, volumes, deployed_env, lambda_context, monkeypatch
):
    # Given phase 1 ran (a snapshot started), and someone deleted that snapshot since
    enforce(monkeypatch)
    vol = volumes["ml"]
    sweep(lambda_context)
    [first] = ec2.describe_snapshots(OwnerIds=["self"], Filters=[{"Name": "volume-id", "Values": [vol]}])["Snapshots"]
    ec2.delete_snapshot(SnapshotId=first["SnapshotId"])
    # When the next sweep runs
    with recording() as calls:
        result = sweep(lambda_context)
    # Then a new snapshot is taken, the volume is kept, and the volume's marker names the new one
    assert result["acted"] == [vol] and calls.calls["ec2:CreateSnapshot"] == 1 and calls.calls["ec2:DeleteVolume"] == 0
    assert seed_storage.volume_state(ec2, vol) == "available"
    [second] = ec2.describe_snapshots(OwnerIds=["self"], Filters=[{"Name": "volume-id", "Values": [vol]}])["Snapshots"]
    tags = {t["Key"]: t["Value"] for t in ec2.describe_volumes(VolumeIds=[vol])["Volumes"][0]["Tags"]}
    assert second["SnapshotId"] != first["SnapshotId"] and tags["reaper:snapshot-id"] == second["SnapshotId"]


def test_a_repeated_delivery_snapshots_once(ec2, volumes, deployed_env, lambda_context, monkeypatch):
    # Given one scheduled event delivered twice (EventBridge delivers at least once)
    enforce(monkeypatch)
    delivered = event("storage-schedule.json")
    app = load_function("storage")
    with recording() as calls:
        app.handler(delivered, lambda_context)
        again = app.handler(delivered, lambda_context)
    # Then one snapshot, one action
    assert calls.calls["ec2:CreateSnapshot"] == 1 and again["acted"] == []
    assert len(ec2.describe_snapshots(OwnerIds=["self"], Filters=[{"Name": "volume-id", "Values": [volumes["ml"]]}])["Snapshots"]) == 1

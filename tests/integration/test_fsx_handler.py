"""The FSx function, called with the JSON in events/ against moto: both phases, their failures,
use and deletion between them, throttling, duplicates and malformed events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.errors import BadEventError
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_fsx as sf
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import fsx as fsx_ext
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function, throttle
from tests.helpers.events import MALFORMED_ANY_KIND
from tests.helpers.fsx_fleet import DELETED_IN_THE_END, EXPECTED, NOTIFY_IN_DRY_RUN, SCHEDULE, by_name, one_persistent, seed, sweep

MUTATING = {"fsx:CreateBackup", "fsx:CreateDataRepositoryTask", "fsx:DeleteFileSystem", "fsx:TagResource", "fsx:UntagResource"}


@pytest.fixture
def fsx(aws) -> Any:
    return aws.client("fsx")


@pytest.fixture
def fleet(aws) -> dict[str, str]:
    return seed(aws, datetime.now(UTC))


def log(aws, table: str) -> ActionLog:
    return ActionLog(aws.client("dynamodb"), table)


def test_dry_run_decides_every_file_system_and_changes_nothing(aws, fsx, fleet, deployed_env, lambda_context):
    # Given the deployed defaults (dry-run)
    app = load_function("fsx")
    # When the schedule fires
    with recording() as calls:
        result = app.handler(event(SCHEDULE), lambda_context)
    # Then every Lustre file system got its verdict (the ZFS one is not looked at), and nothing changed
    assert result["resources"] == len(EXPECTED) and result["acted"] == []
    assert fsx.describe_backups()["Backups"] == [] and fsx.describe_data_repository_tasks()["DataRepositoryTasks"] == []
    assert set(by_name(fsx)) == {*EXPECTED, "zfs"}
    assert not any(
        k.startswith("reaper:")
        and k != "reaper:disposable"
        and k != "reaper:exempt"
        and k != "reaper:snooze-until"
        and k != "reaper:idle-minutes"
        for fs in by_name(fsx).values()
        for k in fs["tags"]
    )
    # And the would-acts, the refused scratch, production and the bad tag are posted
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    names = {v: k for k, v in fleet.items()}
    assert sorted(names[i] for i in messages) == NOTIFY_IN_DRY_RUN
    bare = messages[fleet["scratch-bare"]]
    assert bare["verdict"] == "keep" and "reaper:disposable=true" in bare["reason"] and "gone for good" in bare["reason"]
    persistent = messages[fleet["persistent-idle"]]
    assert persistent["action"] == "backup" and persistent["executed"] is False
    assert persistent["instance_type"] == "PERSISTENT_2 1,200 GiB" and persistent["monthly_usd"] == 174.03
    assert persistent["undo"].startswith(f"reaper restore {fleet['persistent-idle']}")
    assert "production stage" in messages[fleet["prod"]]["reason"]
    # And it read, never wrote, and only with what its role grants
    assert calls.actions <= function_actions("FsxFunction")
    assert calls.ungranted("FsxFunction") == []  # on the resource it names, conditions included
    assert not calls.actions & MUTATING


def test_enforce_backs_up_or_exports_then_deletes_exactly_the_finished_after_confirmation(aws, fsx, fleet, enforce, lambda_context):
    app = load_function("fsx")
    now = datetime.now(UTC)
    names = {v: k for k, v in fleet.items()}
    # When the first sweep runs (grace 0)
    with recording() as calls:
        first = sweep(app, now, "sweep-1")
    # Then phase 1: two backups, two exports, and the disposable scratch is deleted with its data
    assert sorted(names[i] for i in first["acted"]) == DELETED_IN_THE_END
    backups = {b["FileSystem"]["FileSystemId"]: b for b in fsx.describe_backups()["Backups"]}
    assert set(backups) == {fleet["persistent-idle"], fleet["job-old-untagged"]}
    tasks = {t["FileSystemId"]: t for t in fsx.describe_data_repository_tasks()["DataRepositoryTasks"]}
    assert set(tasks) == {fleet["scratch-linked"], fleet["scratch-legacy"]}
    assert all(t["Type"] == "EXPORT_TO_REPOSITORY" and t["Report"]["Scope"] == "FAILED_FILES_ONLY" for t in tasks.values())
    left = by_name(fsx)
    assert "scratch-disposable" not in left
    assert left["persistent-idle"]["tags"]["reaper:backup-id"] == backups[fleet["persistent-idle"]]["BackupId"]
    assert left["scratch-linked"]["tags"]["reaper:export-task"] == tasks[fleet["scratch-linked"]]["TaskId"]
    # And the backup carries the file system's id, configuration and tags
    btags = {t["Key"]: t["Value"] for t in backups[fleet["persistent-idle"]]["Tags"]}
    assert btags["reaper:source-fs"] == fleet["persistent-idle"] and btags["reaper:source-deployment"] == "PERSISTENT_2"
    assert btags["reaper:source-capacity-gib"] == "1200" and btags["reaper:source-throughput"] == "125"
    assert btags["Name"] == "persistent-idle" and btags["ml:owner"] == "ana@example.com"
    assert btags["reaper:source-security-groups"].startswith("sg-")
    messages = {m["id"]: m for m in drain(aws, enforce["REAPER_QUEUE_URL"])}
    started = messages[fleet["persistent-idle"]]
    assert started["past"] == "began backing up" and "deleted at a later sweep once the backup is AVAILABLE" in started["detail"]
    gone = messages[fleet["scratch-disposable"]]
    assert gone["action"] == "discard" and "its data is gone" in gone["detail"]

    # When the next sweep comes while the backups are CREATING and the exports PENDING
    second = sweep(app, now, "sweep-2")
    # Then they are in progress: nothing is deleted, nothing posted
    assert second["acted"] == [] and set(by_name(fsx)) == set(left)
    assert drain(aws, enforce["REAPER_QUEUE_URL"]) == []

    # When AWS finishes them, and the sweep after that runs
    fsx_ext.settle_backups()
    fsx_ext.settle_tasks()
    third = sweep(app, now, "sweep-3")
    # Then exactly the finished file systems are gone, and the rest are still there
    assert sorted(names[i] for i in third["acted"]) == sorted(set(DELETED_IN_THE_END) - {"scratch-disposable"})
    assert set(by_name(fsx)) == {*(k for k in EXPECTED if k not in DELETED_IN_THE_END), "zfs"}
    deleted = {m["id"]: m for m in drain(aws, enforce["REAPER_QUEUE_URL"])}
    persistent = deleted[fleet["persistent-idle"]]
    assert persistent["past"] == "deleted" and backups[fleet["persistent-idle"]]["BackupId"] in persistent["detail"]
    assert f"reaper restore {fleet['persistent-idle']}" in persistent["detail"]
    assert "s3://ml-data/scratch-linked" in deleted[fleet["scratch-linked"]]["detail"]
    record = log(aws, enforce["REAPER_TABLE"]).latest_restore("fsx", fleet["persistent-idle"])
    assert record["status"] == "deleted" and record["backup_id"] == backups[fleet["persistent-idle"]]["BackupId"]
    assert record["config"]["SecurityGroupIds"] and record["config"]["PerUnitStorageThroughput"] == 125
    assert calls.actions <= function_actions("FsxFunction")
    assert calls.ungranted("FsxFunction") == []  # on the resource it names, conditions included


def test_grace_warns_first_then_backs_up_and_deletes_without_a_second_warning(aws, fsx, deployed_env, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    now = datetime.now(UTC)
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(fsx, subnet, group, tags=sf.DEV, created_at=now - timedelta(days=2))
    sf.io(aws.client("cloudwatch"), fs_id, now + timedelta(hours=2), minutes=16 * 60)
    app = load_function("fsx")
    warned = sweep(app, now, "s1")
    tags = by_name(fsx)[fs_id]["tags"]
    assert warned["verdicts"]["warn"] == 1 and "reaper:warned-at" in tags and fsx.describe_backups()["Backups"] == []
    assert [m["verdict"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])] == ["warn"]
    # After the grace period: phase 1, and the warning tag is gone
    backed = sweep(app, now + timedelta(minutes=61), "s2")
    assert backed["acted"] == [fs_id] and "reaper:warned-at" not in by_name(fsx)[fs_id]["tags"]
    fsx_ext.settle_backups()
    # Phase 2 needs no new warning: the owner was told, and it stayed unused
    deleted = sweep(app, now + timedelta(minutes=75), "s3")
    assert deleted["acted"] == [fs_id] and fs_id not in by_name(fsx)
    assert [m["past"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])] == ["began backing up", "deleted"]


def test_a_failed_backup_is_an_error_posted_once_and_the_file_system_is_kept(aws, fsx, enforce):
    now = datetime.now(UTC)
    fs_id = one_persistent(aws, now)
    app = load_function("fsx")
    sweep(app, now, "s1")
    fsx_ext.settle_backups("FAILED", message="The backup could not be completed: internal error")
    drain(aws, enforce["REAPER_QUEUE_URL"])
    results = [sweep(app, now + timedelta(minutes=10 * k), f"s{k}") for k in (2, 3)]
    # Then each sweep says error (never a delete), the owner hears it once, and no new backup is started
    assert all(r["verdicts"]["error"] == 1 and r["acted"] == [] for r in results)
    assert "FAILED: The backup could not be completed" in results[0]["errors"][0]
    assert fs_id in by_name(fsx) and len(fsx.describe_backups()["Backups"]) == 1
    errors = drain(aws, enforce["REAPER_QUEUE_URL"])
    assert [m["verdict"] for m in errors] == ["error"] and "reaper:backup-id" in errors[0]["reason"]


def linked_scratch(aws, now: datetime) -> str:
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(
        aws.client("fsx"), subnet, group, deployment="SCRATCH_2", throughput=None, tags=sf.DEV, created_at=now - timedelta(days=2)
    )
    sf.link(aws.client("fsx"), fs_id, "s3://ml-data/run-7")
    sf.io(aws.client("cloudwatch"), fs_id, now + timedelta(hours=30), minutes=44 * 60)
    return fs_id


@pytest.mark.parametrize(
    ("outcome", "said"),
    [
        ({"lifecycle": "FAILED", "message": "S3 access denied"}, "FAILED: S3 access denied"),
        ({"failed_files": 4}, "4 of 120 files failed to export"),
    ],
)
def test_a_failed_export_is_reported_and_not_retried(aws, fsx, enforce, outcome, said):
    now = datetime.now(UTC)
    fs_id = linked_scratch(aws, now)
    app = load_function("fsx")
    sweep(app, now, "s1")
    fsx_ext.settle_tasks(**outcome)
    results = [sweep(app, now + timedelta(minutes=10 * k), f"s{k}") for k in (2, 3)]
    assert all(r["verdicts"]["error"] == 1 and r["acted"] == [] for r in results)
    assert said in results[0]["errors"][0]
    assert fs_id in by_name(fsx) and len(fsx.describe_data_repository_tasks()["DataRepositoryTasks"]) == 1


def test_a_stuck_export_is_reported_after_the_stuck_hours(aws, fsx, enforce, monkeypatch):
    now = datetime.now(UTC)
    fs_id = linked_scratch(aws, now)
    app = load_function("fsx")
    sweep(app, now, "s1")
    fsx_ext.settle_tasks("EXECUTING")
    assert sweep(app, now + timedelta(hours=2), "s2")["verdicts"]["keep"] == 1  # in progress, still young
    stuck = sweep(app, now + timedelta(hours=25), "s3")
    assert stuck["verdicts"]["error"] == 1 and "still EXECUTING after 24 h 59 m" in stuck["errors"][0]
    assert fs_id in by_name(fsx)


def test_use_between_the_phases_keeps_it_and_a_later_idle_spell_takes_a_fresh_backup(aws, fsx, sm, enforce):
    now = datetime.now(UTC)
    fs_id = one_persistent(aws, now)
    app = load_function("fsx")
    sweep(app, now, "s1")
    fsx_ext.settle_backups()
    first_backup = by_name(fsx)[fs_id]["tags"]["reaper:backup-id"]
    # Given a training job starts reading it before phase 2
    job = sf.training_job(sm, "back-again", [fs_id], now, started_hours_ago=0)
    kept = sweep(app, now + timedelta(minutes=10), "s2")
    assert kept["acted"] == [] and fs_id in by_name(fsx)
    assert f"backup {first_backup} is kept and nothing is deleted" in kept_reason(app, now + timedelta(minutes=11), fs_id)
    # When the job ends and the file system is idle again past the window
    from reaper_devkit.moto_ext import sagemaker_jobs

    sagemaker_jobs.finish(job, "Completed", now + timedelta(hours=1))
    sf.io(aws.client("cloudwatch"), fs_id, now + timedelta(hours=14), minutes=11 * 60)
    again = sweep(app, now + timedelta(hours=14), "s3")
    # Then the old backup (older than the new idle proof) is not trusted: a fresh one is started
    assert again["acted"] == [fs_id] and fs_id in by_name(fsx)
    assert by_name(fsx)[fs_id]["tags"]["reaper:backup-id"] != first_backup and len(fsx.describe_backups()["Backups"]) == 2


def kept_reason(app: Any, at: datetime, fs_id: str) -> str:
    """The reason a sweep at `at` gives for the file system (the handler summary has only verdicts)."""
    from reaper.sweep import pipeline

    outcomes = pipeline.sweep(app.RUNTIME, ["fsx"], at, event_id="look")
    return next(o.reason for o in outcomes if o.resource.id == fs_id)


def test_deleted_by_someone_between_the_phases_is_no_error_and_can_still_be_restored(aws, fsx, enforce):
    now = datetime.now(UTC)
    fs_id = one_persistent(aws, now)
    app = load_function("fsx")
    sweep(app, now, "s1")
    # Given its owner deletes it themselves before phase 2
    fsx.delete_file_system(FileSystemId=fs_id)
    fsx_ext.settle_backups()
    result = sweep(app, now + timedelta(minutes=10), "s2")
    assert result["resources"] == 0 and result["errors"] == []
    # Then the restore record written in phase 1 still brings it back
    from reaper.restore import run as restore

    said = restore.restore(app.RUNTIME, fs_id, now, lambda _line: None)
    assert f"{fs_id} restored as fs-" in said


def test_throttled_backup_is_an_error_and_the_sweep_goes_on(aws, fsx, enforce, monkeypatch):
    now = datetime.now(UTC)
    a = one_persistent(aws, now, {**sf.DEV, "Name": "a"})
    b = one_persistent(aws, now, {**sf.DEV, "Name": "b"})
    app = load_function("fsx")
    client = app.RUNTIME.clients()("fsx")
    throttle(monkeypatch, client, "create_backup", {"FileSystemId": a})
    result = sweep(app, now, "s1")
    assert result["acted"] == [b] and "ThrottlingException" in result["errors"][0]
    assert [bk["FileSystem"]["FileSystemId"] for bk in fsx.describe_backups()["Backups"]] == [b]
    assert "reaper:backup-id" not in by_name(fsx)["a"]["tags"]


def test_same_event_three_times_backs_up_once_and_posts_once(aws, fsx, enforce, lambda_context):
    now = datetime.now(UTC)
    fs_id = one_persistent(aws, now)
    app = load_function("fsx")
    results = [app.handler(event(SCHEDULE), lambda_context) for _ in range(3)]
    assert [r["acted"] for r in results] == [[fs_id], [], []]
    assert len(fsx.describe_backups()["Backups"]) == 1
    assert [m["verdict"] for m in drain(aws, enforce["REAPER_QUEUE_URL"])] == ["act"]


@pytest.mark.parametrize(
    "bad",
    [
        *MALFORMED_ANY_KIND,
        {
            "id": "x",
            "detail-type": "SageMaker Training Job State Change",
            "source": "aws.sagemaker",
            "detail": {"TrainingJobStatus": "Completed"},
        },
        {"id": "x", "detail-type": "FSx Idle Window Check", "source": "mlreaper", "detail": {"file_system_ids": []}},
        {"id": "x", "detail-type": "FSx Idle Window Check", "source": "mlreaper", "detail": {"file_system_ids": ["not-an-id"]}},
    ],
)
def test_malformed_events_are_refused_and_change_nothing(aws, fsx, fleet, enforce, lambda_context, bad):
    app = load_function("fsx")
    with pytest.raises(BadEventError):
        app.handler(bad, lambda_context)
    assert set(by_name(fsx)) == {*EXPECTED, "zfs"} and fsx.describe_backups()["Backups"] == []
    assert drain(aws, enforce["REAPER_QUEUE_URL"]) == []


def test_a_disposable_scratch_file_system_is_warned_then_deleted_and_the_message_says_the_data_is_gone(aws, fsx, deployed_env, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    now = datetime.now(UTC)
    subnet, group = sf.network(aws.client("ec2"))
    fs_id = sf.file_system(
        fsx,
        subnet,
        group,
        deployment="SCRATCH_2",
        throughput=None,
        tags={**sf.DEV, "reaper:disposable": "true"},
        created_at=now - timedelta(days=2),
    )
    sf.io(aws.client("cloudwatch"), fs_id, now + timedelta(hours=2), minutes=16 * 60)
    app = load_function("fsx")
    assert sweep(app, now, "s1")["verdicts"]["warn"] == 1
    warned = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert "deleted with no backup and its data is GONE for good" in warned[0]["reason"]
    assert sweep(app, now + timedelta(minutes=61), "s2")["acted"] == [fs_id]
    [gone] = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert gone["past"] == "deleted, data and all," and gone["detail"].endswith("its data is gone and cannot be restored")
    assert gone["undo"].startswith("none:")
    assert fs_id not in by_name(fsx) and fsx.describe_backups()["Backups"] == []


def test_training_job_inputs_come_from_search_pages_not_a_describe_each(aws, fsx, sm, deployed_env):
    # Given two dev file systems and jobs: running, ended 3 h ago, ended 2 days ago, and one older than both
    now = datetime.now(UTC)
    subnet, group = sf.network(aws.client("ec2"))
    a = sf.file_system(fsx, subnet, group, tags=sf.DEV, created_at=now - timedelta(days=5))
    b = sf.file_system(fsx, subnet, group, tags=sf.DEV, created_at=now - timedelta(days=5))
    sf.training_job(sm, "running", [a], now, started_hours_ago=1)
    sf.training_job(sm, "recent", [b], now, started_hours_ago=5, ended_hours_ago=3)
    sf.training_job(sm, "old", [a, b], now, started_hours_ago=50, ended_hours_ago=48)
    sf.training_job(sm, "before-the-file-systems", [], now, started_hours_ago=24 * 6, ended_hours_ago=24 * 6 - 2)
    app = load_function("fsx")
    # When the sweep runs (also with an untagged file system, which widens the lookback)
    for run in ("s1", "s2"):
        with recording() as calls:
            result = sweep(app, now, run)
        # Then one Search page holds every job with its inputs: no job is described
        assert calls.calls["sagemaker:Search"] == 1 and "sagemaker:DescribeTrainingJob" not in calls.calls
        assert "sagemaker:ListTrainingJobs" not in calls.calls
        assert result["verdicts"]["keep"] >= 2  # a is read by a running job, b ended 3 h ago: both in use
        sf.file_system(fsx, subnet, group, tags={"team": "nlp"}, created_at=now - timedelta(days=5))


def test_search_stops_at_the_first_job_older_than_every_file_system(aws, fsx, sm, deployed_env):
    # Given 120 jobs since the file system was created and 150 older ones (three pages in all)
    now = datetime.now(UTC)
    subnet, group = sf.network(aws.client("ec2"))
    fs = sf.file_system(fsx, subnet, group, tags=sf.DEV, created_at=now - timedelta(days=2))
    for i in range(150):
        sf.training_job(sm, f"before-{i}", [], now, started_hours_ago=24 * 3 + i, ended_hours_ago=24 * 3 + i - 1)
    for i in range(120):
        sf.training_job(sm, f"since-{i}", [fs] if i == 119 else [], now, started_hours_ago=1 + i / 10, ended_hours_ago=0.5 if i else None)
    app = load_function("fsx")
    # When the sweep runs
    with recording() as calls:
        sweep(app, now, "s1")
    # Then two pages are read, not three: the second page reaches a job older than the file system
    assert calls.calls["sagemaker:Search"] == 2 and "sagemaker:DescribeTrainingJob" not in calls.calls

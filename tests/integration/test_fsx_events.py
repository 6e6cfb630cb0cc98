"""A training job ends: the FSx function looks at once at the file systems it read, and arranges a
one-off EventBridge Scheduler check for when their idle window ends; that check then acts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.errors import BadEventError
from reaper.handlers import handle_kind_event
from reaper_devkit import seed_fsx as sf
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function

FUNCTION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:mlreaper-fsx"
ROLE_ARN = "arn:aws:iam::123456789012:role/mlreaper-FsxCheckSchedulerRole"
JOB_EVENT = "fsx-training-job-state-change.json"


@pytest.fixture
def wired(deployed_env, monkeypatch) -> dict[str, str]:
    """Enforce, grace 0, and the one-off check wired as the template wires it."""
    for k, v in {
        "REAPER_MODE": "enforce",
        "REAPER_GRACE_MINUTES": "0",
        "REAPER_FSX_CHECK_FUNCTION_ARN": FUNCTION_ARN,
        "REAPER_FSX_CHECK_ROLE_ARN": ROLE_ARN,
    }.items():
        monkeypatch.setenv(k, v)
    return deployed_env


def dataset_fs(aws, now: datetime) -> str:
    subnet, group = sf.network(aws.client("ec2"))
    return sf.file_system(aws.client("fsx"), subnet, group, tags=sf.DEV, created_at=now - timedelta(days=1))


def schedules(aws) -> list[dict[str, Any]]:
    client = aws.client("scheduler")
    return [client.get_schedule(Name=s["Name"], GroupName=s["GroupName"]) for s in client.list_schedules()["Schedules"]]


def test_a_job_that_ends_gets_its_file_system_looked_at_and_a_check_when_the_window_ends(aws, sm, wired, lambda_context):
    now = datetime.now(UTC)
    fs_id = dataset_fs(aws, now)
    sf.io(aws.client("cloudwatch"), fs_id, now, busy_minutes_ago=[10, 20, 30])
    sf.training_job(sm, "llm-finetune-0412", [fs_id], now, started_hours_ago=3, ended_hours_ago=0)
    ev = sf.job_ended_event(event(JOB_EVENT), "llm-finetune-0412", [fs_id], now)
    app = load_function("fsx")
    # When the Completed event arrives (three times: EventBridge delivers at least once)
    with recording() as calls:
        results = [app.handler(ev, lambda_context) for _ in range(3)]
    # Then the file system is looked at once per delivery and kept: the job ended minutes ago
    first = results[0]
    assert first["checked"] == [fs_id] and first["verdicts"] == {"keep": 1}
    assert "training job llm-finetune-0412 ended 0 m ago, within the idle window" in first["reasons"][fs_id]
    # And exactly one check is arranged, for the end of the 12 h window (plus 10 minutes)
    due = now + timedelta(hours=12, minutes=10)
    assert first["scheduled"][fs_id].startswith("check at")
    assert all(r["scheduled"][fs_id].startswith("arranged already") for r in results[1:])
    [schedule] = schedules(aws)
    assert schedule["ScheduleExpression"] == f"at({due:%Y-%m-%dT%H:%M:%S})"
    assert schedule["Target"]["Arn"] == FUNCTION_ARN and schedule["Target"]["RoleArn"] == ROLE_ARN
    assert schedule["ActionAfterCompletion"] == "DELETE" and schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert drain(aws, wired["REAPER_QUEUE_URL"]) == []  # nothing to say yet
    assert calls.actions <= function_actions("FsxFunction")
    assert calls.ungranted("FsxFunction") == []  # on the resource it names, conditions included

    # When the scheduled check fires at the end of the window, the file system idle since the job
    later = due + timedelta(seconds=30)
    sf.io(aws.client("cloudwatch"), fs_id, later, minutes=13 * 60)
    check = json.loads(schedule["Target"]["Input"])
    with recording() as calls:
        results = [handle_kind_event(check, "fsx", app.RUNTIME, now=later) for _ in range(2)]
    assert results[0]["verdicts"] == {"act": 1}, results[0]["reasons"]
    # Then phase 1 runs, once: the backup is started and the owner told
    assert results[0]["acted"] == [fs_id] and results[1]["acted"] == []
    assert len(aws.client("fsx").describe_backups()["Backups"]) == 1
    assert [m["action"] for m in drain(aws, wired["REAPER_QUEUE_URL"])] == ["backup"]
    assert calls.actions <= function_actions("FsxFunction")
    assert calls.ungranted("FsxFunction") == []  # on the resource it names, conditions included


def test_the_check_event_fixture_is_what_the_schedule_sends(aws, wired):
    # The fixture in events/ documents the scheduled input; it parses and names a file system
    fixture = event("fsx-idle-check.json")
    app = load_function("fsx")
    result = handle_kind_event(fixture, "fsx", app.RUNTIME, now=datetime.now(UTC))
    assert result["checked"] == [] and result["verdicts"] == {}  # that file system does not exist here


def test_a_trimmed_event_without_inputs_asks_sagemaker_what_the_job_read(aws, sm, wired, lambda_context):
    now = datetime.now(UTC)
    fs_id = dataset_fs(aws, now)
    sf.training_job(sm, "llm-finetune-0412", [fs_id], now, started_hours_ago=3, ended_hours_ago=0)
    ev = sf.job_ended_event(event(JOB_EVENT), "llm-finetune-0412", [fs_id], now)
    del ev["detail"]["InputDataConfig"]
    with recording() as calls:
        result = load_function("fsx").handler(ev, lambda_context)
    assert result["checked"] == [fs_id] and calls.calls["sagemaker:DescribeTrainingJob"] >= 1


@pytest.mark.parametrize(
    ("change", "skipped"),
    [
        ({"TrainingJobStatus": "InProgress"}, "only ended jobs"),
        ({"InputDataConfig": [{"ChannelName": "train", "DataSource": {"S3DataSource": {"S3Uri": "s3://b/"}}}]}, "no FSx for Lustre"),
    ],
)
def test_running_jobs_and_jobs_without_fsx_are_skipped(aws, wired, lambda_context, change, skipped):
    ev = event(JOB_EVENT)
    ev["detail"] = {**ev["detail"], **change}
    result = load_function("fsx").handler(ev, lambda_context)
    assert skipped in result["skipped"] and result["checked"] == []
    assert schedules(aws) == []


def test_a_channel_whose_file_system_id_is_not_text_is_refused_and_nothing_is_checked(aws, wired, lambda_context):
    """InputDataConfig is read as SageMaker's Channel (docs/aws-assumptions.md TS-13): FileSystemId is a string."""
    ev = event(JOB_EVENT)
    source = {"FileSystemId": 123, "FileSystemType": "FSxLustre", "FileSystemAccessMode": "ro", "DirectoryPath": "/fsx/data"}
    ev["detail"] = {**ev["detail"], "InputDataConfig": [{"ChannelName": "train", "DataSource": {"FileSystemDataSource": source}}]}
    with recording() as calls, pytest.raises(BadEventError, match="InputDataConfig"):
        load_function("fsx").handler(ev, lambda_context)
    assert not any(name.startswith("fsx:") for name in calls.calls) and schedules(aws) == []


def test_without_the_scheduler_wiring_it_still_looks_and_says_none_was_arranged(aws, sm, deployed_env, lambda_context):
    now = datetime.now(UTC)
    fs_id = dataset_fs(aws, now)
    ev = sf.job_ended_event(event(JOB_EVENT), "gone-job", [fs_id], now)
    result = load_function("fsx").handler(ev, lambda_context)
    assert result["checked"] == [fs_id] and result["scheduled"][fs_id].startswith("not arranged")


def test_a_job_that_read_a_deleted_file_system_says_so(aws, wired, lambda_context):
    ev = event(JOB_EVENT)  # names fs-0a1b2c3d4e5f60789, which does not exist here
    result = load_function("fsx").handler(ev, lambda_context)
    assert result["checked"] == [] and result["gone"] == ["fs-0a1b2c3d4e5f60789"] and schedules(aws) == []

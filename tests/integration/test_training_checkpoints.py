"""Checkpoints as a guard, through the training-job function against moto (issue 26): a managed spot
job without CheckpointConfig is flagged at admission (and stopped there with the admin's opt-in);
a running job whose newest checkpoint is older than reaper:checkpoint-minutes is told; every stop
says how old the newest checkpoint was."""

from __future__ import annotations

from datetime import UTC, datetime

from reaper_devkit import seed_training as st
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision", "reaper:kill-after": "2099-01-01"}
INPROGRESS = "training-job-state-inprogress.json"
SCHEDULE = "training-job-schedule.json"
NAME = "resnet-untagged"  # the job the InProgress fixture names


def test_a_spot_job_without_checkpoints_is_flagged_to_its_owner_within_the_one_event(aws, sm, deployed_env, lambda_context):
    # Given a managed spot job submitted without CheckpointConfig (and one with it)
    st.training_job(sm, NAME, datetime.now(UTC), hours_ago=0, spot=True, checkpoints=False, tags=DEV, max_runtime_s=7200)
    app = load_function("training_job")
    # When its InProgress event arrives
    result = app.handler(event(INPROGRESS), lambda_context)
    # Then the owner is told in that event, with the fix, and nothing is stopped (notify by default)
    assert result["posted"] is True and result["sweep_now"] is False
    assert [p.split(":")[0] for p in result["problems"]] == ["managed spot without CheckpointConfig"]
    [notice] = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert notice["owner"] == "ana@example.com" and "CheckpointConfig.S3Uri" in notice["text"]
    assert sm.describe_training_job(TrainingJobName=NAME)["TrainingJobStatus"] == "InProgress"


def test_with_the_opt_in_the_spot_job_without_checkpoints_is_stopped_within_the_event(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given enforce and SpotWithoutCheckpoints=stop, a spot job without checkpoints and one with them
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_SPOT_WITHOUT_CHECKPOINTS", "stop")
    now = datetime.now(UTC)
    st.training_job(sm, NAME, now, hours_ago=0, spot=True, checkpoints=False, tags=DEV, max_runtime_s=7200)
    st.training_job(sm, "spot-ok", now, hours_ago=0, spot=True, tags=DEV, max_runtime_s=7200)
    app = load_function("training_job")
    # When its InProgress event arrives
    with recording() as calls:
        result = app.handler(event(INPROGRESS), lambda_context)
    # Then it is stopped in that event, through the sweep's gate, and the spot job that checkpoints is not
    assert result["sweep_now"] is True and result["sweep"]["acted"] == [NAME]
    assert sm.describe_training_job(TrainingJobName=NAME)["TrainingJobStatus"] == "Stopping"
    assert sm.describe_training_job(TrainingJobName="spot-ok")["TrainingJobStatus"] == "InProgress"
    stop = next(m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") == "act")
    assert "managed spot without CheckpointConfig" in stop["reason"]
    assert calls.ungranted("TrainingJobFunction") == [] and calls.actions <= function_actions("TrainingJobFunction")


def test_a_job_checkpointing_every_20_minutes_is_not_told_and_one_two_hours_late_is(aws, sm, deployed_env, lambda_context):
    # Given two jobs 3 h in with a checkpoint location: one saves every 20 minutes, the other last saved 2 h ago
    now = datetime.now(UTC)
    s3 = aws.client("s3")
    st.training_job(sm, "steady", now, hours_ago=3, checkpoints=True, tags=DEV, max_runtime_s=36_000)
    st.training_job(sm, "late", now, hours_ago=3, checkpoints=True, tags=DEV, max_runtime_s=36_000)
    st.checkpoint_objects(s3, "s3://ml-artifacts/steady/checkpoints", now, [170, 150, 130, 110, 90, 70, 50, 30, 10])
    st.checkpoint_objects(s3, "s3://ml-artifacts/late/checkpoints", now, [170, 150, 120])
    # When the sweep runs
    with recording() as calls:
        result = load_function("training_job").handler(event(SCHEDULE), lambda_context)
    # Then only the late one is told, with its checkpoint's age; each listing was of its own prefix
    told = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if "(reaper:checkpoint-minutes)" in m["reason"]}
    assert result["errors"] == [] and sorted(told) == ["late"]
    assert "its newest checkpoint is 2 h 00 m old (3 object(s) under s3://ml-artifacts/late/checkpoints)" in told["late"]["reason"]
    assert "past its 30 min limit (reaper:checkpoint-minutes)" in told["late"]["reason"]
    listings = [p for op, p in calls.made if op == "ListObjectsV2"]
    assert sorted(p["Prefix"] for p in listings) == ["late/checkpoints/", "steady/checkpoints/"]
    assert calls.ungranted("TrainingJobFunction") == []


def test_a_checkpoint_minutes_tag_sets_the_limit_and_a_stop_says_how_old_the_checkpoint_was(
    aws, sm, deployed_env, lambda_context, monkeypatch
):
    # Given enforce, a job tagged checkpoint-minutes=240 whose last checkpoint is 2 h old, past its own 1 h ceiling
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    tags = {**DEV, "reaper:checkpoint-minutes": "240", "reaper:max-hours": "1"}
    st.training_job(sm, "patient", now, hours_ago=3, checkpoints=True, tags=tags, max_runtime_s=36_000)
    st.checkpoint_objects(aws.client("s3"), "s3://ml-artifacts/patient/checkpoints", now, [170, 120])
    # When the sweep runs
    result = load_function("training_job").handler(event(SCHEDULE), lambda_context)
    # Then it is stopped for its ceiling (no checkpoint warning: within 240 min), and the stop says what it loses
    assert result["acted"] == ["patient"]
    [stop] = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") == "act"]
    assert "past its 1 h runtime ceiling" in stop["reason"] and "past its 240 min limit" not in stop["reason"]
    assert "its newest checkpoint is 2 h 00 m old (2 object(s) under s3://ml-artifacts/patient/checkpoints)" in stop["detail"]

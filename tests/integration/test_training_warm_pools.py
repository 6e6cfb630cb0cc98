"""Managed warm pools through the training-job function against moto (issue 26): a pool billed past
WarmPoolMaxMinutes, or whose job's dollars with it pass the job's reaper:max-usd, is warned, then
ended with UpdateTrainingJob KeepAlivePeriodInSeconds=0; shorter pools, exempt jobs and dry-run are left."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from reaper.handlers import handle_kind_event
from reaper_devkit import seed_training as st
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
SCHEDULE = "training-job-schedule.json"


def pool(sm, name: str, now: datetime, retained_min: float, tags: dict[str, str]) -> str:
    arn = st.training_job(sm, name, now, hours_ago=2, tags=tags)
    sagemaker_jobs.retain_warm_pool(arn, now - timedelta(minutes=retained_min), int(retained_min * 60))
    return arn


def status(sm, name: str) -> str:
    return str(sm.describe_training_job(TrainingJobName=name)["WarmPoolStatus"]["Status"])


def test_a_warm_pool_past_the_ceiling_is_warned_then_ended_and_a_short_one_is_kept(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given enforce, a pool kept 40 min (past the 30 min default), one kept 10 min, one past its job's
    # own max-usd once the pool is counted, and an exempt one kept 50 min
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    pool(sm, "long-pool", now, 40, DEV)
    pool(sm, "short-pool", now, 10, DEV)
    pool(sm, "dear-pool", now, 20, {**DEV, "reaper:max-usd": "7"})  # 1 h 40 m run + 20 min pool at $3.825/h = $7.65
    pool(sm, "exempt-pool", now, 50, {**DEV, "reaper:exempt": "true"})
    app = load_function("training_job")
    # When a sweep runs, then another a few minutes later
    first = handle_kind_event(event(SCHEDULE, id="first"), "training-job", app.RUNTIME, now=now)
    warned = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "warn"}
    with recording() as calls:
        second = handle_kind_event(event(SCHEDULE, id="second"), "training-job", app.RUNTIME, now=now + timedelta(minutes=5))
    # Then the two over their ceilings are warned first, then ended; the others keep their pools
    assert first["acted"] == [] and sorted(warned) == ["dear-pool", "long-pool"]
    assert "kept 40 m ($2.55 at list price), past the stack's 30 min (WarmPoolMaxMinutes)" in warned["long-pool"]["reason"]
    assert "the job has cost $7.65, past its $7.00 ceiling (reaper:max-usd)" in warned["dear-pool"]["reason"]
    assert sorted(second["acted"]) == ["dear-pool", "long-pool"] and second["errors"] == []
    assert {n: status(sm, n) for n in ("long-pool", "dear-pool", "short-pool", "exempt-pool")} == {
        "long-pool": "Terminated", "dear-pool": "Terminated", "short-pool": "Available", "exempt-pool": "Available",
    }  # fmt: skip
    updates = [p for op, p in calls.made if op == "UpdateTrainingJob"]
    assert sorted(p["TrainingJobName"] for p in updates) == ["dear-pool", "long-pool"]
    assert all(p["ResourceConfig"] == {"KeepAlivePeriodInSeconds": 0} for p in updates)
    assert calls.ungranted("TrainingJobFunction") == [] and calls.actions <= function_actions("TrainingJobFunction")


def test_dry_run_says_it_would_end_the_pool_and_ends_nothing(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given dry-run (the default) and a pool kept 40 min whose job was warned before
    now = datetime.now(UTC)
    pool(sm, "long-pool", now, 40, {**DEV, "reaper:warned-at": (now - timedelta(minutes=10)).isoformat()})
    # When the sweep runs
    with recording() as calls:
        result = load_function("training_job").handler(event(SCHEDULE), lambda_context)
    # Then it would be ended, and no UpdateTrainingJob is sent
    [would] = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act"]
    assert would["action"] == "end-warm-pool" and would["executed"] is False and result["acted"] == []
    assert "UpdateTrainingJob" not in calls.operations and status(sm, "long-pool") == "Available"


def test_moto_refuses_a_keep_alive_update_on_a_job_without_an_available_warm_pool(aws, sm):
    # Given a running job (no warm pool) and a pool already terminated
    now = datetime.now(UTC)
    st.training_job(sm, "running", now, hours_ago=1)
    arn = pool(sm, "ended", now, 10, DEV)
    sm.update_training_job(TrainingJobName="ended", ResourceConfig={"KeepAlivePeriodInSeconds": 0})
    # When either is asked to change its keep-alive, Then SageMaker refuses, as AWS documents
    for name in ("running", "ended"):
        with pytest.raises(ClientError) as refused:
            sm.update_training_job(TrainingJobName=name, ResourceConfig={"KeepAlivePeriodInSeconds": 0})
        assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert arn.endswith("/ended") and status(sm, "ended") == "Terminated"

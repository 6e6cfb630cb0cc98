"""Advice from the training-job function against moto: spot for long on-demand runs (issue 17)."""

from __future__ import annotations

from datetime import UTC, datetime

from reaper_devkit import seed_training as st
from tests.conftest import drain, event, load_function

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
SCHEDULE = "training-job-schedule.json"


def test_an_on_demand_ten_hour_job_gets_one_spot_advisory_and_keeps_running(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given enforce, a 10-hour on-demand job 1 h in, the same on spot, and a 1-hour on-demand job
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    st.training_job(sm, "long-od", now, hours_ago=1, max_runtime_s=36_000, tags=DEV)
    st.training_job(sm, "long-spot", now, hours_ago=1, max_runtime_s=36_000, spot=True, tags=DEV)
    st.training_job(sm, "short-od", now, hours_ago=0.5, max_runtime_s=3_600, tags=DEV)
    app = load_function("training_job")
    # When three sweeps run
    result = app.handler(event(SCHEDULE), lambda_context)
    first = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    for n in range(2):
        app.handler(event(SCHEDULE, id=f"again-{n}"), lambda_context)
    # Then only the long on-demand job is advised, once, with the saving and the checkpoint warning
    assert result["acted"] == [] and result["errors"] == []
    assert [m["id"] for m in first] == ["long-od"]
    advice = first[0]
    assert advice["verdict"] == "keep" and advice["executed"] is False
    assert "managed spot would save about $26.77" in advice["reason"] and "no CheckpointConfig" in advice["reason"]
    assert advice["evidence"]["spot_advice"]["assumed_spot_discount"] == 0.7
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []  # told once
    assert {j: sm.describe_training_job(TrainingJobName=j)["TrainingJobStatus"] for j in ("long-od", "long-spot", "short-od")} == {
        "long-od": "InProgress", "long-spot": "InProgress", "short-od": "InProgress",
    }  # fmt: skip

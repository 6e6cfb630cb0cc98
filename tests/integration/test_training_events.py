"""SageMaker Training Job State Change events through the training-job function: the check at
submission (InProgress) and the final cost record (Completed / Failed / Stopped)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_training as st
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function
from tests.helpers.training_fleet import DEV

INPROGRESS = "training-job-state-inprogress.json"
COMPLETED = "training-job-state-completed.json"
STOPPED = "training-job-state-stopped.json"


def log_entries(aws, table: str) -> list[dict]:
    now = datetime.now(UTC)
    return list(ActionLog(aws.client("dynamodb"), table).stored_entries(now - timedelta(hours=1), now + timedelta(hours=1)))


def test_a_job_started_without_tags_or_ceiling_is_told_once_whatever_the_deliveries(aws, sm, deployed_env, lambda_context):
    # Given a job submitted with no ml: tags and a MaxRuntimeInSeconds of 5 days (over the 24 h default)
    st.training_job(sm, "resnet-untagged", datetime.now(UTC), hours_ago=0, count=2, max_runtime_s=432000)
    app = load_function("training_job")
    # When the InProgress event arrives three times, then again for the next secondary status
    with recording() as calls:
        results = [app.handler(event(INPROGRESS), lambda_context) for _ in range(3)]
        again = app.handler(event(INPROGRESS, id="downloading-status"), lambda_context)
    # Then the owner is told once, with every missing piece and how to fix it
    assert [r["posted"] for r in results] == [True, False, False] and again["posted"] is False
    problems = results[0]["problems"]
    assert len(problems) == 5
    assert [p.split("`")[1] for p in problems[:3]] == ["ml:owner", "ml:project", "ml:stage"]
    assert "no ceiling of its own" in problems[3] and "$7.65/h" in problems[3] and "reaches $500 after 2 d 17 h" in problems[3]
    assert "neither a kill date nor a budgeted project: tag reaper:kill-after=YYYY-MM-DD" in problems[4]
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert len(notices) == 1 and notices[0]["type"] == "notice" and notices[0]["id"] == "resnet-untagged"
    assert "aws sagemaker add-tags" in notices[0]["text"]
    assert calls.actions <= function_actions("TrainingJobFunction")
    assert calls.ungranted("TrainingJobFunction") == []  # on the resource it names, conditions included


def test_a_job_with_tags_and_its_own_ceiling_says_nothing(aws, sm, deployed_env, lambda_context):
    # Given a tagged job whose MaxRuntimeInSeconds (2 h) is under the stack's 24 h
    st.training_job(
        sm, "resnet-untagged", datetime.now(UTC), hours_ago=0, tags={**DEV, "reaper:kill-after": "2099-01-01"}, max_runtime_s=7200
    )
    app = load_function("training_job")
    result = app.handler(event(INPROGRESS), lambda_context)
    assert result["problems"] == [] and result["posted"] is False
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_a_job_in_a_budgeted_project_needs_no_kill_date_and_one_without_is_told(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given a tagged job with its own ceiling, no kill date, in project vision
    st.training_job(sm, "resnet-untagged", datetime.now(UTC), hours_ago=0, tags=DEV, max_runtime_s=7200)
    told = load_function("training_job").handler(event(INPROGRESS), lambda_context)
    assert [p.split(":")[0] for p in told["problems"]] == ["neither a kill date nor a budgeted project"]
    # When vision has a budget by the stack's parameter, Then nothing is missing
    monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=500")
    ok = load_function("training_job").handler(event(INPROGRESS, id="budgeted"), lambda_context)
    assert ok["problems"] == []


def test_a_max_usd_tag_is_a_ceiling_and_a_bad_reaper_tag_is_named(aws, sm, deployed_env, lambda_context):
    st.training_job(sm, "resnet-untagged", datetime.now(UTC), hours_ago=0, tags={**DEV, "reaper:max-usd": "lots"})
    app = load_function("training_job")
    result = app.handler(event(INPROGRESS), lambda_context)
    assert len(result["problems"]) == 2  # the unreadable tag, and so no ceiling of its own
    assert "reaper:max-usd='lots' cannot be read" in result["problems"][0]
    st.training_job(sm, "resnet-ok", datetime.now(UTC), hours_ago=0, tags={**DEV, "reaper:max-usd": "200", "reaper:budget-usd": "900"})
    ok = app.handler(event(INPROGRESS, id="ok", detail={"TrainingJobName": "resnet-ok", "TrainingJobStatus": "InProgress"}), lambda_context)
    assert ok["problems"] == []


def test_the_final_cost_is_recorded_once_per_ending(aws, sm, table, deployed_env, lambda_context):
    # Given a job on ml.g4dn.12xlarge ($5.6664/h) that ran 2 h 04 m and completed
    now = datetime.now(UTC)
    arn = st.training_job(sm, "bert-finetune", now, hours_ago=2.1, instance_type="ml.g4dn.12xlarge", tags=DEV)
    sagemaker_jobs.finish(arn, "Completed", ended_at=now - timedelta(minutes=2))
    app = load_function("training_job")
    # When the Completed event is delivered twice
    first = app.handler(event(COMPLETED), lambda_context)
    second = app.handler(event(COMPLETED), lambda_context)
    # Then one record holds the estimate, and nothing is posted to Slack
    assert first["recorded"] is True and second["recorded"] is False
    assert first["estimated_usd"] == pytest.approx((2.1 - 2 / 60) * 5.6664, abs=0.01)
    records = [e for e in log_entries(aws, table) if e.get("type") == "cost"]
    assert len(records) == 1
    assert records[0]["id"] == "bert-finetune" and records[0]["status"] == "Completed" and records[0]["owner"] == "ana@example.com"
    assert "Completed after 2 h 0" in records[0]["reason"] and "of wall time: estimated $11.7" in records[0]["reason"]
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_a_spot_job_stopped_records_an_upper_bound_and_an_unknown_price_is_not_guessed(aws, sm, table, deployed_env, lambda_context):
    now = datetime.now(UTC)
    arn = st.training_job(sm, "bert-finetune", now, hours_ago=3, tags=DEV, spot=True)
    sagemaker_jobs.finish(arn, "Stopped")
    app = load_function("training_job")
    assert app.handler(event(STOPPED), lambda_context)["recorded"] is True
    [record] = [e for e in log_entries(aws, table) if e.get("type") == "cost"]
    assert record["upper_bound"] is True and "an upper bound" in record["reason"]
    # Given a job on a type with no list price
    arn = st.training_job(sm, "odd-type", now, hours_ago=1, instance_type="ml.c5.9xlarge", tags=DEV)
    sagemaker_jobs.finish(arn, "Failed")
    odd = app.handler(event(STOPPED, id="odd", detail={"TrainingJobName": "odd-type", "TrainingJobStatus": "Failed"}), lambda_context)
    assert odd["recorded"] is True and odd["estimated_usd"] is None


def test_an_event_for_a_job_that_is_gone_changes_nothing(aws, sm, table, deployed_env, lambda_context):
    app = load_function("training_job")
    assert app.handler(event(COMPLETED), lambda_context)["skipped"] == "the job is gone"
    assert app.handler(event(INPROGRESS), lambda_context)["posted"] is False
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []
    assert log_entries(aws, table) == []


def test_a_stopping_event_is_acknowledged_and_ignored(aws, sm, deployed_env, lambda_context):
    app = load_function("training_job")
    result = app.handler(event(INPROGRESS, detail={"TrainingJobName": "x", "TrainingJobStatus": "Stopping"}), lambda_context)
    assert result["checked"] is None and "Stopping" in result["skipped"]

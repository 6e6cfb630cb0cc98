"""The training-job function, called with the JSON in events/ against moto (with the jobs extension)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.errors import BadEventError
from reaper.handlers import handle_kind_event
from reaper_devkit import seed_training as st
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function, throttle
from tests.helpers import training_fleet as fleet
from tests.helpers.events import MALFORMED_ANY_KIND

SCHEDULE = "training-job-schedule.json"


# these tests hold the ceilings' behaviour: the admin opted in (tests/integration/conftest.py)
pytestmark = pytest.mark.usefixtures("default_ceilings_act")


def by_id(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in messages}


def test_dry_run_decides_every_job_and_changes_nothing(aws, sm, jobs, deployed_env, lambda_context):
    # Given the deployed defaults (dry-run) and one job per case
    app = load_function("training_job")
    # When the schedule fires
    with recording() as calls:
        result = app.handler(event(SCHEDULE), lambda_context)
    # Then every job got its verdict and nothing was stopped or tagged
    assert result["resources"] == len([k for k in jobs if k not in ("hpo-001", "hpo-002")])
    assert result["acted"] == []
    assert all(s == "InProgress" for s in fleet.statuses(sm).values() if s != "Completed")
    messages = by_id(drain(aws, deployed_env["REAPER_QUEUE_URL"]))
    assert set(messages) == set(fleet.STOPPED) | {"near-ceiling", "gpu-starved", "prod", "bad-tag"} | set(fleet.SPOT_ADVISED)
    assert all(messages[k]["verdict"] == "act" and messages[k]["executed"] is False for k in fleet.STOPPED)
    assert "production stage" in messages["prod"]["reason"] and "would stop" in messages["prod"]["reason"]
    assert calls.actions <= function_actions("TrainingJobFunction")
    assert calls.ungranted("TrainingJobFunction") == []  # on the resource it names, conditions included
    assert not {a for a in calls.actions if a.startswith("sagemaker:Stop") or a.endswith("Tags") and "List" not in a}


def test_enforce_stops_exactly_the_jobs_past_a_ceiling_and_the_diverged(aws, sm, jobs, enforce, lambda_context):
    app = load_function("training_job")
    with recording() as calls:
        result = app.handler(event(SCHEDULE), lambda_context)
    # Then the jobs past a ceiling and the diverged ones are stopping, and no other
    assert sorted(result["acted"]) == fleet.STOPPED
    assert result["verdicts"]["error"] == 0
    now_status = fleet.statuses(sm)
    assert {k for k, s in now_status.items() if s == "Stopping"} == set(fleet.STOPPED) | {"hpo-003"}  # the tuning job's running child
    assert all(now_status[k] == "InProgress" for k in fleet.RUNNING_AFTER)
    assert fleet.training_status(sm, "runaway") == "Stopped"  # the next read: stopped
    messages = by_id(drain(aws, enforce["REAPER_QUEUE_URL"]))
    stop = messages["runaway"]
    assert stop["verdict"] == "act" and stop["executed"] is True and stop["past"] == "stopped"
    assert "SIGTERM" in stop["detail"] and "cannot be resumed" in stop["undo"]
    assert "loss=nan" in messages["nan-log"]["reason"]
    assert "accuracy fell 5 points" in messages["acc-down"]["reason"]
    assert "upper bound" not in messages["costly"]["reason"] and "is past its $50.00 cost ceiling" in messages["costly"]["reason"]
    assert messages["costly"]["evidence"]["estimated_usd"] == pytest.approx(
        53.55, abs=0.05
    )  # 7 h x 2 x $3.825, and the seconds since seeding
    # And the GPU-starved job got its advisory, the near-ceiling job its warning, as notify-only keeps
    assert messages["gpu-starved"]["verdict"] == "keep" and "data loader" in messages["gpu-starved"]["reason"]
    assert messages["near-ceiling"]["verdict"] == "keep" and "at 83% of its 24 h runtime ceiling" in messages["near-ceiling"]["reason"]
    # And the on-demand jobs with nothing else to say got the spot advisory, and were not stopped
    for name in fleet.SPOT_ADVISED:
        assert messages[name]["verdict"] == "keep" and messages[name]["executed"] is False
        assert "managed spot would save about $" in messages[name]["reason"] and "no CheckpointConfig" in messages[name]["reason"]
    assert calls.actions <= function_actions("TrainingJobFunction")
    assert calls.ungranted("TrainingJobFunction") == []  # on the resource it names, conditions included


def test_warning_and_advisory_are_posted_once_and_a_new_ceiling_is_told(aws, sm, cw, jobs, enforce, lambda_context):
    app = load_function("training_job")
    app.handler(event(SCHEDULE), lambda_context)
    first = by_id(drain(aws, enforce["REAPER_QUEUE_URL"]))
    assert {"near-ceiling", "gpu-starved"} <= set(first)
    # When later sweeps find the same
    for n in range(2):
        app.handler(event(SCHEDULE, id=f"later-{n}"), lambda_context)
    # Then nothing new is posted
    assert drain(aws, enforce["REAPER_QUEUE_URL"]) == []
    # When the job's cost also passes 80 % of a (new, lower) cost tag
    arn = sm.describe_training_job(TrainingJobName="near-ceiling")["TrainingJobArn"]
    sm.add_tags(ResourceArn=arn, Tags=[{"Key": "reaper:max-usd", "Value": "90"}])  # 20 h x $3.825 = $76.50 = 85 %
    app.handler(event(SCHEDULE, id="after-tag"), lambda_context)
    # Then one new message tells the cost ceiling, with the runtime one as context
    new = drain(aws, enforce["REAPER_QUEUE_URL"])
    assert [m["id"] for m in new] == ["near-ceiling"]
    assert "cost ceiling" in new[0]["reason"] and "runtime ceiling" in new[0]["reason"]


def test_same_event_three_times_stops_once_and_posts_once(aws, sm, jobs, enforce, lambda_context):
    app = load_function("training_job")
    results = [app.handler(event(SCHEDULE), lambda_context) for _ in range(3)]
    assert sorted(results[0]["acted"]) == fleet.STOPPED
    assert results[1]["acted"] == [] and results[2]["acted"] == []
    messages = drain(aws, enforce["REAPER_QUEUE_URL"])
    for job in [*fleet.STOPPED, "near-ceiling", "gpu-starved"]:
        assert len([m for m in messages if m["id"] == job]) == 1, job


def completing_at(sm: Any, monkeypatch: pytest.MonkeyPatch, name: str, method: str) -> Any:
    """A job 25 h into its run, which completes on its own just as the training-job function (loaded, returned)
    calls SageMaker's `method` on it."""
    arn = st.training_job(sm, name, datetime.now(UTC), hours_ago=25, tags=fleet.DEV)
    app = load_function("training_job")
    client = app.RUNTIME.clients()("sagemaker")
    original = getattr(client, method)

    def completes_first(**kwargs: Any) -> Any:
        sagemaker_jobs.finish(arn, "Completed")
        return original(**kwargs)

    monkeypatch.setattr(client, method, completes_first)
    return app


def test_a_job_that_finishes_between_decision_and_action_is_kept_and_says_so(aws, sm, cw, enforce, lambda_context, monkeypatch):
    # Given a runaway job that completes on its own just as the reaper re-reads it before stopping
    app = completing_at(sm, monkeypatch, "finishing", "describe_training_job")
    result = app.handler(event(SCHEDULE), lambda_context)
    # Then the stop is not attempted, the verdict is keep and the reason says why
    assert result["acted"] == [] and result["verdicts"]["keep"] == 1 and result["verdicts"]["error"] == 0
    assert fleet.training_status(sm, "finishing") == "Completed"
    assert drain(aws, enforce["REAPER_QUEUE_URL"]) == []  # quiet: nothing was done, nothing to tell


def test_a_job_that_ends_in_the_instant_before_the_stop_is_reported_clearly(aws, sm, enforce, lambda_context, monkeypatch):
    # Given a job that is still running at the re-read, but completes before StopTrainingJob lands
    app = completing_at(sm, monkeypatch, "racing", "stop_training_job")
    result = app.handler(event(SCHEDULE), lambda_context)
    # Then AWS refuses the stop and the error says the job had ended on its own
    assert result["acted"] == []
    assert "ended on its own (Completed) just before the stop: nothing stopped" in result["errors"][0]


def test_a_throttled_stop_is_an_error_and_the_sweep_goes_on(aws, sm, jobs, enforce, lambda_context, monkeypatch):
    app = load_function("training_job")
    client = app.RUNTIME.clients()("sagemaker")
    throttle(monkeypatch, client, "stop_training_job", {"TrainingJobName": "runaway"})
    result = app.handler(event(SCHEDULE), lambda_context)
    assert sorted(result["acted"]) == sorted(set(fleet.STOPPED) - {"runaway"})
    assert len(result["errors"]) == 1 and "runaway" in result["errors"][0] and "ThrottlingException" in result["errors"][0]
    assert fleet.training_status(sm, "runaway") == "InProgress"
    errors = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m["verdict"] == "error"]
    assert [m["id"] for m in errors] == ["runaway"]


def test_unreadable_metrics_leave_divergence_unjudged_but_ceilings_enforced(aws, sm, jobs, enforce, lambda_context, monkeypatch):
    app = load_function("training_job")
    cloudwatch = app.RUNTIME.clients()("cloudwatch")
    throttle(monkeypatch, cloudwatch, "get_metric_data")
    result = app.handler(event(SCHEDULE), lambda_context)
    # Then the ceilings still stop, the log still counts, and metric-based divergence is not guessed
    assert sorted(result["acted"]) == ["costly", "hpo", "nan-log", "proc-runaway", "runaway"]
    assert fleet.training_status(sm, "diverged") == "InProgress"


def test_with_a_grace_period_a_diverged_job_is_warned_then_stopped(aws, sm, cw, enforce, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_KIND_GRACE_MINUTES", "training-job=10")
    now = datetime.now(UTC)
    arn = st.training_job(sm, "diverged", now, hours_ago=2, tags=fleet.DEV)
    st.metric(cw, "diverged", now, fleet.DIVERGED_LOSS)
    app = load_function("training_job")
    first = app.handler(event(SCHEDULE), lambda_context)
    assert first["verdicts"]["warn"] == 1 and first["acted"] == []
    assert "reaper:warned-at" in fleet.tags(sm, arn)
    warned = drain(aws, enforce["REAPER_QUEUE_URL"])
    assert [m["verdict"] for m in warned] == ["warn"]
    # When the next sweep comes after the grace period, the loss still diverged
    later = now + timedelta(minutes=11)
    st.metric(cw, "diverged", later, fleet.DIVERGED_LOSS)
    done = handle_kind_event(event(SCHEDULE, id="after-grace"), "training-job", app.RUNTIME, now=later)
    assert done["acted"] == ["diverged"]
    assert "reaper:warned-at" not in fleet.tags(sm, arn)


@pytest.mark.parametrize(
    "bad",
    [
        *MALFORMED_ANY_KIND,
        {
            "id": "x",
            "detail-type": "SageMaker Training Job State Change",
            "source": "aws.sagemaker",
            "detail": {"TrainingJobStatus": "InProgress"},
        },
        {
            "id": "x",
            "detail-type": "SageMaker Training Job State Change",
            "source": "aws.sagemaker",
            "detail": {"TrainingJobName": "runaway", "TrainingJobStatus": "Exploded"},
        },
        {"id": "x", "detail-type": "SageMaker Endpoint State Change", "source": "aws.sagemaker", "detail": {"EndpointName": "e"}},
    ],
)
def test_malformed_events_are_refused_and_change_nothing(aws, sm, jobs, enforce, lambda_context, bad):
    app = load_function("training_job")
    with pytest.raises(BadEventError):
        app.handler(bad, lambda_context)
    assert "Stopping" not in fleet.statuses(sm).values()
    assert drain(aws, enforce["REAPER_QUEUE_URL"]) == []

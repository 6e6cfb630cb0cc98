"""Advice from the training-job function against moto: spot for long on-demand runs (issue 17)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper_devkit import seed_training as st
from reaper_devkit.moto_ext import sagemaker_jobs
from reaper_devkit.seed import put_series
from tests.conftest import drain, event, load_function
from tests.helpers.modes import enforce_mode

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


SIBLINGS = {  # finished children: validation:loss at each evaluation
    "sweep-001": [0.9, 0.7, 0.6, 0.5, 0.45],
    "sweep-002": [0.95, 0.75, 0.62, 0.55, 0.5],
    "sweep-003": [1.0, 0.8, 0.7, 0.6, 0.52],
    "sweep-004": [0.85, 0.72, 0.58, 0.5, 0.44],
}
RUNNING = {
    "sweep-005": [1.2, 1.1, 1.05],  # losing: 1.05 at evaluation 3 against a median of 0.61 (6 siblings reached it)
    "sweep-006": [0.8, 0.6, 0.5],  # winning
    "sweep-007": [2.0] * 7,  # bad, but no sibling reached evaluation 7: not judged
}


def seed_sweep(sm, cw, now: datetime, name: str, tags: dict[str, str]) -> None:
    children = [(3.0, 2.0)] * len(SIBLINGS) + [(1.0, None)] * len(RUNNING)
    st.tuning_job(sm, name, now, hours_ago=3, children=children, tags=tags)
    for i, values in enumerate([*SIBLINGS.values(), *RUNNING.values()], start=1):
        st.metric(cw, f"{name}-{i:03d}", now, values, name="validation:loss")


def test_a_losing_tuning_child_is_stopped_with_the_evidence_and_its_better_siblings_are_not(
    aws, sm, cw, deployed_env, lambda_context, monkeypatch
):
    # Given enforce (no grace) and a sweep tagged early-stop=median with early stopping off
    enforce_mode(monkeypatch)
    now = datetime.now(UTC)
    seed_sweep(sm, cw, now, "sweep", {**DEV, "reaper:early-stop": "median"})
    # When the sweep runs
    result = load_function("training_job").handler(event(SCHEDULE), lambda_context)
    # Then only the child losing to the median is stopped
    assert result["acted"] == ["sweep-005"] and result["errors"] == []
    status = {n: sm.describe_training_job(TrainingJobName=n)["TrainingJobStatus"] for n in RUNNING}
    assert status == {"sweep-005": "Stopping", "sweep-006": "InProgress", "sweep-007": "InProgress"}
    assert sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName="sweep")["HyperParameterTuningJobStatus"] == "InProgress"
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    stop = messages["sweep-005"]
    assert "objective validation:loss 1.05 at evaluation 3 is higher (worse) than the median 0.61 of 6 siblings" in stop["reason"]
    assert stop["evidence"]["early_stop"]["siblings"] == {
        "sweep-001": 0.6,
        "sweep-002": 0.62,
        "sweep-003": 0.7,
        "sweep-004": 0.58,
        "sweep-006": 0.5,
        "sweep-007": 2.0,
    }
    # And the tagged tuning job is not told to turn early stopping on: the reaper does it
    assert "sweep" not in messages


def test_untagged_sweep_with_early_stopping_off_gets_one_advisory_and_nothing_is_stopped(
    aws, sm, cw, deployed_env, lambda_context, monkeypatch
):
    # Given the same sweep without the tag
    enforce_mode(monkeypatch)
    now = datetime.now(UTC)
    seed_sweep(sm, cw, now, "plain", DEV)
    app = load_function("training_job")
    result = app.handler(event(SCHEDULE), lambda_context)
    app.handler(event(SCHEDULE, id="again"), lambda_context)
    # Then nothing is stopped and the tuning job is advised, once
    assert result["acted"] == []
    messages = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert [m["id"] for m in messages] == ["plain"]
    assert "early stopping is off" in messages[0]["reason"] and "reaper:early-stop=median" in messages[0]["reason"]


def test_unreadable_objectives_stop_no_child(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given the tagged sweep, and CloudWatch throttling the objective read
    from botocore.exceptions import ClientError

    from reaper.kinds.training_job import signals as sig_mod

    enforce_mode(monkeypatch)
    seed_sweep(sm, cw, datetime.now(UTC), "sweep", {**DEV, "reaper:early-stop": "median"})
    real_fetch = sig_mod.fetch

    def throttled(cloudwatch, queries, start, end, max_pages=None):  # type: ignore[no-untyped-def]
        if any(q.metric == "validation:loss" and "\t" in q.key and q.key.startswith("arn:") for q in queries):
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "GetMetricData")
        return real_fetch(cloudwatch, queries, start, end, max_pages)

    monkeypatch.setattr(sig_mod, "fetch", throttled)
    result = load_function("training_job").handler(event(SCHEDULE), lambda_context)
    # Then unknown is not losing: nothing is stopped, and the sweep has no error
    assert result["acted"] == [] and result["errors"] == []


def test_a_child_better_than_its_siblings_at_evaluation_30_is_not_losing_when_they_started_before_the_last_day(
    aws, sm, cw, deployed_env, lambda_context, monkeypatch
):
    # Given a tagged sweep 27 h old: three children started 26 h ago and report every 30 minutes
    # (0.70 at their 30th evaluation, 0.30 from the 31st), and a new child at its 30th evaluation with 0.40
    enforce_mode(monkeypatch)
    now = datetime.now(UTC)
    arn = st.tuning_job(
        sm, "long", now, hours_ago=27, children=[(26.0, 0.2)] * 3 + [(0.6, None)], tags={**DEV, "reaper:early-stop": "median"}
    )
    begun = now - timedelta(hours=26)
    for i in range(1, 4):
        points = [(begun + timedelta(minutes=30 * (k - 1), seconds=10), round(1.0 - 0.01 * k, 2) if k <= 30 else 0.3) for k in range(1, 52)]
        put_series(cw, st.NAMESPACE, "validation:loss", {"TrainingJobName": f"long-{i:03d}"}, points)
    st.metric(cw, "long-004", now, [round(1.0 - 0.02 * k, 2) for k in range(1, 31)], name="validation:loss")
    assert arn
    # When the sweep runs
    result = load_function("training_job").handler(event(SCHEDULE), lambda_context)
    # Then the new child is compared at its own 30th evaluation with theirs (0.70), not with their last day's 30th value (0.30)
    assert result["acted"] == [] and result["errors"] == []
    assert sm.describe_training_job(TrainingJobName="long-004")["TrainingJobStatus"] == "InProgress"


def test_the_tuning_jobs_best_child_is_never_stopped_for_losing(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given the sweep whose child sweep-005 loses to the median at evaluation 3, but SageMaker names it BestTrainingJob
    enforce_mode(monkeypatch)
    now = datetime.now(UTC)
    seed_sweep(sm, cw, now, "sweep", {**DEV, "reaper:early-stop": "median"})
    arn = sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName="sweep")["HyperParameterTuningJobArn"]
    sagemaker_jobs.set_best_training_job(arn, "sweep-005")
    # When the sweep runs
    result = load_function("training_job").handler(event(SCHEDULE), lambda_context)
    # Then it keeps running, and the evidence says why
    assert result["acted"] == []
    assert sm.describe_training_job(TrainingJobName="sweep-005")["TrainingJobStatus"] == "InProgress"
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert "sweep-005" not in messages or messages["sweep-005"]["verdict"] != "act"

"""Stalled jobs of every kind, through the training-job function against moto (issue 26).

A seeded account runs six kinds of job, each once stalled (no new log event, CPU near zero, for
more than StalledMinutes) and once slow but progressing (it logs, or it computes): training,
processing, transform, a tuning job's child, a tuning job whose only child stalled, and an AutoML
job whose candidate stalled.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.handlers import handle_kind_event
from reaper_devkit import seed_training as st
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import sagemaker_jobs
from tests.conftest import drain, event, load_function, throttle

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
SCHEDULE = "training-job-schedule.json"
TRAIN, PROC, XFORM = "/aws/sagemaker/TrainingJobs", st.PROCESSING_GROUP, st.TRANSFORM_GROUP
STALLED = ["aml-stall", "hpo-001", "hps", "p-stall", "t-stall", "x-stall"]
PROGRESSING = ["aml-slow", "hpo-002", "hpp", "p-slow", "t-slow", "x-slow"]


def _quiet(aws: Any, group: str, job: str, host: str, now: datetime) -> None:
    """Logged at its start, silent for the last two hours, CPU at 1 %."""
    st.job_log(aws.client("logs"), group, f"{job}/{host}-1764662400", now, [170, 150, 125])
    st.utilization(aws.client("cloudwatch"), group, f"{job}/{host}", now, 1.0)


def seed_account(aws: Any, sm: Any, now: datetime, tags: dict[str, str] | None = None) -> dict[str, str]:
    """Six kinds of job, each stalled once and slow-but-progressing once; returns name -> ARN."""
    tags = tags or DEV
    logs, cw = aws.client("logs"), aws.client("cloudwatch")
    arns = {
        "t-stall": st.training_job(sm, "t-stall", now, hours_ago=3, tags=tags),
        "t-slow": st.training_job(sm, "t-slow", now, hours_ago=3, tags=tags),
        "p-stall": st.processing_job(sm, "p-stall", now, hours_ago=3, tags=tags),
        "p-slow": st.processing_job(sm, "p-slow", now, hours_ago=3, tags=tags),
        "x-stall": st.transform_job(sm, "x-stall", now, hours_ago=3, tags=tags),
        "x-slow": st.transform_job(sm, "x-slow", now, hours_ago=3, tags=tags),
        "hpo": st.tuning_job(sm, "hpo", now, hours_ago=3, children=[(2.5, None), (2.5, None)], tags=tags),
        "hps": st.tuning_job(sm, "hps", now, hours_ago=3, children=[(2.5, None)], tags=tags),
        "hpp": st.tuning_job(sm, "hpp", now, hours_ago=3, children=[(2.5, None)], tags=tags),
        "aml-stall": st.automl_job(sm, "aml-stall", now, hours_ago=3, tags=tags),
        "aml-slow": st.automl_job(sm, "aml-slow", now, hours_ago=3, tags=tags),
    }
    for name in ("aml-stall", "aml-slow"):
        child = st.training_job(sm, f"{name}-c1", now, hours_ago=2.5, tags=tags)
        sagemaker_jobs.link_automl(child, arns[name])
    for job in ("t-stall", "hpo-001", "hps-001", "aml-stall-c1"):
        _quiet(aws, TRAIN, job, "algo-1", now)
    _quiet(aws, PROC, "p-stall", "algo-1", now)
    _quiet(aws, XFORM, "x-stall", "i-0abc", now)
    # slow but progressing: a line every 10 minutes at 2 % CPU, or silent but computing
    for job in ("t-slow", "hpo-002", "hpp-001", "aml-slow-c1"):
        st.job_log(logs, TRAIN, f"{job}/algo-1-1764662400", now, [170, 30, 20, 10])
        st.utilization(cw, TRAIN, f"{job}/algo-1", now, 2.0)
    st.job_log(logs, PROC, "p-slow/algo-1-1764662400", now, [170])
    st.utilization(cw, PROC, "p-slow/algo-1", now, 40.0)
    st.job_log(logs, XFORM, "x-slow/i-0def-1764662400", now, [170, 5])
    return arns


def _statuses(sm: Any) -> dict[str, str]:
    out = {n: sm.describe_training_job(TrainingJobName=n)["TrainingJobStatus"] for n in ("t-stall", "t-slow", "hpo-001", "hpo-002")}
    out |= {n: sm.describe_processing_job(ProcessingJobName=n)["ProcessingJobStatus"] for n in ("p-stall", "p-slow")}
    out |= {n: sm.describe_transform_job(TransformJobName=n)["TransformJobStatus"] for n in ("x-stall", "x-slow")}
    out |= {
        n: sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName=n)["HyperParameterTuningJobStatus"] for n in ("hps", "hpp")
    }
    out |= {n: sm.describe_auto_ml_job_v2(AutoMLJobName=n)["AutoMLJobStatus"] for n in ("aml-stall", "aml-slow")}
    return out


def opted_in(
    aws: Any, sm: Any, monkeypatch: pytest.MonkeyPatch, *, mode: str = "enforce", grace: int = 0, tags: dict[str, str] | None = None
) -> tuple[Any, datetime]:
    """The seeded account (its jobs tagged `tags`), and the training-job function loaded in `mode` with GraceMinutes
    `grace` and the admin's opt-in to stop stalled jobs (StalledJobAction=stop): (the function, now)."""
    monkeypatch.setenv("REAPER_MODE", mode)
    monkeypatch.setenv("REAPER_GRACE_MINUTES", str(grace))
    monkeypatch.setenv("REAPER_STALLED_JOB_ACTION", "stop")
    now = datetime.now(UTC)
    seed_account(aws, sm, now, tags)
    return load_function("training_job"), now


def _sweep(app: Any, at: datetime, id_: str) -> dict[str, Any]:
    result: dict[str, Any] = handle_kind_event(event(SCHEDULE, id=id_), "training-job", app.RUNTIME, now=at)
    return result


def test_six_stalled_jobs_are_warned_then_stopped_after_the_grace_and_six_slow_ones_are_untouched(
    aws, sm, deployed_env, lambda_context, monkeypatch
):
    # Given enforce with a 30-minute grace, the admin's opt-in, and the seeded account
    app, now = opted_in(aws, sm, monkeypatch, grace=30)
    # When the first sweep runs
    first = _sweep(app, now, "first")
    warned = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "warn"}
    # Then the six stalled jobs are warned, with the evidence, and nothing is stopped
    assert first["acted"] == [] and first["errors"] == []
    assert sorted(warned) == STALLED
    assert "no new log event in its 1 log stream(s)" in warned["t-stall"]["reason"] and "never above 1.0%" in warned["t-stall"]["reason"]
    assert "will stop in 30 min" in warned["x-stall"]["reason"]
    assert "each of the 1 job(s) it is running shows none (aml-stall-c1)" in warned["aml-stall"]["reason"]
    assert set(_statuses(sm).values()) == {"InProgress"}
    # When a sweep runs after the grace, nothing having progressed
    second = _sweep(app, now + timedelta(minutes=40), "second")
    # Then the six are stopped and the six progressing jobs (and the children held by their parents) are not
    assert sorted(second["acted"]) == STALLED and second["errors"] == []
    statuses = _statuses(sm)
    assert {n: statuses[n] for n in PROGRESSING if n in statuses} == {n: "InProgress" for n in PROGRESSING if n in statuses}
    assert {statuses[n] for n in STALLED if n in statuses} == {"Stopping"}
    assert sm.describe_training_job(TrainingJobName="aml-slow-c1")["TrainingJobStatus"] == "InProgress"
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] in ("act", "warn")}
    assert sorted(messages) == STALLED and all(m["verdict"] == "act" and m["executed"] for m in messages.values())


def test_by_default_a_stalled_job_is_told_once_and_never_stopped(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given enforce without the opt-in (StalledJobAction=notify, the default)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    seed_account(aws, sm, now)
    app = load_function("training_job")
    # When two sweeps run half an hour apart
    first = _sweep(app, now, "first")
    told = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if "stalled" in m["reason"]}
    second = _sweep(app, now + timedelta(minutes=30), "second")
    # Then each stalled job is told once, as a keep, and nothing is stopped or warned
    assert first["acted"] == second["acted"] == []
    assert sorted(told) == STALLED and all(m["verdict"] == "keep" for m in told.values())
    assert "Told only (StalledJobAction=notify)" in told["p-stall"]["reason"]
    assert not [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if "stalled" in m["reason"]]
    assert set(_statuses(sm).values()) == {"InProgress"}


@pytest.mark.parametrize(
    ("tags", "verdict"),
    [({**DEV, "reaper:exempt": "true"}, "exempt"), ({**DEV, "ml:stage": "prod"}, "exempt")],
    ids=["exempt", "production"],
)
def test_exempt_and_production_stalled_jobs_are_never_stopped(aws, sm, deployed_env, lambda_context, monkeypatch, tags, verdict):
    # Given enforce, no grace and the opt-in, with every job exempt or in production
    app, now = opted_in(aws, sm, monkeypatch, tags=tags)
    # When the sweep runs
    result = _sweep(app, now, "only")
    # Then nothing is stopped
    assert result["acted"] == [] and result["errors"] == []
    assert result["verdicts"][verdict] >= len(STALLED)
    assert set(_statuses(sm).values()) == {"InProgress"}


def test_dry_run_says_it_would_stop_and_changes_nothing(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given dry-run, no grace and the opt-in
    app, now = opted_in(aws, sm, monkeypatch, mode="dry-run")
    # When the sweep runs
    with recording() as calls:
        result = _sweep(app, now, "only")
    # Then the six would be stopped, and no stop or tag call is made
    acts = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act"}
    assert sorted(acts) == STALLED and not any(m["executed"] for m in acts.values())
    assert result["acted"] == []
    assert not {a for a in calls.actions if a.startswith("sagemaker:Stop") or a == "sagemaker:AddTags"}
    assert set(_statuses(sm).values()) == {"InProgress"}


def test_a_throttled_log_read_leaves_progress_unknown_and_stops_nothing(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given enforce, no grace, the opt-in, and CloudWatch Logs throttling every DescribeLogStreams
    app, now = opted_in(aws, sm, monkeypatch)
    throttle(monkeypatch, app.RUNTIME.clients()("logs"), "describe_log_streams")
    # When the sweep runs
    result = _sweep(app, now, "only")
    # Then no job is stopped for a stall: its progress is unknown, said in the evidence
    assert result["acted"] == [] and result["errors"] == []
    assert set(_statuses(sm).values()) == {"InProgress"}


def test_a_duplicate_delivery_of_the_sweep_stops_each_stalled_job_once(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given enforce, no grace and the opt-in
    app, now = opted_in(aws, sm, monkeypatch)
    # When the same schedule event is delivered twice
    first = _sweep(app, now, "same")
    again = _sweep(app, now, "same")
    # Then the six are stopped by the first delivery only, and posted once each
    assert sorted(first["acted"]) == STALLED and again["acted"] == []
    acts = [m["id"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act" and m["executed"]]
    assert sorted(acts) == STALLED


def test_ceilings_hold_for_transform_and_automl_jobs_and_a_cost_ceiling_without_a_price_is_said(
    aws, sm, deployed_env, lambda_context, monkeypatch
):
    # Given enforce, a transform job and an AutoML job 3 h in past their 1 h ceilings, and a transform job
    # whose cost ceiling cannot be judged (no batch transform list price)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    st.transform_job(sm, "x-long", now, hours_ago=3, tags={**DEV, "reaper:max-hours": "1"})
    st.automl_job(sm, "aml-long", now, hours_ago=3, tags={**DEV, "reaper:max-hours": "1"})
    st.transform_job(sm, "x-priced", now, hours_ago=1, tags={**DEV, "reaper:max-usd": "5"})
    # When the sweep runs
    result = _sweep(load_function("training_job"), now, "only")
    # Then both are stopped at once (the kind's own grace of 0), and the unpriced ceiling is said, not guessed
    assert sorted(result["acted"]) == ["aml-long", "x-long"] and result["errors"] == []
    assert sm.describe_transform_job(TransformJobName="x-long")["TransformJobStatus"] == "Stopping"
    assert sm.describe_auto_ml_job_v2(AutoMLJobName="aml-long")["AutoMLJobStatus"] == "Stopping"
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert "past its 1 h runtime ceiling (tag reaper:max-hours)" in messages["x-long"]["reason"]
    assert "stores no output in S3" in messages["x-long"]["detail"]
    assert "cannot be judged: no list price for ml.m5.xlarge (batch transform)" in messages["x-priced"]["reason"]


def test_logs_are_read_only_for_jobs_the_metrics_call_quiet(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given the seeded account and three jobs more: one busy on its CPU, two with logs and no metric at all
    monkeypatch.setenv("REAPER_STALLED_JOB_ACTION", "stop")
    now = datetime.now(UTC)
    seed_account(aws, sm, now)
    st.training_job(sm, "t-busy", now, hours_ago=3, tags=DEV)
    st.utilization(aws.client("cloudwatch"), TRAIN, "t-busy/algo-1", now, 80.0)
    for job in ("t-blind", "t-blind-2"):
        st.training_job(sm, job, now, hours_ago=3, tags=DEV)
        st.job_log(aws.client("logs"), TRAIN, f"{job}/algo-1-1764662400", now, [170, 150])
    # When the sweep runs (dry run)
    with recording() as calls:
        _sweep(load_function("training_job"), now, "only")
    said = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    # Then the logs were read for the jobs the metrics call quiet only (the six stalled ones' and the
    # three slow ones' at 1-2 % CPU, one DescribeLogStreams each), never for a busy job or one without metrics
    quiet = ["t-stall", "hpo-001", "hps-001", "aml-stall-c1", "p-stall", "x-stall", "t-slow", "hpo-002", "hpp-001", "aml-slow-c1"]
    assert calls.by_operation().get("logs:DescribeLogStreams") == len(quiet)
    # and the six stalled jobs are still found (warned first); the jobs without metrics are not stalled (unknown, kept)
    assert sorted(i for i, m in said.items() if m["verdict"] == "warn") == STALLED
    assert not {"t-blind", "t-blind-2"} & {i for i, m in said.items() if m["verdict"] in ("act", "warn")}

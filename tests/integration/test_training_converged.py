"""Converged and flat runs through the training-job function against moto (issue 37, item 3): a replay of
20 labelled runs (reaper_devkit.training_curves), told within one sweep of their patience running out,
with the dollars since the plateau; no healthy or noisy-but-improving run told; nothing stopped
without the opt-in (reaper:early-stop=converged or ConvergedJobAction=stop)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.kinds.training_job.plateau import SMOOTH
from reaper_devkit import seed_training as st
from reaper_devkit import training_curves
from reaper_devkit.seed import aligned
from tests.conftest import drain, event, load_function

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
SCHEDULE = "training-job-schedule.json"
PATIENCE = 30  # the stack's default (ConvergedPatience)
SWEEP = 15  # minutes between sweeps: a wasted run is 0..14 values past the point it must be told
P3_HOURLY = 3.825  # ml.p3.2xlarge training, us-east-1 list price (prices.json)
TOLD = ("converged and still billing", "flat from the start")


def seed(sm, cw, now: datetime, run: training_curves.Run, values: tuple[float, ...], name: str, tags: dict[str, str]) -> None:
    st.training_job(sm, name, now, hours_ago=(len(values) + 2) / 60, tags=tags)
    st.metric(cw, name, now, values, name="validation:loss")


def told(messages: dict[str, dict]) -> set[str]:
    return {name for name, m in messages.items() if any(t in m["reason"] for t in TOLD)}


def test_a_replay_of_twenty_labelled_runs_tells_the_wasted_ones_with_their_dollars_and_stops_none(
    aws, sm, cw, deployed_env, lambda_context, monkeypatch
):
    # Given enforce, 20 runs (5 plateaued, 5 flat, 5 healthy slow-improving, 5 noisy-but-improving), each as
    # it is now, and each wasted run also as it was when its plateau had lasted only `patience` values (the
    # smoothing's lag still to come: not yet told)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    runs = training_curves.runs(seed=37, per_label=5, patience=PATIENCE, smooth=SMOOTH, lag=SWEEP)
    for run in runs:
        seed(sm, cw, now, run, run.values, run.name, DEV)
        if run.wasted:
            assert run.plateau_at is not None
            seed(sm, cw, now, run, run.values[: run.plateau_at + PATIENCE], f"{run.name}-earlier", DEV)
    # When the training-job function sweeps
    result = load_function("training_job").handler(event(SCHEDULE), lambda_context)
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    # Then at least 9 of the 10 wasted runs are told, none of the 10 kept runs, none before its patience ran out
    wasted = {r.name for r in runs if r.wasted}
    kept = {r.name for r in runs if not r.wasted}
    assert len(told(messages) & wasted) >= 9, sorted(wasted - told(messages))
    assert told(messages) & kept == set()
    assert {n for n in told(messages) if n.endswith("-earlier")} == set()
    # and the flat ones are told to check the data, the plateaued ones that they converged
    for run in runs:
        if run.name in told(messages):
            assert ("flat from the start" in messages[run.name]["reason"]) == (run.label == "flat")
    # and nothing is stopped: no opt-in
    assert result["acted"] == [] and result["errors"] == []
    assert {sm.describe_training_job(TrainingJobName=r.name)["TrainingJobStatus"] for r in runs} == {"InProgress"}
    # and each message gives the dollars since the plateau began, from its first plateau value
    end = aligned(now) - timedelta(minutes=1)
    for run in runs:
        if run.name not in told(messages):
            continue
        evidence = messages[run.name]["evidence"]["plateau"]
        since = datetime.fromisoformat(evidence["since"].replace("Z", "+00:00"))
        assert run.plateau_at is not None
        began = end - timedelta(minutes=len(run.values) - 1 - run.plateau_at)
        assert began - timedelta(minutes=1) <= since <= began + timedelta(minutes=SMOOTH)
        hours = (now - since).total_seconds() / 3600
        assert abs(evidence["usd_since"] - hours * P3_HOURLY) < 0.05
        assert f"${evidence['usd_since']:,.2f} billed since then ($3.83/h list price)" in messages[run.name]["reason"]


def test_a_tuning_child_on_a_plateau_is_left_to_its_siblings(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given a tuning job whose running child never moved from its first value
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    st.tuning_job(sm, "sweep", now, hours_ago=2, children=[(1.5, None)], tags=DEV)
    st.metric(cw, "sweep-001", now, [2.3026] * 80, name="validation:loss")
    # When the function sweeps
    load_function("training_job").handler(event(SCHEDULE), lambda_context)
    # Then the child is not told it is flat: sweeps judge their children against each other
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert told(messages) == set()


def test_the_opt_in_tag_warns_a_converged_run_then_stops_it_at_the_next_sweep(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given enforce with no grace, one plateaued run tagged reaper:early-stop=converged and one not
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    run = training_curves.runs(seed=1, per_label=1, patience=PATIENCE, smooth=SMOOTH, lag=0)[0]
    assert run.label == "plateaued"
    seed(sm, cw, now, run, run.values, "opted-in", {**DEV, "reaper:early-stop": "converged"})
    seed(sm, cw, now, run, run.values, "not-opted", DEV)
    app = load_function("training_job")
    # When two sweeps run
    first = app.handler(event(SCHEDULE), lambda_context)
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    second = app.handler(event(SCHEDULE, id="again"), lambda_context)
    # Then the opted-in run is warned, then stopped; the other is told only
    assert first["acted"] == [] and messages["opted-in"]["verdict"] == "warn"
    assert (
        "converged and still billing" in messages["opted-in"]["reason"]
        and "tag reaper:early-stop=converged" in messages["opted-in"]["reason"]
    )
    assert messages["not-opted"]["verdict"] == "keep" and "converged and still billing" in messages["not-opted"]["reason"]
    assert second["acted"] == ["opted-in"]
    assert sm.describe_training_job(TrainingJobName="opted-in")["TrainingJobStatus"] == "Stopping"
    assert sm.describe_training_job(TrainingJobName="not-opted")["TrainingJobStatus"] == "InProgress"


def test_the_stack_setting_stops_converged_runs_only_when_the_admin_sets_it(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given enforce with no grace and ConvergedJobAction=stop, one flat run
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setenv("REAPER_CONVERGED_JOB_ACTION", "stop")
    now = datetime.now(UTC)
    run = next(r for r in training_curves.runs(seed=2, per_label=1, patience=PATIENCE, smooth=SMOOTH, lag=0) if r.label == "flat")
    seed(sm, cw, now, run, run.values, "flat-run", DEV)
    app = load_function("training_job")
    # When two sweeps run
    first = app.handler(event(SCHEDULE), lambda_context)
    second = app.handler(event(SCHEDULE, id="again"), lambda_context)
    # Then it is warned (flat from the start, by the stack's setting), then stopped
    warned = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}["flat-run"]
    assert first["acted"] == [] and second["acted"] == ["flat-run"]
    assert "flat from the start (check the data" in warned["reason"] and "(ConvergedJobAction=stop)" in warned["reason"]

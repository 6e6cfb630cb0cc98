"""Attacks on the safety promises, through the real handler against moto (issue: safety under races,
faults and bad tags). Each test reproduces a failure a hostile review found and shows it fixed.

The pipeline is kind-agnostic; notebooks are the fastest kind to seed, so they carry the core cases.
"""

from __future__ import annotations

import json
import os
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.deadline import Deadline
from reaper.handlers import handle_kind_event
from reaper.record.actionlog import ActionLog
from reaper.sweep import pipeline
from reaper_devkit import seed
from tests.conftest import drain, event, load_function
from tests.helpers.contract_kits import (
    OWNER,
    endpoint_changed,
    file_system_changed,
    seed_endpoints,
    seed_file_systems,
    seed_training_jobs,
    training_job_changed,
)
from tests.helpers.faults import flaky

IDLE = [0] * 36


def status(sm: Any, name: str) -> str:
    return str(sm.describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceStatus"])


def arn(sm: Any, name: str) -> str:
    return str(sm.describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceArn"])


def tags(sm: Any, name: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn(sm, name))["Tags"]}


def idle_notebooks(sm: Any, cw: Any, names: list[str], now: datetime, extra: dict[str, dict[str, str]] | None = None) -> None:
    for name in names:
        seed.notebook(sm, name, {**OWNER, **(extra or {}).get(name, {})})
        seed.activity(cw, name, now, IDLE)


def log_entries(aws: Any, table: str, now: datetime) -> list[dict[str, Any]]:
    return list(ActionLog(aws.client("dynamodb"), table).stored_entries(now - timedelta(days=1), now + timedelta(days=1)))


# -- races: protection set after discovery ------------------------------------------------------
PROTECTIONS = {
    "exempt": {"reaper:exempt": "true"},
    "exempt-any-case": {"Reaper:Exempt": " TRUE "},
    "production": {"ml:stage": "prod"},
    "snoozed": {"reaper:snooze-until": "2099-01-01"},
    "typo": {"reaper:exmept": "true"},
    "blank": {"reaper:exempt": ""},
}


@pytest.mark.parametrize("grace", [0, 60], ids=["act", "warn"])
@pytest.mark.parametrize("protection", sorted(PROTECTIONS))
def test_a_protective_tag_added_after_discovery_wins(aws, sm, cw, enforce, lambda_context, monkeypatch, protection, grace):
    # Given two idle notebooks; one gets a protective tag after the signals were read, before the action
    monkeypatch.setenv("REAPER_GRACE_MINUTES", str(grace))
    now = datetime.now(UTC)
    idle_notebooks(sm, cw, ["late-tag", "plain"], now)
    from reaper.kinds.notebook import signals as notebook_signals

    real = notebook_signals.signals

    def signals_then_tag(clients: Any, resources: Any, settings: Any, at: datetime) -> Any:
        read = real(clients, resources, settings, at)
        sm.add_tags(ResourceArn=arn(sm, "late-tag"), Tags=[{"Key": k, "Value": v} for k, v in PROTECTIONS[protection].items()])
        return read

    monkeypatch.setattr(notebook_signals, "signals", signals_then_tag)
    app = load_function("notebook")
    # When the sweep runs
    result = app.handler(event("notebook-schedule.json"), lambda_context)
    # Then the late-tagged notebook is untouched (not stopped, no warning tag) and reported exempt
    assert status(sm, "late-tag") == "InService"
    assert "reaper:warned-at" not in tags(sm, "late-tag")
    assert result["verdicts"]["exempt"] == 1
    # and the rest of the sweep went on
    if grace == 0:
        assert result["acted"] == ["plain"] and status(sm, "plain") == "Stopped"
    else:
        assert "reaper:warned-at" in tags(sm, "plain")


# -- bad tags: exempt, named, and the rest of the sweep acts -------------------------------------
BAD_TAGS = {
    "blank-exempt": {"reaper:exempt": ""},
    "blank-snooze": {"reaper:snooze-until": ""},
    "typo": {"reaper:exmept": "true"},
    "case-conflict": {"reaper:exempt": "true", "REAPER:EXEMPT": "false"},
    "huge-idle": {"reaper:idle-minutes": "999999999999"},
    "big-idle": {"reaper:idle-minutes": "10000000"},
    "long-number": {"reaper:idle-minutes": "9" * 250},  # AWS caps tag values at 256
    "calendar-edge": {"reaper:snooze-until": "9999-12-31T23:59:59-14:00"},
    "nan": {"reaper:idle-minutes": "nan"},
}


@pytest.mark.parametrize("bad", sorted(BAD_TAGS))
def test_an_unreadable_tag_exempts_its_resource_and_the_sweep_goes_on(aws, sm, cw, enforce, lambda_context, bad):
    now = datetime.now(UTC)
    idle_notebooks(sm, cw, ["bad", "plain"], now, {"bad": BAD_TAGS[bad]})
    app = load_function("notebook")
    result = app.handler(event("notebook-schedule.json"), lambda_context)
    assert status(sm, "bad") == "InService"
    assert result["acted"] == ["plain"] and status(sm, "plain") == "Stopped"
    messages = {m["id"]: m for m in drain(aws, enforce["REAPER_QUEUE_URL"])}
    assert messages["bad"]["verdict"] == "exempt"
    key = next(iter(BAD_TAGS[bad])).lower()
    assert key in messages["bad"]["reason"].lower()  # the message names the tag to fix


# -- a crash right after actions: logged at once, posted by the next sweep -----------------------
class Killed(BaseException):
    """What a Lambda timeout looks like from inside: nothing after it runs."""


def test_a_sweep_killed_after_the_third_stop_has_logged_all_three_and_the_next_sweep_posts_them(
    aws, sm, cw, enforce, lambda_context, monkeypatch
):
    now = datetime.now(UTC)
    names = [f"nb-{i}" for i in range(5)]
    idle_notebooks(sm, cw, names, now)
    from reaper.kinds.notebook import actions

    real_stop = actions.stop
    stops: list[str] = []

    def stop_then_die(ctx: Any, resource: Any, decision: Any) -> Any:
        if len(stops) == 3:
            raise Killed()
        stops.append(resource.id)
        return real_stop(ctx, resource, decision)

    monkeypatch.setattr(actions, "stop", stop_then_die)
    app = load_function("notebook")
    with pytest.raises(Killed):
        app.handler(event("notebook-schedule.json"), lambda_context)
    # every executed stop is in the action log already, and the stop the sweep died in (it may or
    # may not have been made) is there too, as unconfirmed (written before the call)
    entries = log_entries(aws, enforce["REAPER_TABLE"], now)
    assert {e["id"] for e in entries if e.get("executed") and not e.get("unconfirmed")} == set(stops) and len(stops) == 3
    assert [e["id"] for e in entries if e.get("unconfirmed")] == ["nb-3"]
    # the messages of the batch that never reached the queue are posted by the next sweep
    queued_before = {m["id"] for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("executed")}
    monkeypatch.setattr(actions, "stop", real_stop)
    later = now + timedelta(minutes=20)
    for name in names:
        seed.activity(cw, name, later, IDLE)
    handle_kind_event(event("notebook-schedule.json", id="next"), "notebook", app.RUNTIME, now=later)
    queued_after = {m["id"] for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("executed")}
    assert set(stops) <= queued_before | queued_after


# -- faults: throttling on every dependency -------------------------------------------------------
@pytest.mark.parametrize("service", ["sagemaker", "cloudwatch", "dynamodb", "sqs"])
def test_thirty_percent_throttling_leaves_no_resource_without_a_verdict_and_nothing_executed_unreported(
    aws, sm, cw, enforce, lambda_context, monkeypatch, service
):
    now = datetime.now(UTC)
    names = [f"nb-{i:02d}" for i in range(12)]
    idle_notebooks(sm, cw, names, now)
    app = load_function("notebook")
    flaky(monkeypatch, app.RUNTIME.clients()(service), 0.3, random.Random(7))
    outcomes = pipeline.sweep(app.RUNTIME, ["notebook"], now, event_id="flaky")
    by_id = {o.resource.id: o for o in outcomes}
    if "*" in by_id:  # discovery itself failed: one error stands for the kind, nothing was changed
        assert by_id["*"].verdict.value == "error"
        assert all(status(sm, n) == "InService" for n in names)
        return
    assert set(by_id) == set(names)  # every resource has its verdict
    stopped = {n for n in names if status(sm, n) in ("Stopping", "Stopped")}
    executed = {o.resource.id for o in outcomes if o.executed}
    assert stopped == executed  # nothing changed that the sweep does not know it changed
    logged = {e["id"] for e in log_entries(aws, enforce["REAPER_TABLE"], now)}
    queued = {m["id"] for m in drain(aws, enforce["REAPER_QUEUE_URL"])}
    for name in executed:  # each executed action is logged, or its failure to log is an error that was queued
        o = by_id[name]
        assert name in logged or (o.verdict.value == "error" and name in queued), name


# -- two sweeps at once: one warning per resource -------------------------------------------------
def test_a_cli_sweep_and_the_scheduled_sweep_at_once_warn_each_resource_once(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    now = datetime.now(UTC)
    names = [f"nb-{i}" for i in range(4)]
    idle_notebooks(sm, cw, names, now)
    app = load_function("notebook")
    from reaper.kinds.notebook import signals as notebook_signals

    real = notebook_signals.signals
    nested: list[int] = []

    def signals_while_another_sweep_runs(clients: Any, resources: Any, settings: Any, at: datetime) -> Any:
        read = real(clients, resources, settings, at)
        if not nested:  # the first sweep has discovered; the second runs whole before it acts
            nested.append(1)
            pipeline.sweep(app.RUNTIME, ["notebook"], at, event_id="cli-sweep")
        return read

    monkeypatch.setattr(notebook_signals, "signals", signals_while_another_sweep_runs)
    writes: list[str] = []
    client = app.RUNTIME.clients()("sagemaker")
    real_add = client.add_tags
    monkeypatch.setattr(client, "add_tags", lambda **kw: (writes.append(kw["ResourceArn"]), real_add(**kw))[1])
    app.handler(event("notebook-schedule.json"), lambda_context)
    warnings = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "warn"]
    assert sorted(m["id"] for m in warnings) == names
    assert len(writes) == len(names)


# -- time budget ------------------------------------------------------------------------------------
def test_a_sweep_near_its_deadline_starts_no_change_and_says_so_once(aws, sm, cw, enforce, lambda_context):
    now = datetime.now(UTC)
    names = [f"nb-{i}" for i in range(3)]
    idle_notebooks(sm, cw, names, now)
    app = load_function("notebook")
    outcomes = pipeline.sweep(app.RUNTIME, ["notebook"], now, event_id="late", deadline=Deadline.in_seconds(5))
    assert all(status(sm, n) == "InService" for n in names)
    assert {o.result.code.value for o in outcomes if o.result} == {"not-reached"}
    notices = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("type") == "notice"]
    assert len(notices) == 1 and "3 resource(s) not reached" in notices[0]["title"]


# -- restore information: no action log, no change that needs one ------------------------------------
def test_without_an_action_log_component_and_async_endpoints_are_refused_through_the_cli(aws, sm, capsys):
    # Given idle dev endpoints that go to zero by scale-to-zero (components, async) and no REAPER_TABLE
    from reaper.cli.main import main
    from reaper_devkit import seed_endpoint as se

    assert "REAPER_TABLE" not in os.environ
    now = datetime.now(UTC)
    se.components(sm, "ic-dev", {"ic-a": 2, "ic-b": 1}, OWNER)
    se.age("ic-dev", now, 300)
    se.asynchronous(sm, "async-dev", OWNER, count=2)
    se.age("async-dev", now, 300)
    aas = aws.client("application-autoscaling")
    se.autoscale(aas, "async-dev", minimum=1, maximum=3)
    alarms_before = aws.client("cloudwatch").describe_alarms()["MetricAlarms"]
    policies_before = [p["PolicyName"] for p in aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]]
    # When an enforce sweep with no grace runs from the command line
    code = main(["sweep", "--kind", "endpoint", "--mode", "enforce", "--grace-minutes", "0", "--json"])
    rows = {r["id"]: r for r in (json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip())}
    # Then both are errors, refused for want of an action log, and exit status 1
    assert code == 1
    for name in ("ic-dev", "async-dev"):
        assert rows[name]["verdict"] == "error" and rows[name]["action"] == "scale-to-zero", rows[name]
        assert rows[name]["reason"].startswith("refused") and "no action log" in rows[name]["reason"]
        assert rows[name]["executed"] is False
    # and nothing changed: copies, instances, autoscaling, alarms
    copies = {
        ic: sm.describe_inference_component(InferenceComponentName=ic)["RuntimeConfig"]["DesiredCopyCount"] for ic in ("ic-a", "ic-b")
    }
    assert copies == {"ic-a": 2, "ic-b": 1}
    variant = sm.describe_endpoint(EndpointName="async-dev")["ProductionVariants"][0]
    assert variant.get("DesiredInstanceCount", variant.get("CurrentInstanceCount")) == 2
    targets = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    assert [(t["ResourceId"], t["MinCapacity"], t["MaxCapacity"]) for t in targets] == [("endpoint/async-dev/variant/AllTraffic", 1, 3)]
    assert [p["PolicyName"] for p in aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]] == policies_before
    assert aws.client("cloudwatch").describe_alarms()["MetricAlarms"] == alarms_before


# -- races for the other kinds: protection set between signals and action ------------------------------
# kind -> (function, signals module, seeder, "was it changed?") (the seeders: tests/helpers/contract_kits.py)
RACE_KINDS = {
    "endpoint": ("endpoint", "reaper.kinds.endpoint.signals", seed_endpoints, endpoint_changed),
    "fsx": ("fsx", "reaper.kinds.fsx.signals", seed_file_systems, file_system_changed),
    "training-job": ("training_job", "reaper.kinds.training_job.signals", seed_training_jobs, training_job_changed),
}


@pytest.mark.parametrize("protection", ["exempt", "production", "snoozed", "typo"])
@pytest.mark.parametrize("kind", sorted(RACE_KINDS))
def test_a_protective_tag_added_after_signals_wins_for_every_kind(aws, enforce, lambda_context, monkeypatch, kind, protection):
    # Given two resources the kind acts on at once (grace 0); one gets a protective tag after its
    # signals were read and before the action
    import importlib

    function, module_name, seed_kind, changed = RACE_KINDS[kind]
    now = datetime.now(UTC)
    arns = seed_kind(aws, now)
    module = importlib.import_module(module_name)
    real = module.signals
    tagging = aws.client("fsx" if kind == "fsx" else "sagemaker")

    def signals_then_tag(clients: Any, resources: Any, settings: Any, at: datetime, **kw: Any) -> Any:  # kw: log= (endpoint)
        read = real(clients, resources, settings, at, **kw)
        tags = [{"Key": k, "Value": v} for k, v in PROTECTIONS[protection].items()]
        if kind == "fsx":
            tagging.tag_resource(ResourceARN=arns["late-tag"], Tags=tags)
        else:
            tagging.add_tags(ResourceArn=arns["late-tag"], Tags=tags)
        return read

    monkeypatch.setattr(module, "signals", signals_then_tag)
    app = load_function(function)
    # When the sweep runs
    result = app.handler(event(f"{kind}-schedule.json"), lambda_context)
    # Then the late-tagged one is untouched and reported exempt; the other was acted on
    assert not changed(aws, arns, "late-tag")
    assert result["verdicts"]["exempt"] == 1, result
    ids = {name: arn.rsplit("/", 1)[-1] for name, arn in arns.items()}  # the name, or the file system id
    assert result["acted"] == [ids["plain"]] and changed(aws, arns, "plain"), result
    messages = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m["id"] == ids["late-tag"]]
    assert all(m["executed"] is False for m in messages)

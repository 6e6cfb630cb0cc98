"""MlflowReads=on, through the real mlflow function and `reaper plan`/`coverage` against moto (moto_ext/mlflow,
moto_ext/cloudtrail_lookup) and a stand-in of each tracking server's MLflow REST API (reaper_devkit.mlflow_api,
which checks every request's SigV4 signature for `sagemaker-mlflow`): an idle server warned, then stopped after
the grace and started again by `reaper restore` with its experiments; a busy one, one with a RUNNING run, one
whose UI was opened, an exempt, an updating and a production one kept; a read that fails, times out, is refused
or redirected is unknown, kept and counted in `reaper coverage`; without the opt-in nothing is read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper.handlers import handle_kind_event
from reaper.kinds.mlflow import tracking_api
from reaper_devkit import mlflow_api, seed_mlflow
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import cloudtrail_lookup
from reaper_devkit.moto_ext.mlflow import server_for
from reaper_devkit.template import default_conditions, function_actions
from tests.conftest import drain, event, load_function
from tests.helpers.mlflow_servers import warned_then_stopped
from tests.helpers.modes import enforce_mode

READS_ON = set(default_conditions()) | {"MlflowReadsOn"}


@pytest.fixture
def api() -> Iterator[mlflow_api.FakeMlflowApi]:
    with mlflow_api.serving() as fake:
        yield fake


@pytest.fixture
def fleet(sm: Any, api: mlflow_api.FakeMlflowApi, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("REAPER_MLFLOW_READS", "on")
    return seed_mlflow.reads_fleet(sm, datetime.now(UTC))


def by_name(aws: Any, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in drain(aws, env["REAPER_QUEUE_URL"]) if m.get("kind") == "mlflow"}


def hosts(api: mlflow_api.FakeMlflowApi) -> set[str]:
    return {h for h, _ in api.requests}


def test_an_idle_server_is_warned_then_stopped_after_the_grace_and_restored_with_its_experiments(
    aws, sm, fleet, api, deployed_env, lambda_context, monkeypatch
):
    # Given MlflowReads on, enforce, a 60-minute grace; when the scheduled sweep runs, the idle server is warned,
    # not stopped, and after the grace it is stopped
    app, later, calls = warned_then_stopped(sm, fleet, "ts-idle", lambda_context, monkeypatch)
    # the others untouched, through the function's grants with MlflowReads on
    assert calls.actions <= function_actions("MlflowFunction", READS_ON)
    assert "cloudtrail:LookupEvents" in calls.actions
    assert [p["TrackingServerName"] for op, p in calls.made if op == "StopMlflowTrackingServer"] == ["ts-idle"]
    assert seed_mlflow.status(sm, "ts-idle") in ("Stopping", "Stopped")
    for name in ("ts-busy", "ts-running", "ts-ui", "ts-exempt", "ts-prod"):
        assert seed_mlflow.status(sm, name) == "Created", name
    assert seed_mlflow.status(sm, "ts-updating") == "Updating"
    # When `reaper restore` is run for it
    assert main(["restore", "ts-idle"]) == 0
    # Then it is started with its experiments, and its MLflow API serves them again
    assert seed_mlflow.status(sm, "ts-idle") in ("Starting", "Started")
    assert seed_mlflow.experiments(sm, "ts-idle") == ["churn-v1", "churn-v2", "baseline"]
    seed_mlflow.status(sm, "ts-idle")  # Started
    reading = tracking_api.read_all(
        [tracking_api.Target("ts-idle", "us-east-1", f"https://{server_for('ts-idle').host}")],
        app.RUNTIME.clients("us-east-1").credentials(),
    )
    assert reading["ts-idle"].unreadable is None and reading["ts-idle"].experiments == 3
    # and the next sweep keeps it: it was just started (a restore is not undone by the next sweep)
    again = handle_kind_event(event("mlflow-schedule.json", id="after-restore"), "mlflow", app.RUNTIME, now=later + timedelta(minutes=5))
    assert again["acted"] == []


def test_the_busy_the_running_the_opened_the_exempt_the_updating_and_production_are_kept_and_say_why(
    aws, sm, fleet, api, deployed_env, lambda_context, monkeypatch
):
    enforce_mode(monkeypatch)
    result = load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)
    assert result["acted"] == ["ts-idle"]
    messages = by_name(aws, deployed_env)
    idle = messages["ts-idle"]
    assert idle["verdict"] == "act" and "no run started, ended or running" in idle["reason"] and "2 d" in idle["reason"]
    assert idle["hourly_usd"] is None  # unpriced, never $0
    assert "ts-busy" not in messages or messages["ts-busy"]["verdict"] == "keep"
    assert seed_mlflow.status(sm, "ts-busy") == "Created" and seed_mlflow.status(sm, "ts-running") == "Created"
    assert seed_mlflow.status(sm, "ts-ui") == "Created" and seed_mlflow.status(sm, "ts-exempt") == "Created"
    # the exempt, production and updating servers' MLflow APIs are never asked (IAM denies the first two too)
    never = {server_for(n).host for n in ("ts-exempt", "ts-prod", "ts-updating")}
    assert hosts(api) and not (hosts(api) & never)


def test_plan_says_why_each_is_kept_or_would_be_stopped(aws, sm, fleet, api, deployed_env, capsys):
    assert main(["plan", "--kind", "mlflow", "--region", "us-east-1", "--json"]) == 0
    rows = {r["id"]: r for r in map(json.loads, capsys.readouterr().out.splitlines()) if r.get("kind") == "mlflow"}
    assert rows["ts-idle"]["verdict"] == "act" and rows["ts-idle"]["executed"] is False
    assert rows["ts-busy"]["verdict"] == "keep" and "a run ended" in rows["ts-busy"]["reason"]
    assert rows["ts-running"]["verdict"] == "keep" and "long-training is RUNNING" in rows["ts-running"]["reason"]
    assert rows["ts-ui"]["verdict"] == "keep" and "MLflow UI was opened 2 h" in rows["ts-ui"]["reason"]
    assert rows["ts-exempt"]["verdict"] == "exempt" and rows["ts-prod"]["verdict"] in ("exempt", "keep")
    assert rows["ts-updating"]["verdict"] == "keep" and "Updating" in rows["ts-updating"]["reason"]


@pytest.mark.parametrize(
    ("how", "code"),
    [
        ("fail", "mlflow-api-unreachable"),
        ("hang", "mlflow-api-unreachable"),
        ("refuse", "mlflow-api-refused"),
        ("redirect", "mlflow-api-off-host"),
    ],
)
def test_a_read_that_fails_is_unknown_kept_and_counted_in_coverage(
    aws, sm, fleet, api, deployed_env, lambda_context, monkeypatch, capsys, how, code
):
    # Given the idle server's MLflow API misbehaving (a hang past a 1 s request timeout)
    monkeypatch.setattr(tracking_api, "REQUEST_TIMEOUT", 1.0)
    api.hang_seconds = 3.0
    api.misbehave("ts-idle", how)
    enforce_mode(monkeypatch)
    # When the function sweeps: it is kept, never stopped
    result = load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)
    assert result["acted"] == [] and seed_mlflow.status(sm, "ts-idle") == "Created"
    # and `reaper coverage` counts it under the failure's code
    assert main(["coverage", "--kind", "mlflow", "--region", "us-east-1", "--json"]) == 0
    assert code in capsys.readouterr().out
    # a redirect is never followed: no request went to any other host
    assert all(h.endswith(".us-east-1.experiments.sagemaker.aws") for h in hosts(api))


def test_a_url_off_sagemakers_mlflow_domain_is_never_requested(aws, sm, fleet, api, deployed_env, lambda_context, monkeypatch, capsys):
    server_for("ts-idle").url = "https://ts-idle.us-east-1.experiments.sagemaker.aws.collector.example.net"
    enforce_mode(monkeypatch)
    assert load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)["acted"] == []
    assert not [h for h in hosts(api) if "collector" in h]
    assert main(["coverage", "--kind", "mlflow", "--region", "us-east-1", "--json"]) == 0
    assert "mlflow-api-off-host" in capsys.readouterr().out


def test_requests_signed_for_another_service_are_refused_by_the_api(aws, sm, fleet, api, deployed_env, lambda_context, monkeypatch):
    # Given requests signed for `sagemaker` instead of `sagemaker-mlflow`: the stand-in refuses them, as AWS does
    monkeypatch.setattr(tracking_api, "SERVICE", "sagemaker")
    enforce_mode(monkeypatch)
    assert load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)["acted"] == []


def test_cloudtrail_refused_makes_every_read_server_unknown(aws, sm, fleet, api, deployed_env, lambda_context, monkeypatch, capsys):
    monkeypatch.setattr(cloudtrail_lookup, "refused", {"123456789012"})
    enforce_mode(monkeypatch)
    assert load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)["acted"] == []
    assert main(["coverage", "--kind", "mlflow", "--region", "us-east-1", "--json"]) == 0
    assert "mlflow-cloudtrail-unreadable" in capsys.readouterr().out


def test_without_the_opt_in_nothing_is_read_and_the_idle_server_is_unknown(
    aws, sm, fleet, api, deployed_env, lambda_context, monkeypatch, capsys
):
    monkeypatch.setenv("REAPER_MLFLOW_READS", "off")
    enforce_mode(monkeypatch)
    with recording() as calls:
        assert load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)["acted"] == []
    assert api.requests == [] and "cloudtrail:LookupEvents" not in calls.actions
    assert main(["coverage", "--kind", "mlflow", "--region", "us-east-1", "--json"]) == 0
    assert "mlflow-no-usage-signal" in capsys.readouterr().out


def test_the_sweeps_budget_bounds_the_reads_and_the_rest_are_not_reached(aws, sm, fleet, api):
    # Given every server's API hanging, one reader at a time, 1 s a request and 1.5 s for all
    api.hang_seconds = 3.0
    names = ("ts-idle", "ts-busy", "ts-running", "ts-ui")
    for name in names:
        api.misbehave(name, "hang")
    targets = [tracking_api.Target(n, "us-east-1", f"https://{server_for(n).host}") for n in names]
    # When they are read
    found = tracking_api.read_all(targets, aws.get_credentials().get_frozen_credentials(), workers=1, timeout=1.0, budget=1.5)
    # Then each is unknown, never idle: the first cut at its own deadline, the later ones not reached at all
    codes = sorted(r.unknown or "" for r in found.values())
    assert set(found) == set(names) and "mlflow-api-not-reached" in codes
    assert all(r.unreadable for r in found.values())

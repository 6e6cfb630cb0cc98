"""The mlflow function, called with events/mlflow-schedule.json against moto (moto_ext/mlflow): a forgotten
server past its kill date stopped after the grace and started again by `reaper restore` with its experiments;
a server in use (no evidence either way), an exempt one, an updating one and a production one kept; dry-run;
the running ones reported as unknown with their (un)priced cost in `reaper coverage`; the creation-time notice."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.cli.main import main
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed_mlflow
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import TABLE, drain, event, load_function
from tests.helpers.mlflow_servers import warned_then_stopped
from tests.helpers.modes import enforce_mode

CHANGING = {"sagemaker:StopMlflowTrackingServer", "sagemaker:StartMlflowTrackingServer", "sagemaker:AddTags", "sagemaker:DeleteTags"}


@pytest.fixture
def fleet(sm: Any) -> dict[str, str]:
    return seed_mlflow.fleet(sm, datetime.now(UTC))


def by_name(aws: Any, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in drain(aws, env["REAPER_QUEUE_URL"]) if m.get("kind") == "mlflow"}


def test_the_forgotten_server_is_warned_then_stopped_after_the_grace_and_restored_with_its_experiments(
    aws, sm, fleet, deployed_env, lambda_context, monkeypatch
):
    # Given the seeded account, enforce, a 60-minute grace; when the scheduled sweep runs, the server past its kill
    # date is warned, not stopped, and after the grace it is stopped
    _, _, calls = warned_then_stopped(sm, fleet, "ts-forgotten", lambda_context, monkeypatch)
    # the others untouched
    assert seed_mlflow.status(sm, "ts-forgotten") in ("Stopping", "Stopped")
    assert calls.actions <= function_actions("MlflowFunction")
    stops = [p["TrackingServerName"] for op, p in calls.made if op == "StopMlflowTrackingServer"]
    assert stops == ["ts-forgotten"]
    assert seed_mlflow.status(sm, "ts-busy") == "Created" and seed_mlflow.status(sm, "ts-exempt") == "Created"
    assert seed_mlflow.status(sm, "ts-updating") == "Updating" and seed_mlflow.status(sm, "ts-prod") == "Created"
    # When `reaper restore` is run for it
    with recording() as restore_calls:
        assert main(["restore", "ts-forgotten"]) == 0
    # Then it is started, with the experiments it had, through the restore function's grants only
    assert restore_calls.actions <= function_actions("RestoreFunction")
    assert seed_mlflow.status(sm, "ts-forgotten") in ("Starting", "Started")
    assert seed_mlflow.experiments(sm, "ts-forgotten") == ["churn-v1", "churn-v2"]
    # and a second restore starts nothing
    with recording() as again:
        assert main(["restore", "ts-forgotten"]) == 0
    assert not [op for op, _ in again.made if op == "StartMlflowTrackingServer"]


def test_the_stop_keeps_a_restore_record_and_a_deleted_server_is_not_brought_back(
    aws, sm, fleet, deployed_env, lambda_context, monkeypatch
):
    enforce_mode(monkeypatch)
    assert load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)["acted"] == ["ts-forgotten"]
    record = ActionLog(aws.client("dynamodb"), TABLE).latest_restore("mlflow", "ts-forgotten")
    assert record is not None and record["status"] == "reaped" and record["size"] == "Small"
    sm.delete_mlflow_tracking_server(TrackingServerName="ts-forgotten")  # an admin deleted it since
    with recording() as calls:
        assert main(["restore", "ts-forgotten"]) != 0
    assert not [op for op, _ in calls.made if op in ("StartMlflowTrackingServer", "CreateMlflowTrackingServer")]


def test_enforce_keeps_the_busy_exempt_updating_and_production_servers_and_says_why(
    aws, sm, fleet, deployed_env, lambda_context, monkeypatch
):
    enforce_mode(monkeypatch)
    result = load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)
    assert result["acted"] == ["ts-forgotten"]
    messages = by_name(aws, deployed_env)
    assert messages["ts-forgotten"]["verdict"] == "act" and messages["ts-forgotten"]["undo"].startswith("reaper restore ts-forgotten")
    busy = messages["ts-busy"]
    assert busy["verdict"] == "keep" and "AWS documents no evidence" in busy["reason"] and "unpriced" in busy["reason"]
    assert busy["hourly_usd"] is None  # never $0
    assert "ts-exempt" not in messages or messages["ts-exempt"]["verdict"] == "exempt"
    assert seed_mlflow.status(sm, "ts-updating") == "Updating" and seed_mlflow.status(sm, "ts-exempt") == "Created"


def test_dry_run_changes_nothing(aws, sm, fleet, deployed_env, lambda_context):
    with recording() as calls:
        result = load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)
    assert result["acted"] == []  # dry-run: "would stop", never executed
    assert not (calls.actions & CHANGING)
    would = by_name(aws, deployed_env)["ts-forgotten"]
    assert would["verdict"] == "act" and would["executed"] is False
    assert all(seed_mlflow.status(sm, n) in ("Created", "Updating") for n in fleet)


def test_plan_and_coverage_through_the_cli(aws, sm, fleet, deployed_env, capsys):
    assert main(["plan", "--kind", "mlflow", "--region", "us-east-1"]) == 0
    plan = capsys.readouterr().out
    assert "ts-forgotten" in plan and "ts-busy" in plan
    assert main(["coverage", "--kind", "mlflow", "--region", "us-east-1", "--json"]) == 0
    out = capsys.readouterr().out
    assert "mlflow-no-usage-signal" in out


def test_a_server_created_without_tags_is_told_once(aws, sm, deployed_env, lambda_context, monkeypatch):
    seed_mlflow.server(sm, "untagged-tracking", tags={})
    app = load_function("mlflow")
    results = [app.handler(event("mlflow-cloudtrail-create.json"), lambda_context) for _ in range(2)]
    assert results[0]["posted"] is True and results[1]["posted"] is False
    problems = " ".join(results[0]["problems"])
    assert all(f"no `{k}` tag" in problems for k in ("ml:owner", "ml:stage", "ml:project"))
    notices = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("type") == "notice"]
    assert len(notices) == 1 and "MLflow tracking server untagged-tracking was created" in notices[0]["title"]
    assert json.dumps(notices[0])

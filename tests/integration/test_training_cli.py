"""`reaper sweep --kind training-job` in-process under moto: the JSON contract, exit codes, what is stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.cli.main import main
from reaper_devkit.local_aws import local_account, session
from reaper_devkit.slack_receiver import SlackReceiver
from tests.helpers import training_fleet as fleet

REQUIRED = {"kind", "id", "arn", "region", "verdict", "action", "reason", "executed", "hourly_usd", "owner"}


# these tests hold the ceilings' behaviour: the admin opted in (tests/integration/conftest.py)
pytestmark = pytest.mark.usefixtures("default_ceilings_act")


def rows(out: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(line) for line in out.splitlines() if line.strip())}


def test_enforce_with_grace_zero_stops_exactly_the_jobs_past_a_ceiling_and_the_diverged(sm, jobs, capsys):
    # When the CLI sweeps the kind in enforce with no grace
    code = main(["sweep", "--kind", "training-job", "--mode", "enforce", "--grace-minutes", "0", "--json"])
    # Then it exits 0, prints one JSON object per job with the contract's fields, and stopped exactly those
    assert code == 0
    out = rows(capsys.readouterr().out)
    assert set(out) == {k for k in jobs if k not in ("hpo-001", "hpo-002")}
    assert all(set(r) >= REQUIRED for r in out.values())
    assert sorted(k for k, r in out.items() if r["executed"]) == fleet.STOPPED
    assert {k: r["verdict"] for k, r in out.items()} == {k: v for k, v in jobs.items() if k in out}
    assert out["costly"]["hourly_usd"] == 7.65 and out["costly"]["evidence"]["estimated_usd"] == pytest.approx(53.55, abs=0.05)
    assert out["gpu-starved"]["verdict"] == "keep" and "data loader" in out["gpu-starved"]["reason"]
    assert out["prod"]["verdict"] == "exempt" and "would stop" in out["prod"]["reason"]
    states = fleet.statuses(sm)
    assert all(states[k] == "Stopping" for k in fleet.STOPPED)
    assert all(states[k] == "InProgress" for k in fleet.RUNNING_AFTER)


def test_dry_run_changes_nothing_and_says_would(sm, jobs, capsys):
    assert main(["sweep", "--kind", "training-job", "--mode", "dry-run", "--json"]) == 0
    out = rows(capsys.readouterr().out)
    assert not any(r["executed"] for r in out.values())
    assert sorted(k for k, r in out.items() if r["verdict"] == "act") == fleet.STOPPED
    assert "Stopping" not in fleet.statuses(sm).values()


def test_plan_is_a_table_of_every_job(sm, jobs, capsys):
    assert main(["plan", "--kind", "training-job"]) == 0
    table = capsys.readouterr().out
    assert "would stop" in table and "runaway" in table and "gpu-starved" in table
    assert "Stopping" not in fleet.statuses(sm).values()


def test_a_throttled_stop_exits_1_and_every_job_is_still_printed(sm, jobs, capsys, monkeypatch):
    from botocore.client import BaseClient

    original = BaseClient._make_api_call

    def throttle_runaway(self: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        if operation == "StopTrainingJob" and params.get("TrainingJobName") == "runaway":
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, operation)
        return original(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", throttle_runaway)
    code = main(["sweep", "--kind", "training-job", "--mode", "enforce", "--grace-minutes", "0", "--json"])
    out = rows(capsys.readouterr().out)
    assert code == 1
    assert out["runaway"]["verdict"] == "error" and "ThrottlingException" in out["runaway"]["reason"]
    assert sorted(k for k, r in out.items() if r["executed"]) == sorted(set(fleet.STOPPED) - {"runaway"})


def test_a_bad_threshold_is_a_configuration_error(sm, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_DIVERGENCE_RATIO", "0.5")
    assert main(["sweep", "--kind", "training-job", "--json"]) == 2
    assert "divergence_ratio" in capsys.readouterr().err


@pytest.mark.slow
def test_the_installed_command_against_a_seeded_moto_server_stops_and_advises():
    # Given a seeded local moto server and a local Slack webhook (what `make demo` uses)
    with local_account(), SlackReceiver() as slack:
        s = session()
        fleet.seed(s, datetime.now(UTC))
        env = {k: v for k, v in os.environ.items() if not k.startswith("REAPER_")} | {
            "REAPER_SLACK_WEBHOOK_URL": slack.url,
            "REAPER_TRAINING_DEFAULT_CEILINGS_ACT": "true",
        }
        cmd = [sys.executable, "-m", "reaper", "sweep", "--kind", "training-job", "--mode", "enforce", "--grace-minutes", "0", "--json"]
        # When the real process sweeps in enforce with no grace
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        after = fleet.statuses(s.client("sagemaker"))
    # Then exactly the jobs past a ceiling and the diverged ones are stopping, and Slack heard of each
    assert done.returncode == 0, done.stderr
    assert sorted(k for k, r in rows(done.stdout).items() if r["executed"]) == fleet.STOPPED
    assert sorted(k for k, v in after.items() if v == "Stopping") == sorted([*fleet.STOPPED, "hpo-003"])
    assert all(after[k] == "InProgress" for k in fleet.RUNNING_AFTER)
    posted = " ".join(json.dumps(m) for m in slack.messages)
    assert all(f"`{k}`" in posted for k in fleet.STOPPED)
    advisory = [m for m in slack.messages if "gpu-starved" in json.dumps(m)]
    assert len(advisory) == 1 and "data loader" in json.dumps(advisory[0])

"""The `reaper` command line: in-process under moto, and as a real process against a moto server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from reaper.cli.main import main
from reaper_devkit import seed
from reaper_devkit.local_aws import local_account, session
from tests.conftest import TABLE

REQUIRED = {"kind", "id", "arn", "region", "verdict", "action", "reason", "executed", "hourly_usd", "owner"}


@pytest.fixture
def notebooks(sm, cw):
    now = datetime.now(UTC)
    seed.notebook(sm, "idle", {"ml:owner": "ana@example.com"})
    seed.activity(cw, "idle", now, [0] * 20)
    seed.notebook(sm, "busy", {"ml:owner": "ana@example.com"})
    seed.activity(cw, "busy", now, [1] + [0] * 19)
    seed.notebook(sm, "prod", {"ml:stage": "production"})
    seed.activity(cw, "prod", now, [0] * 20)


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def states(sm) -> dict[str, str]:
    return {n["NotebookInstanceName"]: n["NotebookInstanceStatus"] for n in sm.list_notebook_instances()["NotebookInstances"]}


def test_sweep_json_dry_run_changes_nothing(sm, notebooks, capsys):
    assert main(["sweep", "--kind", "notebook", "--mode", "dry-run", "--json"]) == 0
    rows = {r["id"]: r for r in lines(capsys.readouterr().out)}
    assert set(rows) == {"idle", "busy", "prod"}
    assert all(set(r) >= REQUIRED for r in rows.values())
    assert rows["idle"]["verdict"] == "act" and rows["idle"]["executed"] is False
    assert rows["prod"]["verdict"] == "exempt" and rows["busy"]["verdict"] == "keep"
    assert set(states(sm).values()) == {"InService"}


def test_enforce_with_grace_warns_first_and_without_grace_stops_exactly_the_idle(sm, notebooks, capsys):
    assert main(["sweep", "--kind", "notebook", "--mode", "enforce", "--json"]) == 0
    first = {r["id"]: r for r in lines(capsys.readouterr().out)}
    assert first["idle"]["verdict"] == "warn" and set(states(sm).values()) == {"InService"}
    assert main(["sweep", "--kind", "notebook", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    second = {r["id"]: r for r in lines(capsys.readouterr().out)}
    assert second["idle"]["executed"] is True
    assert states(sm) == {"idle": "Stopped", "busy": "InService", "prod": "InService"}


def test_plan_is_a_table_and_records_nothing(sm, notebooks, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(["plan", "--kind", "notebook"]) == 0
    out = capsys.readouterr().out
    assert "would stop" in out and "VERDICT" in out and "3 resources" in out
    assert main(["log", "--since", "1h", "--json"]) == 0
    assert capsys.readouterr().out.strip() == ""


def test_log_shows_what_a_sweep_recorded(sm, notebooks, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    main(["sweep", "--kind", "notebook", "--mode", "enforce", "--grace-minutes", "0", "--json"])
    capsys.readouterr()
    assert main(["log", "--since", "2h"]) == 0
    out = capsys.readouterr().out
    assert "act" in out and "idle" in out and "prod" in out and "busy" not in out


def test_an_error_verdict_exits_1_and_still_prints_every_resource(sm, notebooks, capsys, monkeypatch):
    from botocore.exceptions import ClientError

    def refuse(clients, resource):
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "DescribeNotebookInstance")

    monkeypatch.setattr("reaper.kinds.notebook.actions.current_state", refuse)
    assert main(["sweep", "--kind", "notebook", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 1
    rows = {r["id"]: r for r in lines(capsys.readouterr().out)}
    assert len(rows) == 3 and rows["idle"]["verdict"] == "error" and "AccessDenied" in rows["idle"]["reason"]
    assert states(sm)["idle"] == "InService"


@pytest.mark.parametrize(
    "argv,env,says",
    [
        (["sweep", "--kind", "printer"], {}, "invalid choice: 'printer'"),
        (["sweep", "--grace-minutes", "-5"], {}, "grace"),
        (["log", "--since", "yesterday"], {"REAPER_TABLE": TABLE}, "--since"),
        (["log"], {}, "REAPER_TABLE"),
        (["restore", "my-endpoint"], {}, "REAPER_TABLE"),
        (["sweep"], {"REAPER_MODE": "maybe"}, "mode"),
        (["sweep"], {"REAPER_TIMEZONE": "Nowhere/Land"}, "timezone"),
    ],
)
def test_bad_usage_or_configuration_exits_2_with_one_line(aws, argv, env, says, capsys, monkeypatch):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0]


def test_argparse_usage_errors_exit_2_on_one_line(capsys):
    assert main(["sweep", "--mode", "sometimes"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--mode" in err[0] and "sometimes" in err[0] and "Traceback" not in err[0]


def test_discovery_failure_is_an_error_not_silence(aws, capsys, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    from reaper.aws import tagging

    def broken(*a, **k):
        from botocore.exceptions import ClientError

        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "GetResources")

    monkeypatch.setattr(tagging, "tags_by_arn", broken)
    monkeypatch.setattr("reaper.kinds.notebook.discover.tags_by_arn", broken)
    assert main(["sweep", "--kind", "notebook", "--json"]) == 1
    (row,) = lines(capsys.readouterr().out)
    assert row["verdict"] == "error" and "ThrottlingException" in row["reason"]


@pytest.mark.slow
def test_the_installed_command_against_a_moto_server():
    # Given a seeded local moto server (what `make demo` uses)
    with local_account():
        s = session()
        now = datetime.now(UTC)
        seed.notebook(s.client("sagemaker"), "idle", {"ml:owner": "ana@example.com"})
        seed.activity(s.client("cloudwatch"), "idle", now, [0] * 15)
        seed.notebook(s.client("sagemaker"), "busy", {"ml:owner": "ana@example.com"})
        seed.activity(s.client("cloudwatch"), "busy", now, [1] * 15)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REAPER_")}
        cmd = [sys.executable, "-m", "reaper", "sweep", "--kind", "notebook", "--json"]
        # When the real process runs, dry-run then enforce
        dry = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        before = {
            n["NotebookInstanceName"]: n["NotebookInstanceStatus"]
            for n in s.client("sagemaker").list_notebook_instances()["NotebookInstances"]
        }
        act = subprocess.run([*cmd, "--mode", "enforce", "--grace-minutes", "0"], env=env, capture_output=True, text=True, timeout=120)
        after = {
            n["NotebookInstanceName"]: n["NotebookInstanceStatus"]
            for n in s.client("sagemaker").list_notebook_instances()["NotebookInstances"]
        }
    # Then dry-run changed nothing and enforce stopped exactly the idle one
    assert dry.returncode == 0, dry.stderr
    assert {r["id"]: r["verdict"] for r in lines(dry.stdout)} == {"idle": "act", "busy": "keep"}
    assert before == {"idle": "InService", "busy": "InService"}
    assert act.returncode == 0, act.stderr
    assert after == {"idle": "Stopped", "busy": "InService"}


def test_several_regions_in_one_sweep(aws, capsys):
    now = datetime.now(UTC)
    for region in ("us-east-1", "us-west-2"):
        sm, cw = aws.client("sagemaker", region_name=region), aws.client("cloudwatch", region_name=region)
        seed.notebook(sm, f"idle-{region}", {"ml:owner": "ana@example.com"})
        seed.activity(cw, f"idle-{region}", now, [0] * 15)
    assert main(["sweep", "--kind", "notebook", "--region", "us-east-1", "--region", "us-west-2", "--json"]) == 0
    rows = lines(capsys.readouterr().out)
    assert {(r["id"], r["region"], r["verdict"]) for r in rows} == {
        ("idle-us-east-1", "us-east-1", "act"),
        ("idle-us-west-2", "us-west-2", "act"),
    }


def test_log_lines_for_verdicts_and_notices():
    from reaper.cli.main import format_log_line
    from reaper.record.logentry import from_mapping

    act = {
        "logged_at": "2026-12-02T10:00:00Z",
        "verdict": "act",
        "action": "stop",
        "executed": False,
        "kind": "notebook",
        "id": "nb",
        "region": "us-east-1",
        "reason": "idle",
    }
    assert "would stop" in format_log_line(from_mapping(act)) and "notebook nb (us-east-1) — idle" in format_log_line(from_mapping(act))
    notice = {
        "type": "notice",
        "logged_at": "2026-12-02T10:00:00Z",
        "kind": "endpoint",
        "id": "ep",
        "region": "us-east-1",
        "title": "Restored",
        "text": "ep is InService",
    }
    line = format_log_line(from_mapping(notice))
    assert "notice" in line and "Restored: ep is InService" in line and "None" not in line


def test_log_line_for_a_cost_record():
    from reaper.cli.main import format_log_line
    from reaper.record.logentry import from_mapping

    line = format_log_line(
        from_mapping(
            {
                "type": "cost",
                "logged_at": "t",
                "action": "final-cost",
                "kind": "training-job",
                "id": "j",
                "region": "r",
                "reason": "est. $5",
            }
        )
    )
    assert line.split()[1] == "cost" and "est. $5" in line

"""The CLI's exit-code contract under a broken configuration: exit 2, one line naming what is wrong,
no traceback and no fake `*` rows; a closed pipe ends quietly."""

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
from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import one_line


@pytest.fixture
def idle_notebook(sm, cw):
    seed.notebook(sm, "idle", {"ml:owner": "ana@example.com"})
    seed.activity(cw, "idle", datetime.now(UTC), [0] * 20)


def test_no_credentials_is_exit_3_and_one_line_not_error_rows(aws, capsys, monkeypatch, tmp_path):
    # Given no credentials anywhere in the chain (no env keys, no files, no instance role)
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # When a sweep starts
    status = main(["sweep", "--kind", "notebook", "--json"])
    # Then it stops before any AWS call, with one line and the credentials' own status (not usage's 2)
    out, err = one_line(capsys)
    assert status == 3 and out == "" and "credentials" in err


def test_unknown_profile_is_exit_2_naming_the_profile(aws, capsys, monkeypatch, tmp_path):
    config = tmp_path / "config"
    config.write_text("[profile real]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_PROFILE", "typo")
    status = main(["plan", "--kind", "notebook"])
    out, err = one_line(capsys)
    assert status == 2 and out == "" and "'typo'" in err and "profile" in err


def test_missing_table_is_one_line_naming_it_with_the_init_command(aws, idle_notebook, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", "no-such-table")
    for argv in (["sweep", "--kind", "notebook"], ["log"], ["restore", "my-endpoint"], ["report"]):
        status = main(argv)
        out, err = one_line(capsys)
        assert status == 2 and out == "", argv
        assert "no-such-table" in err and "reaper init --table no-such-table" in err


@pytest.mark.parametrize("region", ["us-moon-1", "US-EAST-1", "useast1"])
def test_an_unknown_region_is_refused_at_once(aws, capsys, region):
    status = main(["sweep", "--kind", "notebook", "--region", region])
    out, err = one_line(capsys)
    assert status == 2 and out == "" and repr(region) in err


def test_an_unknown_region_from_the_environment_is_refused_too(aws, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_REGIONS", "us-east-1,eu-mars-2")
    assert main(["plan", "--kind", "notebook"]) == 2
    assert "'eu-mars-2'" in one_line(capsys)[1]


def test_a_real_region_in_another_partition_is_accepted(aws, capsys):
    assert main(["plan", "--kind", "notebook", "--region", "us-gov-west-1"]) in (0, 1)
    assert "unknown region" not in capsys.readouterr().err


def test_a_webhook_slack_refuses_is_said_once_per_message_and_exits_1(aws, idle_notebook, capsys, monkeypatch):
    # Given a webhook that answers 404 (a revoked or mistyped webhook)
    with SlackReceiver() as hook:
        hook.fail_with = 404
        monkeypatch.setenv("REAPER_SLACK_WEBHOOK_URL", hook.url)
        # When a dry-run sweep posts its "would stop" message
        status = main(["sweep", "--kind", "notebook", "--json"])
    captured = capsys.readouterr()
    # Then the failure is printed once, the resource is an error, and the status says so
    problems = [line for line in captured.err.splitlines() if "not posted" in line]
    assert len(problems) == 1, captured.err
    assert "Traceback" not in captured.err and hook.path not in captured.err
    (row,) = [json.loads(line) for line in captured.out.splitlines()]
    assert row["verdict"] == "error" and status == 1


def test_a_webhook_url_that_is_not_https_is_exit_2(aws, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_SLACK_WEBHOOK_URL", "hooks.slack.com/services/T/B/x")
    assert main(["sweep", "--kind", "notebook"]) == 2
    assert "https://" in one_line(capsys)[1]


@pytest.mark.parametrize("since", ["1000000w", "100000w", "401d", "99999999999999999999d", "0d"])
def test_since_out_of_range_is_one_line_not_a_traceback_or_a_hang(aws, table, capsys, monkeypatch, since):
    monkeypatch.setenv("REAPER_TABLE", table)
    for command in ("log", "report"):
        assert main([command, "--since", since]) == 2
        assert "--since" in one_line(capsys)[1]


def test_since_at_the_logs_retention_is_accepted(aws, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(["log", "--since", "400d"]) == 0
    assert "no actions logged" in capsys.readouterr().out


def test_restore_of_a_notebook_says_it_is_restarted_not_restored(aws, sm, table, capsys, monkeypatch):
    seed.notebook(sm, "nb", {"ml:owner": "ana@example.com"})
    sm.stop_notebook_instance(NotebookInstanceName="nb")
    monkeypatch.setenv("REAPER_TABLE", table)
    status = main(["restore", "nb"])
    _, err = one_line(capsys)
    assert status == 2
    assert "notebook" in err and "aws sagemaker start-notebook-instance --notebook-instance-name nb" in err
    assert "no restore record for endpoint" not in err


def test_restore_of_an_unknown_name_lists_what_can_be_restored(aws, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(["restore", "ghost"]) == 2
    err = one_line(capsys)[1]
    assert "endpoint" in err and "fsx" in err and "notebook" in err and "restarted" in err


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly():
    # Given the real command against a local account with something to print
    with local_account():
        now = datetime.now(UTC)
        for n in range(3):
            seed.notebook(session().client("sagemaker"), f"nb-{n}", {"ml:owner": "ana@example.com"})
            seed.activity(session().client("cloudwatch"), f"nb-{n}", now, [0] * 15)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REAPER_")}
        # When its reader has gone before it writes (as `reaper plan | head -0` would)
        proc = subprocess.Popen(
            [sys.executable, "-m", "reaper", "plan", "--kind", "notebook"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        err = proc.stderr.read().decode()
        status = proc.wait(timeout=120)
    # Then no traceback, and the status is the command's own
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert status == 0


def test_report_from_what_a_sweep_logged(aws, idle_notebook, table, capsys, monkeypatch):
    # Given an enforce sweep that stopped the idle notebook
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(["sweep", "--kind", "notebook", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    capsys.readouterr()
    # When the report is asked for, as JSON and as a table
    assert main(["report", "--since", "1h", "--by", "owner", "--json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(["report", "--by", "kind"]) == 0
    text = capsys.readouterr().out
    # Then the stop is counted for its owner, and the table names the kind
    assert row["owner"] == "ana@example.com" and row["resources"] == 1 and row["actions"] == 1
    assert row["saved_usd"] >= 0 and row["hours_off"] < 0.1
    assert "notebook" in text and "total: about $" in text


def test_report_of_a_dry_run_reclaims_nothing_and_says_what_would_have_been(aws, idle_notebook, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    main(["sweep", "--kind", "notebook", "--json"])
    capsys.readouterr()
    assert main(["report"]) == 0
    text = capsys.readouterr().out
    assert "nothing was reclaimed" in text and "1 resource(s) would have been acted on" in text


def test_plan_filters_by_verdict_and_owner(aws, sm, cw, capsys):
    now = datetime.now(UTC)
    for name, owner, activity in (
        ("idle-ana", "ana@example.com", [0] * 20),
        ("idle-bo", "bo@example.com", [0] * 20),
        ("busy-ana", "ana@example.com", [1] * 20),
    ):
        seed.notebook(sm, name, {"ml:owner": owner})
        seed.activity(cw, name, now, activity)
    assert main(["plan", "--kind", "notebook", "--json", "--verdict", "act", "--owner", "ana@example.com"]) == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == ["idle-ana"]
    assert main(["plan", "--kind", "notebook", "--owner", "bo@example.com"]) == 0
    out = capsys.readouterr().out
    assert "idle-bo" in out and "idle-ana" not in out and "OWNER" in out


@pytest.mark.slow
def test_the_real_command_says_a_refused_slack_message_once():
    # Given a local account with one idle notebook and a webhook that answers 404
    with local_account(), SlackReceiver() as hook:
        hook.fail_with = 404
        now = datetime.now(UTC)
        seed.notebook(session().client("sagemaker"), "idle", {"ml:owner": "ana@example.com"})
        seed.activity(session().client("cloudwatch"), "idle", now, [0] * 15)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REAPER_")}
        env["REAPER_SLACK_WEBHOOK_URL"] = hook.url
        # When the installed command sweeps (its stderr is a real stream, with no test logging in the way)
        done = subprocess.run(
            [sys.executable, "-m", "reaper", "sweep", "--kind", "notebook", "--json"], env=env, capture_output=True, text=True, timeout=120
        )
    # Then the refusal is one line, the resource is an error, and the status is 1
    refused = [line for line in done.stderr.splitlines() if "404" in line]
    assert len(refused) == 1, done.stderr
    assert [json.loads(line)["verdict"] for line in done.stdout.splitlines()] == ["error"]
    assert done.returncode == 1 and "Traceback" not in done.stderr

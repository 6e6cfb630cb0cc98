"""A new admin's hostile first hour with the CLI: values and situations the other CLI tests do not
try. Each is the contract's answer: exit 2 and one line for bad usage or configuration, no
traceback ever; a restore finds what was reaped under its name whichever kind claims that name."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from reaper.cli import main as cli
from reaper.cli.main import main
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed
from tests.conftest import one_line

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


# -- the action-log table's name -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["bad name!", "x", "ab", "", "t" * 256, "tåble", "a/b"])
def test_init_with_a_name_dynamodb_refuses_is_exit_2_before_any_call(aws, capsys, name):
    # Given a table name AWS would refuse (moto creates some of them: it is not the judge here)
    # When the admin runs `reaper init --table NAME`
    status = main(["init", "--table", name])
    # Then it is a usage error naming the flag, and no table was created
    out, err = one_line(capsys)
    assert status == 2 and out == ""
    assert err.startswith(f"reaper: --table {name!r}") and "3 to 255" in err
    assert aws.client("dynamodb").list_tables()["TableNames"] == []


def test_a_bad_table_name_in_the_environment_names_the_variable(aws, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", "my log")
    status = main(["log"])
    out, err = one_line(capsys)
    assert status == 2 and out == "" and "REAPER_TABLE" in err and "'my log'" in err


@pytest.mark.parametrize("name", ["abc", "mlreaper-ActionLogTable-1ABC2DEF", "a.b_c-d", "t" * 255])
def test_table_names_dynamodb_takes_are_accepted(aws, capsys, name):
    assert main(["init", "--table", name]) == 0
    assert f"export REAPER_TABLE={name}" in capsys.readouterr().out


def test_a_table_arn_is_accepted(aws, table, capsys, monkeypatch):
    # DynamoDB's data-plane calls take the table's ARN too (botocore's TableArn shape)
    monkeypatch.setenv("REAPER_TABLE", f"arn:aws:dynamodb:us-east-1:123456789012:table/{table}")
    assert main(["log"]) == 0
    assert "no actions logged" in capsys.readouterr().out


# -- restore: a name two kinds could hold ---------------------------------------------------------


def _endpoint_record(name: str) -> dict[str, object]:
    return {"name": name, "config_name": f"{name}-config", "type": "classic", "region": "us-east-1", "variants": [], "models": []}


def test_restore_of_an_endpoint_named_like_a_file_system_id_goes_to_the_endpoint(aws, table, capsys, monkeypatch):
    # Given a dev endpoint called `fs-0123abcd` (a legal endpoint name) that the reaper deleted
    ActionLog(aws.client("dynamodb"), table).put_restore("endpoint", "fs-0123abcd", _endpoint_record("fs-0123abcd"), NOW)
    monkeypatch.setenv("REAPER_TABLE", table)
    # When its owner runs the command the Slack message gave them
    status = main(["restore", "fs-0123abcd"])
    # Then the endpoint's restore runs (here it stops at the deleted config, and says so)
    _, err = one_line(capsys)
    assert status == 2
    assert "cannot restore endpoint fs-0123abcd: its endpoint configuration fs-0123abcd-config was deleted" in err
    assert "no restore record" not in err


def test_restore_of_a_file_system_id_still_goes_to_fsx(aws, table, capsys, monkeypatch):
    ActionLog(aws.client("dynamodb"), table).put_restore("fsx", "fs-0123abcd", {"method": "none", "region": "us-east-1"}, NOW)
    monkeypatch.setenv("REAPER_TABLE", table)
    status = main(["restore", "fs-0123abcd"])
    _, err = one_line(capsys)
    assert status == 2 and "tagged disposable: its data is gone" in err


def test_restore_of_a_name_with_records_in_two_kinds_asks_which(aws, table, capsys, monkeypatch):
    # Given restore records for an endpoint and a file system both called fs-0123abcd
    log = ActionLog(aws.client("dynamodb"), table)
    log.put_restore("endpoint", "fs-0123abcd", _endpoint_record("fs-0123abcd"), NOW)
    log.put_restore("fsx", "fs-0123abcd", {"method": "none", "region": "us-east-1"}, NOW)
    monkeypatch.setenv("REAPER_TABLE", table)
    # When restored without saying which, nothing is guessed
    assert main(["restore", "fs-0123abcd"]) == 2
    err = one_line(capsys)[1]
    assert "endpoint and fsx" in err and "--kind" in err
    # And --kind picks one
    assert main(["restore", "fs-0123abcd", "--kind", "endpoint"]) == 2
    assert "cannot restore endpoint fs-0123abcd" in one_line(capsys)[1]
    assert main(["restore", "fs-0123abcd", "--kind", "fsx"]) == 2
    assert "tagged disposable" in one_line(capsys)[1]


def test_restore_with_a_kind_that_does_not_restore_is_exit_2(aws, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    for kind in ("notebook", "spaceship"):
        assert main(["restore", "llm-dev", "--kind", kind]) == 2
        err = one_line(capsys)[1]
        assert f"--kind: invalid choice: {kind!r}" in err and "'endpoint', 'fsx'" in err


def test_restore_of_an_id_neither_kind_has_a_record_for_names_both(aws, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(["restore", "fs-0123abcd"]) == 2
    err = one_line(capsys)[1]
    assert "no restore record for 'fs-0123abcd' as endpoint or fsx" in err


# -- --since: odd forms ------------------------------------------------------------------------


@pytest.mark.parametrize("since", ["٧d", "７d", "1.5d", "7", "", " ", "7D", "-5d", "0m", "0w", "7 d", "7dd", "1e3m", "0x10m"])
def test_odd_since_forms_are_exit_2_with_one_line(aws, table, capsys, monkeypatch, since):
    monkeypatch.setenv("REAPER_TABLE", table)
    status = main(["log", f"--since={since}"])
    out, err = one_line(capsys)
    assert status == 2 and out == "" and "--since" in err


# -- output that cannot be written, and Ctrl-C ----------------------------------------------------


class _FullDisk(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")


def test_output_to_a_full_disk_is_one_line_exit_1(aws, table, capsys, monkeypatch):
    # Given a log with an entry, printed to a disk that is full
    ActionLog(aws.client("dynamodb"), table).put_restore("fsx", "fs-0123abcd", {"method": "none"}, NOW)
    monkeypatch.setenv("REAPER_TABLE", table)
    monkeypatch.setattr(sys, "stdout", _FullDisk())
    # When the report is printed
    status = main(["report", "--output", "csv"])
    # Then one line says why, and the status is an error, not success
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and err == ["reaper: cannot write the output: No space left on device"]


def test_ctrl_c_is_one_line_and_exit_130(aws, capsys, monkeypatch):
    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run", interrupted)
    status = main(["plan", "--kind", "notebook"])
    out, err = one_line(capsys)
    assert status == 130 and out == "" and err.startswith("reaper: interrupted;") and "action log" in err


@pytest.mark.slow
def test_sigint_during_a_real_sweep_ends_with_one_line(tmp_path):
    # Given the real command, its first AWS call waiting on an endpoint that never answers
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        silent.settimeout(60)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REAPER_", "AWS_"))}
        env.update(
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{silent.getsockname()[1]}",
            AWS_ACCESS_KEY_ID="k",
            AWS_SECRET_ACCESS_KEY="s",
            AWS_REGION="us-east-1",
            AWS_CONFIG_FILE=str(tmp_path / "none"),
            AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "reaper", "plan", "--kind", "notebook"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's Ctrl-C reaches it
        )
        # When Ctrl-C arrives while the sweep is in that call
        conn, _ = silent.accept()
        with conn:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
    # Then one line says so, exit 130 (128 + SIGINT), and no traceback
    assert proc.returncode == 130, err.decode()
    assert err.decode().splitlines() == [f"reaper: interrupted; {cli.INTERRUPTED}"]
    assert out == b""


# -- pip install . without the demo extra -----------------------------------------------------------


def test_demo_without_moto_names_the_extra_that_brings_it(capsys, monkeypatch):
    # Given an install without the `demo` extra: reaper_devkit is there, moto is not
    monkeypatch.setitem(sys.modules, "reaper_devkit.demo", None)  # importing it fails as without moto
    status = main(["demo"])
    out, err = one_line(capsys)
    assert status == 2 and out == ""
    assert "pip install 'mlreaper[demo]'" in err


# -- a kind or region named twice; a grace past any sane bound --------------------------------------


def test_a_kind_or_region_named_twice_is_swept_once(aws, sm, cw, capsys, monkeypatch):
    # Given two notebooks, and a plan asked for notebook twice in us-east-1 twice (and in the env)
    now = datetime.now(UTC)
    for name in ("nb-a", "nb-b"):
        seed.notebook(sm, name, {"ml:owner": "ana@example.com"})
        seed.activity(cw, name, now, [0] * 20)
    monkeypatch.setenv("REAPER_REGIONS", "us-east-1,US-EAST-1")
    status = main(["plan", "--kind", "notebook", "--kind", "notebook", "--region", "us-east-1", "--region", "us-east-1", "-o", "json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # Then each resource has one verdict: the contract's "one per resource per sweep"
    assert status == 0 and sorted(r["id"] for r in rows) == ["nb-a", "nb-b"]
    main(["plan", "--kind", "notebook", "--kind", "notebook"])
    assert "2 resources:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "env", "named"),
    [
        (["sweep", "--grace-minutes", "99999999999999999999"], {}, "--grace-minutes"),
        (["sweep", "--grace-minutes", "525601"], {}, "--grace-minutes"),
        (["plan"], {"REAPER_GRACE_MINUTES": "600000"}, "REAPER_GRACE_MINUTES"),
        (["plan"], {"REAPER_KIND_GRACE_MINUTES": "training-job=99999999999"}, "REAPER_KIND_GRACE_MINUTES"),
        (["plan"], {"REAPER_KIND_GRACE_MINUTES": "notebook=-1"}, "REAPER_KIND_GRACE_MINUTES"),
    ],
)
def test_a_grace_past_a_year_is_exit_2_not_an_overflow_at_the_warning(aws, capsys, monkeypatch, argv, env, named):
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    status = main([*argv, "--kind", "notebook"])
    out, err = one_line(capsys)
    assert status == 2 and out == "" and named in err and "525" in err


def test_the_longest_grace_still_computes_a_due_time():
    from reaper.core.model import Decision, Verdict
    from reaper.core.policy import apply_grace, read_tags
    from reaper.core.settings import MAX_GRACE_MINUTES, Settings

    settings = Settings()
    view = read_tags({"reaper:warned-at": "2026-12-01T00:00:00Z"}, settings)
    decided = apply_grace(Decision(Verdict.ACT, "idle", action="stop"), view, MAX_GRACE_MINUTES, NOW)
    assert decided.verdict is Verdict.WARN  # due a year after the warning: not yet, and no OverflowError


def test_the_templates_grace_parameters_stop_where_the_code_does():
    from reaper.core.settings import MAX_GRACE_MINUTES
    from reaper_devkit.template import load

    params = load()["Parameters"]
    assert params["GraceMinutes"]["MaxValue"] == params["TrainingGraceMinutes"]["MaxValue"] == MAX_GRACE_MINUTES


def test_a_webhook_url_with_no_host_says_so(aws, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_SLACK_WEBHOOK_URL", "https://")
    status = main(["sweep", "--kind", "notebook"])
    out, err = one_line(capsys)
    assert status == 2 and "names no host" in err and "scheme found: https" not in err

"""The CLI behaves like the AWS CLI: global options before or after the command, `--help` and `--version`
without loading boto3 or the kinds, and one exit status per kind of failure (0/1/2/3/4/130)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

from reaper.cli.debug import redact
from reaper.cli.exits import AWS_ERROR, CREDENTIALS, USAGE, exit_status
from reaper.cli.main import MAX_SINCE, main
from reaper.core.errors import ConfigError, CredentialsError, UsageError
from reaper.record.actionlog import LOG_TTL
from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import one_line

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("boto3", "botocore", "pydantic", "reaper.kinds", "reaper.core.settings", "reaper.wiring")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("layers/reaper", "devkit", "."))}


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["log", "--help"], ["--profile", "x", "plan", "--help"]])
def test_help_and_version_answer_without_loading_boto3_or_the_kinds(argv):
    # Given a fresh interpreter (what the console script is)
    code = (
        "import sys\nfrom reaper.cli.main import main\nstatus = main(sys.argv[1:])\n"
        f"print('LOADED', [m for m in {HEAVY!r} if m in sys.modules], status)"
    )
    # When it answers --help or --version
    done = subprocess.run([sys.executable, "-c", code, *argv], env=ENV, capture_output=True, text=True, timeout=120, check=True)
    # Then it answered, and none of the heavy modules was imported
    assert done.stdout.strip().splitlines()[-1] == "LOADED [] 0", done.stdout[-400:]
    assert "reaper" in done.stdout and not done.stderr


def test_python_dash_m_reaper_help_imports_no_boto3():
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "reaper", "--help"], env=ENV, capture_output=True, text=True, timeout=120
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert done.returncode == 0 and "usage: reaper" in done.stdout
    assert "reaper.cli.main" in imported and not {m for m in imported if m.split(".")[0] in ("boto3", "botocore", "pydantic")}


@pytest.mark.parametrize(
    "argv",
    [
        ["--profile", "typo", "--region", "eu-west-1", "log"],
        ["log", "--profile", "typo", "--region", "eu-west-1"],
        ["--profile", "typo", "report", "--region", "eu-west-1"],
        ["--region", "eu-west-1", "--profile", "typo", "restore", "my-endpoint"],
        ["--profile", "typo", "init", "--table", "t-1", "--region", "eu-west-1"],
        ["--profile", "typo", "coverage", "--region", "eu-west-1"],
        ["--profile", "typo", "plan"],
    ],
)
def test_global_options_go_before_or_after_every_command(aws, capsys, monkeypatch, tmp_path, argv):
    # Given an AWS config that has no profile `typo`
    config = tmp_path / "config"
    config.write_text("[profile real]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("REAPER_TABLE", "some-log")
    # When the command is given --profile (and --region) before or after its name
    status = main(argv)
    # Then both parsed, and the profile reached the session: the configuration error names it (exit 2)
    out, err = one_line(capsys)
    assert status == USAGE and out == "" and "'typo'" in err and "profile" in err, argv


def test_the_region_given_before_the_command_is_where_the_log_is_read(aws, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    # the table exists in us-east-1 only: asked in eu-west-1, it is not found there
    assert main(["--region", "eu-west-1", "log"]) == USAGE
    assert "eu-west-1" in one_line(capsys)[1]
    assert main(["--region", "us-east-1", "log", "--since", "400d"]) == 0
    assert "no actions logged" in capsys.readouterr().out


def test_output_goes_before_the_command_too_and_a_form_a_command_has_not_is_usage(aws, table, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", table)
    assert main(["--output", "csv", "log"]) == 0
    assert capsys.readouterr().out.startswith("logged_at,type,kind")
    assert main(["-o", "html", "log"]) == USAGE
    assert "--output html" in one_line(capsys)[1]
    assert main(["--output", "json", "restore", "x"]) == USAGE


def test_debug_logs_botocore_on_stderr_without_the_webhook_or_the_signature(aws, capsys, monkeypatch):
    # Given a webhook (whose URL is the credential to post) and static keys
    with SlackReceiver() as hook:
        monkeypatch.setenv("REAPER_SLACK_WEBHOOK_URL", hook.url)
        # When a sweep runs with --debug after the command
        status = main(["sweep", "--kind", "notebook", "--json", "--debug"])
    err = capsys.readouterr().err
    # Then botocore's debug lines are there, and no secret is
    assert status == 0 and "botocore" in err and "DEBUG" in err
    assert hook.url not in err and hook.path not in err
    assert "Signature=" not in err or "Signature=***" in err
    # And --debug ends with the command: the next one is quiet again
    assert logging.getLogger("botocore").level != logging.DEBUG
    assert main(["sweep", "--kind", "notebook", "--json"]) == 0
    assert "DEBUG" not in capsys.readouterr().err


def test_redaction_of_webhooks_tokens_and_headers():
    line = (
        "POST https://hooks.slack.com/services/T0/B0/secretpart headers={'Authorization': b'AWS4-HMAC-SHA256 "
        "Credential=AKIA/x, SignedHeaders=host, Signature=abc123', 'X-Amz-Security-Token': b'tok'} xoxb-1-2-abc"
    )
    said = redact(line, ("tok",))
    for secret in ("secretpart", "abc123", "AWS4-HMAC", "xoxb-1-2-abc", "'tok'"):
        assert secret not in said, secret
    assert "hooks.slack.com/***" in said


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (UsageError("x"), USAGE),
        (ConfigError("x"), USAGE),
        (CredentialsError("x"), CREDENTIALS),
        (NoCredentialsError(), CREDENTIALS),
        (ClientError({"Error": {"Code": "ExpiredTokenException", "Message": "expired"}}, "Query"), CREDENTIALS),
        (ClientError({"Error": {"Code": "InvalidClientTokenId", "Message": "no such key"}}, "Query"), CREDENTIALS),
        (ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "Query"), AWS_ERROR),
        (ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "Query"), AWS_ERROR),
        (EndpointConnectionError(endpoint_url="https://x"), AWS_ERROR),
    ],
)
def test_each_failure_has_its_own_exit_status(exc, status):
    assert exit_status(exc)[0] == status


def test_a_bug_is_not_swallowed_into_an_exit_status():
    assert exit_status(ValueError("a bug")) == (None, "")


def test_an_aws_error_that_stops_a_command_is_exit_4_in_one_line(aws, capsys, monkeypatch):
    # Given DynamoDB throttling the table's creation
    from reaper.record import actionlog

    def throttled(*args, **kwargs):
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "CreateTable")

    monkeypatch.setattr(actionlog, "create_table", throttled)
    # When `reaper init` runs
    status = main(["init", "--table", "t-1"])
    # Then it is exit 4 (not usage's 2, not a resource's 1), one line naming the error
    out, err = one_line(capsys)
    assert status == AWS_ERROR and out == "" and "ThrottlingException" in err


def test_expired_credentials_are_exit_3(aws, capsys, monkeypatch):
    from reaper.record import actionlog

    def expired(*args, **kwargs):
        raise ClientError({"Error": {"Code": "ExpiredTokenException", "Message": "expired"}}, "CreateTable")

    monkeypatch.setattr(actionlog, "create_table", expired)
    assert main(["init", "--table", "t-1"]) == CREDENTIALS
    assert "ExpiredTokenException" in one_line(capsys)[1]


def test_the_since_limit_is_the_logs_retention():
    assert MAX_SINCE == LOG_TTL


def test_json_before_the_command_is_refused_as_usage(capsys):
    # --json stays the command's own alias; before the command it is an unknown flag (usage, one line)
    assert main(["--json", "plan"]) == USAGE

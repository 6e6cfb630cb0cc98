"""`make deploy` (scripts/deploy.py): a few questions with defaults, the rest from samconfig.toml, then SAM.

On a machine without AWS credentials it stops at once in one line (exit 3), before any question
or build; with them it saves the stack name and region to samconfig.toml's default environment.
It never runs `sam deploy --guided`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "deploy.py"


def run(*args: str, answers: str = "\n\n\n", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], input=answers, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT
    )


def questions(output: str) -> int:
    return output.count("? ")


def sam_cli() -> str:
    """The SAM CLI `make test` made (.venv-sam), else the one on PATH."""
    for candidate in (ROOT / ".venv-sam" / "bin" / "sam", Path(sys.prefix).parent / ".venv-sam" / "bin" / "sam"):
        if candidate.exists():
            return str(candidate)
    found = shutil.which("sam")
    assert found, "no SAM CLI: `make sam-venv` makes .venv-sam"
    return found


def test_enter_everywhere_deploys_the_samconfig_defaults_in_dry_run_without_slack():
    # Given an admin who presses Enter at every question
    done = run("--dry-run", "--sam", "sam")
    # Then three questions were asked and the deploy command carries the defaults
    assert done.returncode == 0, done.stderr
    assert questions(done.stdout) == 3
    deploy = next(line for line in done.stdout.splitlines() if line.startswith("$ sam deploy"))
    for part in (
        "--stack-name mlreaper",
        "--region",
        "--capabilities CAPABILITY_IAM",
        "--resolve-s3",
        "Mode=dry-run",
        "SlackWebhookUrl=none",
    ):
        assert part in deploy
    assert "--guided" not in done.stdout and "Mode=dry-run" in done.stdout.split("$ ")[0]


def test_the_answers_go_into_the_command_and_the_webhook_is_never_printed():
    url = "https://hooks.slack.com/services/T0/B0/secretpart"
    done = run("--dry-run", "--sam", "sam", answers=f"team-reaper\neu-west-1\n{url}\n")
    assert done.returncode == 0, done.stderr
    deploy = next(line for line in done.stdout.splitlines() if line.startswith("$ sam deploy"))
    assert "--stack-name team-reaper" in deploy and "--region eu-west-1" in deploy and "SlackWebhookUrl=****" in deploy
    assert "secretpart" not in done.stdout + done.stderr


def test_a_bad_answer_is_asked_again_and_three_bad_answers_stop_with_nothing_run():
    again = run("--dry-run", "--sam", "sam", answers="1bad name\nok-name\n\n\n")
    assert again.returncode == 0 and "--stack-name ok-name" in again.stdout and questions(again.stdout) == 4
    refused = run("--dry-run", "--sam", "sam", answers="\nmoon\nmoon\nmoon\n")
    assert refused.returncode != 0 and "$ " not in refused.stdout and "AWS region" in refused.stderr


def fake_sam(tmp_path: Path) -> tuple[str, Path]:
    """A `sam` that records each call (one line of arguments) and succeeds."""
    calls = tmp_path / "sam-calls.txt"
    sam = tmp_path / "sam"
    sam.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexit 0\n')
    sam.chmod(0o755)
    return str(sam), calls


def no_credentials(tmp_path: Path) -> dict[str, str]:
    """A machine with no AWS credentials at all: no variables, files or instance metadata."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
    }


def test_without_credentials_it_says_so_in_one_line_and_exits_3_before_any_question_or_build(tmp_path):
    # Given a machine without AWS credentials and a SAM CLI that records what it is asked to do
    sam, calls = fake_sam(tmp_path)
    config = tmp_path / "samconfig.toml"
    config.write_text((ROOT / "samconfig.toml").read_text())
    # When the admin runs the deploy
    done = run("--sam", sam, "--config", str(config), env=no_credentials(tmp_path))
    # Then one line says why, the exit status is 3, nothing was asked, built or saved
    assert done.returncode == 3, done.stdout + done.stderr
    said = (done.stdout + done.stderr).strip().splitlines()
    assert len(said) == 1 and "no AWS credentials" in said[0]
    assert questions(done.stdout) == 0 and not calls.exists()
    assert config.read_text() == (ROOT / "samconfig.toml").read_text()


def test_with_credentials_the_answers_are_saved_so_a_plain_sam_deploy_reuses_them(tmp_path):
    # Given credentials STS accepts (a local moto server answers GetCallerIdentity) and a recording SAM CLI
    from reaper_devkit.local_aws import FAKE_ENV, local_account

    sam, calls = fake_sam(tmp_path)
    config = tmp_path / "samconfig.toml"
    config.write_text((ROOT / "samconfig.toml").read_text())
    url = "https://hooks.slack.com/services/T0/B0/secretpart"
    with local_account() as endpoint:
        env = no_credentials(tmp_path) | FAKE_ENV | {"AWS_ENDPOINT_URL_STS": endpoint}
        # When the admin answers a stack name, a region and a webhook
        done = run("--sam", sam, "--config", str(config), answers=f"team-reaper\neu-west-1\n{url}\n", env=env)
    # Then SAM built and deployed that stack
    assert done.returncode == 0, done.stdout + done.stderr
    build, deploy = calls.read_text().splitlines()
    assert build.startswith("build") and "--stack-name team-reaper --region eu-west-1" in deploy
    # and samconfig.toml's default environment now names them for a plain `sam deploy` (never the webhook)
    saved = tomllib.loads(config.read_text())["default"]
    assert saved["deploy"]["parameters"]["stack_name"] == "team-reaper"
    assert saved["deploy"]["parameters"]["region"] == "eu-west-1"
    assert saved["deploy"]["parameters"]["parameter_overrides"] == 'Mode="dry-run" GraceMinutes="60"'
    assert "secretpart" not in config.read_text() and "secretpart" not in done.stdout + done.stderr
    # and a second run offers the saved answers as its defaults
    with local_account() as endpoint:
        again = run("--sam", sam, "--config", str(config), env=env | {"AWS_ENDPOINT_URL_STS": endpoint})
    assert again.returncode == 0 and "[team-reaper]" in again.stdout and "[eu-west-1]" in again.stdout


@pytest.mark.slow
def test_with_the_real_sam_cli_and_no_credentials_nothing_is_built(tmp_path):
    # Given the SAM CLI `make deploy` uses, and no credentials
    env = no_credentials(tmp_path) | {"SAM_CLI_TELEMETRY": "0"}
    done = run("--sam", sam_cli(), "--build-dir", str(tmp_path / "build"), env=env)
    # Then it stops at once (exit 3), before any question, and builds nothing
    assert done.returncode == 3 and questions(done.stdout) == 0
    assert not (tmp_path / "build").exists()

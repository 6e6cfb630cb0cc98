"""`make deploy` (scripts/deploy.py): a few questions with defaults, the rest from samconfig.toml, then SAM.

On a machine without AWS credentials it asks at most 5 questions, builds, and stops at SAM's
"Unable to locate credentials"; it never runs `sam deploy --guided` (56 questions).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "deploy.py"
MAX_QUESTIONS = 5


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


@pytest.mark.slow
def test_without_credentials_it_asks_at_most_five_questions_then_sam_says_so(tmp_path):
    # Given a machine with no AWS credentials at all (no variables, files or instance metadata)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SAM_CLI_TELEMETRY": "0",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
    }
    # When the admin runs the deploy and presses Enter at each question
    done = run("--sam", sam_cli(), "--build-dir", str(tmp_path / "build"), env=env)
    out = done.stdout + done.stderr
    # Then the build ran, and the deploy stopped at the credentials after at most 5 questions
    assert "Unable to locate credentials" in out, out[-3000:]
    assert questions(out.split("Unable to locate credentials")[0]) <= MAX_QUESTIONS
    assert (tmp_path / "build" / "template.yaml").exists() and done.returncode != 0

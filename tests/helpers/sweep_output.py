"""What a sweep leaves where a person or a log can read it, in one text, for tests that hold a secret out of all of it."""

from __future__ import annotations

import json
from collections.abc import Iterable

import boto3
import pytest

from reaper.core.model import Outcome
from tests.conftest import drain


def everything_seen(
    aws: boto3.session.Session,
    deployed_env: dict[str, str],
    outcomes: Iterable[Outcome],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> str:
    """The outcomes as the CLI prints them, the messages queued for Slack (drained), the action log's items,
    the log records and what was printed to stdout and stderr."""
    printed = json.dumps([o.to_json() for o in outcomes], default=str)
    posted = json.dumps(drain(aws, deployed_env["REAPER_QUEUE_URL"]))
    items = aws.client("dynamodb").scan(TableName=deployed_env["REAPER_TABLE"])["Items"]
    captured = capsys.readouterr()
    return "\n".join([printed, posted, json.dumps(items), caplog.text, captured.out, captured.err])

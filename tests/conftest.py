"""Shared fixtures: a moto account, the action log, the queue, handler loading, call recording."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

# Before any boto3 client exists: fake credentials, one region, and no REAPER_* from the shell.
for var in [v for v in os.environ if v.startswith(("REAPER_", "AWS_"))]:
    del os.environ[var]
# pytest-xdist workers set COLUMNS=80; the CLI's table (120 columns off a terminal, COLUMNS if set)
# must not be narrower under -n than in one process
os.environ.pop("COLUMNS", None)
os.environ.update(
    AWS_ACCESS_KEY_ID="testing",
    AWS_SECRET_ACCESS_KEY="testing",
    AWS_DEFAULT_REGION="us-east-1",
    AWS_REGION="us-east-1",
    POWERTOOLS_METRICS_NAMESPACE="MLReaper",
    POWERTOOLS_SERVICE_NAME="mlreaper-test",
    # moto's EC2 backend otherwise builds ~50,000 default AMIs, with snapshots and volumes, for
    # every region at every reset; no test uses them (the FSx tests need only subnets and groups)
    MOTO_EC2_LOAD_DEFAULT_AMIS="false",
)

import boto3  # noqa: E402
import pytest  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from moto import mock_aws  # noqa: E402

from reaper.kinds.ec2 import catalog  # noqa: E402
from reaper.record.actionlog import create_table  # noqa: E402
from reaper_devkit import boto_models, local_aws, moto_ext  # noqa: E402
from tests.helpers.modes import enforce_mode  # noqa: E402

moto_ext.apply()
boto_models.share()

pytest_plugins = ["tests.plugins.aws_shapes"]  # every request and mock answer held to botocore's model

ROOT = Path(__file__).resolve().parent.parent
REGION = "us-east-1"
TABLE = "mlreaper-test-log"


@pytest.fixture(scope="session", autouse=True)
def one_moto_server() -> Iterator[None]:
    """One moto server per test run (per xdist worker): every local_account() in a test reuses
    it, reset through /moto-api/reset, instead of starting its own."""
    with local_aws.kept_server():
        yield


@pytest.fixture
def aws() -> Iterator[boto3.session.Session]:
    with mock_aws():
        yield boto3.session.Session(region_name=REGION)


@pytest.fixture
def sm(aws: boto3.session.Session) -> Any:
    return aws.client("sagemaker")


@pytest.fixture
def cw(aws: boto3.session.Session) -> Any:
    return aws.client("cloudwatch")


@pytest.fixture
def table(aws: boto3.session.Session) -> str:
    create_table(aws.client("dynamodb"), TABLE)
    return TABLE


@pytest.fixture
def queue(aws: boto3.session.Session) -> str:
    url: str = aws.client("sqs").create_queue(QueueName="mlreaper-notify")["QueueUrl"]
    return url


def drain(session: boto3.session.Session, queue_url: str) -> list[dict[str, Any]]:
    """Every message on the queue (the payloads the notifier would post), removed."""
    sqs = session.client("sqs")
    out: list[dict[str, Any]] = []
    while True:
        msgs = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
        if not msgs:
            return out
        for m in msgs:
            out.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])


@pytest.fixture
def deployed_env(table: str, queue: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment template.yaml gives a sweep function (dry-run by default)."""
    env = {"REAPER_TABLE": table, "REAPER_QUEUE_URL": queue, "REAPER_MODE": "dry-run"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


@pytest.fixture
def ec2(aws: boto3.session.Session) -> Any:
    return aws.client("ec2")


@pytest.fixture
def fresh_ec2_catalog() -> None:
    """Each moto account starts empty: the per-process EC2 instance-type catalogue must not leak between tests."""
    catalog.forget()


@pytest.fixture
def enforce(deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The deployed environment in enforce, grace 0: a sweep acts on what it finds reapable at once."""
    enforce_mode(monkeypatch, 0)
    return deployed_env


def load_function(name: str) -> ModuleType:
    """Import functions/<name>/app.py afresh (its cold start reads the environment)."""
    path = ROOT / "functions" / name / "app.py"
    module_name = f"fn_{name.replace('-', '_')}_app"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def event(name: str, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "events" / name).read_text())
    data.update(overrides)
    return data


class LambdaContext:
    function_name = "test"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:test"
    aws_request_id = "req-1"


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()


def throttle(monkeypatch: pytest.MonkeyPatch, client: Any, method: str, when: dict[str, Any] | None = None) -> None:
    """Make `client.method` answer ThrottlingException (for calls whose parameters include `when`;
    every call when it is None), after botocore's own retries would have given up."""
    original = getattr(client, method)
    operation = client.meta.method_to_api_mapping.get(method, method)

    def throttled(**kwargs: Any) -> Any:
        if when is None or all(kwargs.get(k) == v for k, v in when.items()):
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, operation)
        return original(**kwargs)

    monkeypatch.setattr(client, method, throttled)


def one_line(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """(stdout, the one line on stderr) of a CLI call that must fail in one line, without a traceback."""
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1, captured.err
    assert "Traceback" not in captured.err
    return captured.out, err[0]

"""The activity agent that the lifecycle configuration installs: run for real against a fake
Jupyter server, with publishing replaced by printing (MLREAPER_DRY)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from reaper_devkit.local_aws import local_account
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import embed_agent  # noqa: E402

AGENT = ROOT / "agent" / "activity_agent.py"


def test_template_embeds_the_agent_as_it_is_in_the_repo():
    _, _, embedded = embed_agent.embedded((ROOT / "template.yaml").read_text())
    assert embedded == AGENT.read_text(), "run scripts/embed_agent.py after editing agent/activity_agent.py"


def test_agent_cannot_break_cloudformation_sub():
    assert "${" not in AGENT.read_text()


@pytest.fixture
def jupyter() -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"kernels": [], "terminals": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            key = self.path.rsplit("/", 1)[-1]
            body = json.dumps(state.get(key, [])).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()


def agent_env(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"ResourceName": "nb-1", "ResourceArn": "arn:aws:sagemaker:eu-west-1:1:notebook-instance/nb-1"}))
    state = tmp_path / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    return {"MLREAPER_JUPYTER_URL": url, "MLREAPER_DRY": "1", "MLREAPER_METADATA": str(meta),
            "MLREAPER_STATE_DIR": str(state), "MLREAPER_CPU_PERCENT": "101", "PATH": "/usr/bin:/bin", **extra}


def run_agent(tmp_path: Path, url: str, **extra: str) -> list[dict[str, Any]]:
    """The agent as cron runs it: isolated mode, no site-packages (-I -S)."""
    out = subprocess.run([sys.executable, "-I", "-S", str(AGENT)], env=agent_env(tmp_path, url, **extra),
                         capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def stamp(minutes_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat().replace("+00:00", "Z")


def test_busy_kernel_is_active(jupyter, tmp_path):
    jupyter["kernels"] = [{"execution_state": "busy", "last_activity": stamp(50)}]
    assert run_agent(tmp_path, jupyter["url"]) == [{"NotebookInstanceName": "nb-1", "region": "eu-west-1", "value": 1}]


def test_recent_kernel_or_terminal_activity_is_active(jupyter, tmp_path):
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(2)}]
    assert run_agent(tmp_path, jupyter["url"])[0]["value"] == 1
    jupyter["kernels"] = []
    jupyter["terminals"] = [{"name": "1", "last_activity": stamp(1)}]
    assert run_agent(tmp_path, jupyter["url"])[0]["value"] == 1


def test_nothing_recent_is_idle(jupyter, tmp_path):
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    jupyter["terminals"] = [{"name": "1", "last_activity": stamp(90)}]
    assert run_agent(tmp_path, jupyter["url"])[0]["value"] == 0


def test_unreadable_jupyter_publishes_nothing(tmp_path):
    assert run_agent(tmp_path, "http://127.0.0.1:9") == []



def test_idle_with_cpu_use_unknown_publishes_nothing(jupyter, tmp_path):
    # Given nothing active in Jupyter, and a state directory the agent refuses (others can write it)
    agent_env(tmp_path, jupyter["url"])
    (tmp_path / "state").chmod(0o777)
    # Then no datapoint: CPU use could not be compared, and unknown is never idle
    assert run_agent(tmp_path, jupyter["url"]) == []
    # while an active notebook is still reported active
    jupyter["kernels"] = [{"execution_state": "busy"}]
    assert run_agent(tmp_path, jupyter["url"])[0]["value"] == 1

# ---- publishing: SigV4 by hand, credentials from IMDSv2 ---------------------------------------


def load_agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("activity_agent", AGENT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("token", [None, "session-token"])
def test_signature_is_the_one_botocore_computes(token):
    # Given the agent's signer and botocore's SigV4Auth on the same request at the same second
    agent = load_agent()
    url, body = "https://monitoring.eu-west-1.amazonaws.com/", b"Action=PutMetricData&Version=2010-08-01&Namespace=MLReaper"
    headers = agent.sign(url, body, "eu-west-1", ("AKIDEXAMPLE", "secret/key+1", token), "20240102T030405Z")

    request = AWSRequest(method="POST", url=url, data=body, headers={"content-type": headers["content-type"]})
    frozen = datetime(2024, 1, 2, 3, 4, 5)
    with mock.patch("botocore.auth.get_current_datetime", return_value=frozen):
        SigV4Auth(Credentials("AKIDEXAMPLE", "secret/key+1", token), "monitoring", "eu-west-1").add_auth(request)

    # Then the Authorization headers are identical
    assert headers["authorization"] == request.headers["Authorization"]
    assert headers.get("x-amz-security-token") == request.headers.get("X-Amz-Security-Token")


@pytest.fixture
def imds() -> Iterator[dict[str, Any]]:
    """IMDSv2: a session token from PUT, required on every GET."""
    seen: dict[str, Any] = {"gets_without_token": 0}
    creds = {"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "s3cr3t", "Token": "tok"}

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:  # noqa: N802
            assert self.path == "/latest/api/token" and self.headers["X-aws-ec2-metadata-token-ttl-seconds"]
            self._answer(200, b"imds-session")

        def do_GET(self) -> None:  # noqa: N802
            if self.headers.get("X-aws-ec2-metadata-token") != "imds-session":
                seen["gets_without_token"] += 1
                return self._answer(401, b"")
            base = "/latest/meta-data/iam/security-credentials/"
            if self.path == base:
                return self._answer(200, b"BaseNotebookInstanceEc2InstanceRole")
            if self.path == base + "BaseNotebookInstanceEc2InstanceRole":
                return self._answer(200, json.dumps(creds).encode())
            return self._answer(404, b"")

        def _answer(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    seen["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    yield seen
    server.shutdown()



def test_publishes_to_cloudwatch_with_the_instance_role(jupyter, imds, tmp_path):
    # Given an idle notebook, IMDSv2 and a local CloudWatch (moto's server)
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    with local_account() as endpoint:
        env = agent_env(tmp_path, jupyter["url"], MLREAPER_IMDS_URL=imds["url"], MLREAPER_CLOUDWATCH_URL=endpoint + "/")
        del env["MLREAPER_DRY"]
        # When the agent runs twice as cron runs it (the second run has a CPU sample to compare)
        for _ in range(2):
            subprocess.run([sys.executable, "-I", "-S", str(AGENT)], env=env, capture_output=True, text=True, timeout=60, check=True)
        # Then MLReaper/NotebookActivity for nb-1 is in CloudWatch, value 0
        cw = boto3.client("cloudwatch", region_name="eu-west-1", endpoint_url=endpoint)
        [metric] = cw.list_metrics(Namespace="MLReaper")["Metrics"]
        assert metric["MetricName"] == "NotebookActivity"
        assert metric["Dimensions"] == [{"Name": "NotebookInstanceName", "Value": "nb-1"}]
        stats = cw.get_metric_statistics(
            Namespace="MLReaper", MetricName="NotebookActivity", Dimensions=metric["Dimensions"],
            StartTime=datetime.now(UTC) - timedelta(hours=1), EndTime=datetime.now(UTC) + timedelta(minutes=5),
            Period=3600, Statistics=["Maximum", "SampleCount"],
        )["Datapoints"]
        assert [(d["Maximum"], d["SampleCount"]) for d in stats] == [(0.0, 2.0)]
    assert imds["gets_without_token"] == 0


def test_a_refused_publish_says_why_in_the_log(jupyter, imds, tmp_path):
    # Given CloudWatch answering AccessDenied (the role lacks cloudwatch:PutMetricData)
    class Deny(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.send_response(403)
            self.end_headers()
            self.wfile.write(b"<Error><Code>AccessDenied</Code></Error>")

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Deny)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = agent_env(tmp_path, jupyter["url"], MLREAPER_IMDS_URL=imds["url"],
                        MLREAPER_CLOUDWATCH_URL=f"http://127.0.0.1:{server.server_address[1]}/")
        del env["MLREAPER_DRY"]
        out = subprocess.run([sys.executable, "-I", "-S", str(AGENT)], env=env, capture_output=True, text=True, timeout=60, check=False)
    finally:
        server.shutdown()
    # Then the run fails and the agent log names the refusal (and no secret)
    assert out.returncode != 0
    assert "PutMetricData failed: HTTP 403" in out.stderr and "AccessDenied" in out.stderr
    assert "s3cr3t" not in out.stderr + out.stdout

"""The activity agent that the lifecycle configuration installs: run for real against a fake
Jupyter server, with publishing replaced by printing (MLREAPER_DRY)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import parse_qsl

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.serialize import create_serializer
from botocore.validate import ParamValidator

from reaper_devkit.local_aws import local_account
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import embed_agent  # noqa: E402

from tests.helpers.activity_agent import AGENT, agent_env, load_agent
from tests.helpers.http import QuietHandler, serving


def test_template_embeds_the_agent_as_it_is_in_the_repo():
    _, _, embedded = embed_agent.embedded((ROOT / "template.yaml").read_text())
    assert embedded == AGENT.read_text(), "run scripts/embed_agent.py after editing agent/activity_agent.py"


def test_agent_cannot_break_cloudformation_sub():
    assert "${" not in AGENT.read_text()


@pytest.fixture
def jupyter() -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"kernels": [], "terminals": []}

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.answer(200, json.dumps(state.get(self.path.rsplit("/", 1)[-1], [])).encode())

    with serving(Handler) as state["url"]:
        yield state


def run_agent(tmp_path: Path, url: str, **extra: str) -> list[dict[str, Any]]:
    """The agent as cron runs it: isolated mode, no site-packages (-I -S)."""
    out = subprocess.run(
        [sys.executable, "-I", "-S", str(AGENT)],
        env=agent_env(tmp_path, url, **extra),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
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


@pytest.mark.parametrize("token", [None, "session-token"])
def test_the_metric_signature_is_the_one_botocore_computes(token):
    # Given the agent's signer and botocore's SigV4Auth on the same PutMetricData at the same second
    agent = load_agent()
    url, body = "https://monitoring.eu-west-1.amazonaws.com/", b"Action=PutMetricData&Version=2010-08-01&Namespace=MLReaper"
    headers = agent.sign(url, body, "eu-west-1", ("AKIDEXAMPLE", "secret/key+1", token), "20240102T030405Z", service="monitoring")
    request = AWSRequest(method="POST", url=url, data=body, headers={"content-type": headers["content-type"]})
    frozen = datetime(2024, 1, 2, 3, 4, 5)
    with mock.patch("botocore.auth.get_current_datetime", return_value=frozen):
        SigV4Auth(Credentials("AKIDEXAMPLE", "secret/key+1", token), "monitoring", "eu-west-1").add_auth(request)
    # Then the Authorization headers are identical
    assert headers["authorization"] == request.headers["Authorization"]
    assert headers.get("x-amz-security-token") == request.headers.get("X-Amz-Security-Token")


@pytest.mark.parametrize("token", [None, "session-token"])
def test_signature_is_the_one_botocore_computes(token):
    # Given the agent's signer and botocore's SigV4Auth on the same Logs request at the same second
    agent = load_agent()
    url, body = "https://logs.eu-west-1.amazonaws.com/", b'{"logGroupName":"/mlreaper/x","logStreamName":"nb-1","logEvents":[]}'
    target = "Logs_20140328.PutLogEvents"
    headers = agent.sign(url, body, "eu-west-1", ("AKIDEXAMPLE", "secret/key+1", token), "20240102T030405Z", target)

    request = AWSRequest(method="POST", url=url, data=body, headers={"content-type": headers["content-type"], "x-amz-target": target})
    frozen = datetime(2024, 1, 2, 3, 4, 5)
    with mock.patch("botocore.auth.get_current_datetime", return_value=frozen):
        SigV4Auth(Credentials("AKIDEXAMPLE", "secret/key+1", token), "logs", "eu-west-1").add_auth(request)

    # Then the Authorization headers are identical (the target header is signed too)
    assert headers["authorization"] == request.headers["Authorization"]
    assert "x-amz-target" in headers["authorization"]
    assert headers.get("x-amz-security-token") == request.headers.get("X-Amz-Security-Token")


@pytest.fixture
def imds() -> Iterator[dict[str, Any]]:
    """IMDSv2: a session token from PUT, required on every GET."""
    seen: dict[str, Any] = {"gets_without_token": 0}
    creds = {"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "s3cr3t", "Token": "tok"}

    class Handler(QuietHandler):
        def do_PUT(self) -> None:  # noqa: N802
            assert self.path == "/latest/api/token" and self.headers["X-aws-ec2-metadata-token-ttl-seconds"]
            self.answer(200, b"imds-session")

        def do_GET(self) -> None:  # noqa: N802
            if self.headers.get("X-aws-ec2-metadata-token") != "imds-session":
                seen["gets_without_token"] += 1
                return self.answer(401, b"")
            base = "/latest/meta-data/iam/security-credentials/"
            if self.path == base:
                return self.answer(200, b"BaseNotebookInstanceEc2InstanceRole")
            if self.path == base + "BaseNotebookInstanceEc2InstanceRole":
                return self.answer(200, json.dumps(creds).encode())
            return self.answer(404, b"")

    with serving(Handler) as seen["url"]:
        yield seen


class Recorder(BaseHTTPRequestHandler):
    """A CloudWatch Logs endpoint that records each request and answers from `answers` (status, body)."""

    seen: list[dict[str, Any]] = []
    answers: list[tuple[int, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).seen.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        code, answer = type(self).answers.pop(0) if type(self).answers else (200, b"{}")
        self.send_response(code)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def logs_endpoint() -> Iterator[type[Recorder]]:
    handler = type("Handler", (Recorder,), {"seen": [], "answers": []})
    with serving(handler) as url:
        handler.url = f"{url}/"  # type: ignore[attr-defined]
        yield handler


def run_live(
    tmp_path: Path, jupyter: dict[str, Any], imds: dict[str, Any], url: str, channel: str = "logs"
) -> subprocess.CompletedProcess[str]:
    """The agent as the cron entry runs it, with AgentChannel=`channel` ("" = the variable unset)."""
    env = agent_env(
        tmp_path,
        jupyter["url"],
        MLREAPER_IMDS_URL=imds["url"],
        MLREAPER_LOGS_URL=url,
        MLREAPER_CLOUDWATCH_URL=url,
        MLREAPER_LOG_GROUP="/mlreaper/mlreaper-activity-agent",
        MLREAPER_CHANNEL=channel,
    )
    if not channel:
        del env["MLREAPER_CHANNEL"]
    del env["MLREAPER_DRY"]
    return subprocess.run([sys.executable, "-I", "-S", str(AGENT)], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_the_request_is_the_logs_api_as_botocore_describes_it(jupyter, imds, tmp_path, logs_endpoint):
    # Given an idle notebook and a recording Logs endpoint
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    # When the agent runs
    out = run_live(tmp_path, jupyter, imds, logs_endpoint.url)  # type: ignore[attr-defined]
    assert out.returncode == 0, out.stderr
    [request] = logs_endpoint.seen
    # Then it is PutLogEvents in the JSON protocol of botocore's service model for logs ...
    model = boto3.session.Session().client("logs", region_name="eu-west-1").meta.service_model
    operation = model.operation_model("PutLogEvents")
    headers = request["headers"]
    assert headers["x-amz-target"] == f"{model.metadata['targetPrefix']}.PutLogEvents"
    assert headers["content-type"] == f"application/x-amz-json-{model.metadata['jsonVersion']}"
    payload = json.loads(request["body"])
    report = ParamValidator().validate(payload, operation.input_shape)
    assert not report.has_errors(), report.generate_report()
    # ... signed for the logs service in the notebook's region with the role's session credentials ...
    assert "/eu-west-1/logs/aws4_request" in headers["authorization"]
    assert headers["x-amz-security-token"] == "tok"
    # ... into the stack's log group, stream = the notebook, one small sample that says idle
    assert payload["logGroupName"] == "/mlreaper/mlreaper-activity-agent" and payload["logStreamName"] == "nb-1"
    [sample] = payload["logEvents"]
    assert json.loads(sample["message"]) == {"notebook": "nb-1", "active": 0}
    assert len(sample["message"]) < 64
    assert abs(sample["timestamp"] / 1000 - datetime.now(UTC).timestamp()) < 60


def test_a_new_stream_is_created_once_and_the_sample_sent(jupyter, imds, tmp_path, logs_endpoint):
    # Given Logs without the notebook's stream yet, and a concurrent start that creates it first
    jupyter["kernels"] = [{"execution_state": "busy"}]
    missing = json.dumps({"__type": "com.amazonaws.logs#ResourceNotFoundException", "message": "The specified log stream does not exist."})
    exists = json.dumps({"__type": "ResourceAlreadyExistsException", "message": "The specified log stream already exists"})
    logs_endpoint.answers = [(400, missing.encode()), (400, exists.encode()), (200, b"{}")]
    # When the agent runs
    out = run_live(tmp_path, jupyter, imds, logs_endpoint.url)  # type: ignore[attr-defined]
    # Then: put (refused), create (already there: fine), put again; the sample says active
    assert out.returncode == 0, out.stderr
    targets = [r["headers"]["x-amz-target"].split(".")[1] for r in logs_endpoint.seen]
    assert targets == ["PutLogEvents", "CreateLogStream", "PutLogEvents"]
    assert json.loads(logs_endpoint.seen[1]["body"]) == {"logGroupName": "/mlreaper/mlreaper-activity-agent", "logStreamName": "nb-1"}
    assert json.loads(json.loads(logs_endpoint.seen[2]["body"])["logEvents"][0]["message"])["active"] == 1


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        ([(400, b'{"__type":"AccessDeniedException","message":"not authorized to perform: logs:PutLogEvents"}')], "AccessDeniedException"),
        # the log group itself is missing (stack deleted): CreateLogStream says so too
        (
            [
                (400, b'{"__type":"ResourceNotFoundException","message":"stream"}'),
                (400, b'{"__type":"ResourceNotFoundException","message":"The specified log group does not exist."}'),
            ],
            "log group does not exist",
        ),
        ([(200, b'{"rejectedLogEventsInfo":{"tooNewLogEventStartIndex":0}}')], "sample rejected"),
        ([(500, b"<html>proxy error</html>")], "HTTP 500"),
    ],
)
def test_a_logs_error_is_logged_not_fatal_and_nothing_else_is_sent(jupyter, imds, tmp_path, logs_endpoint, answers, said):
    # Given Logs refusing the sample
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    logs_endpoint.answers = list(answers)
    # When the agent runs
    out = run_live(tmp_path, jupyter, imds, logs_endpoint.url)  # type: ignore[attr-defined]
    # Then it ends cleanly (no traceback), the agent log says why, and no secret is in it
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert "sample not sent" in out.stderr and said in out.stderr
    assert "s3cr3t" not in out.stderr + out.stdout
    # and it never falls back to sending anything that could read as idle elsewhere
    assert all(r["headers"]["x-amz-target"].startswith("Logs_20140328.") for r in logs_endpoint.seen)


def test_an_unreachable_logs_endpoint_is_logged_not_fatal(jupyter, imds, tmp_path):
    # Given no route to Logs (a VPC without a logs endpoint): connection refused
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    out = run_live(tmp_path, jupyter, imds, "http://127.0.0.1:9/")
    assert out.returncode == 1 and "Traceback" not in out.stderr and "sample not sent" in out.stderr


@pytest.mark.parametrize("channel", ["metric", "logs"])
def test_unknown_is_never_sent_as_idle(tmp_path, imds, logs_endpoint, channel):
    # Given Jupyter unreadable (unknown)
    env = agent_env(
        tmp_path,
        "http://127.0.0.1:9",
        MLREAPER_IMDS_URL=imds["url"],
        MLREAPER_CHANNEL=channel,
        MLREAPER_LOGS_URL=logs_endpoint.url,
        MLREAPER_CLOUDWATCH_URL=logs_endpoint.url,
    )  # type: ignore[attr-defined]
    del env["MLREAPER_DRY"]
    out = subprocess.run([sys.executable, "-I", "-S", str(AGENT)], env=env, capture_output=True, text=True, timeout=60, check=False)
    # Then nothing at all reaches CloudWatch (metric or Logs): no report, so the period is unknown, never idle
    assert out.returncode == 0
    assert logs_endpoint.seen == []


def test_sends_to_cloudwatch_logs_with_the_instance_role(jupyter, imds, tmp_path):
    # Given an idle notebook, IMDSv2 and a local CloudWatch Logs (moto's server) with the stack's log group
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    with local_account() as endpoint:
        logs = boto3.client("logs", region_name="eu-west-1", endpoint_url=endpoint)
        logs.create_log_group(logGroupName="/mlreaper/mlreaper-activity-agent")
        # When the agent runs twice as cron runs it (the first creates the stream)
        for _ in range(2):
            out = run_live(tmp_path, jupyter, imds, endpoint + "/")
            assert out.returncode == 0, out.stderr
        # Then two samples for nb-1 are in its stream, both idle
        events = logs.filter_log_events(logGroupName="/mlreaper/mlreaper-activity-agent")["events"]
        assert [(e["logStreamName"], json.loads(e["message"])) for e in events] == [("nb-1", {"notebook": "nb-1", "active": 0})] * 2
    assert imds["gets_without_token"] == 0


# ---- AgentChannel=metric (the default): the contract's MLReaper/NotebookActivity --------------


@pytest.mark.parametrize("channel", ["", "metric", "LOGS", "logs; rm -rf /"])
def test_the_default_channel_is_the_contracts_metric_as_botocore_describes_it(jupyter, imds, tmp_path, logs_endpoint, channel):
    # Given an idle notebook, and the channel unset, "metric", or anything that is not exactly "logs"
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    # When the agent runs
    out = run_live(tmp_path, jupyter, imds, logs_endpoint.url, channel=channel)  # type: ignore[attr-defined]
    assert out.returncode == 0, out.stderr
    [request] = logs_endpoint.seen
    headers = request["headers"]
    # Then it is one PutMetricData in the query protocol of botocore's model for cloudwatch, exactly
    # what botocore itself would send for the contract's datapoint ...
    model = boto3.session.Session().client("cloudwatch", region_name="eu-west-1").meta.service_model
    operation = model.operation_model("PutMetricData")
    contract = {
        "Namespace": "MLReaper",
        "MetricData": [
            {
                "MetricName": "NotebookActivity",
                "Value": 0.0,
                "Unit": "Count",
                "Dimensions": [{"Name": "NotebookInstanceName", "Value": "nb-1"}],
            }
        ],
    }
    report = ParamValidator().validate(contract, operation.input_shape)
    assert not report.has_errors(), report.generate_report()
    # the model lists the query protocol among those CloudWatch accepts (the agent's, stdlib-only)
    assert "query" in model.metadata.get("protocols", [model.metadata["protocol"]])
    expected = create_serializer("query").serialize_to_request(contract, operation)["body"]
    sent = dict(parse_qsl(request["body"].decode(), strict_parsing=True))
    value = "MetricData.member.1.Value"
    assert float(sent.pop(value)) == expected.pop(value)
    assert sent == expected
    # ... not to Logs, signed for the monitoring service with the role's session credentials
    assert "x-amz-target" not in headers and headers["content-type"].startswith("application/x-www-form-urlencoded")
    assert "/eu-west-1/monitoring/aws4_request" in headers["authorization"]
    assert headers["x-amz-security-token"] == "tok"


def test_the_metric_name_comes_from_the_notebooks_own_metadata(jupyter, imds, tmp_path, logs_endpoint):
    # Given the notebook's metadata naming it (the only source: no variable can rename it)
    jupyter["kernels"] = [{"execution_state": "busy"}]
    env_meta = tmp_path / "meta.json"
    out = run_live(tmp_path, jupyter, imds, logs_endpoint.url, channel="metric")  # type: ignore[attr-defined]
    assert out.returncode == 0, out.stderr
    named = json.loads(env_meta.read_text())["ResourceName"]
    [request] = logs_endpoint.seen
    form = dict(parse_qsl(request["body"].decode()))
    assert form["MetricData.member.1.Dimensions.member.1.Value"] == named
    assert form["MetricData.member.1.Value"] == "1"


def test_a_refused_publish_says_why_in_the_log(jupyter, imds, tmp_path, logs_endpoint):
    # Given CloudWatch answering AccessDenied (the role lacks cloudwatch:PutMetricData)
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    logs_endpoint.answers = [(403, b"<Error><Code>AccessDenied</Code></Error>")]
    out = run_live(tmp_path, jupyter, imds, logs_endpoint.url, channel="metric")  # type: ignore[attr-defined]
    # Then the run fails without a traceback, the agent log names the refusal (and no secret), and
    # nothing is sent anywhere else
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "PutMetricData failed: HTTP 403" in out.stderr and "AccessDenied" in out.stderr
    assert "s3cr3t" not in out.stderr + out.stdout
    assert len(logs_endpoint.seen) == 1


def test_publishes_to_cloudwatch_with_the_instance_role(jupyter, imds, tmp_path):
    # Given an idle notebook, IMDSv2 and a local CloudWatch (moto's server)
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    with local_account() as endpoint:
        # When the agent runs twice as cron runs it with the default channel (the second has a CPU sample to compare)
        for _ in range(2):
            out = run_live(tmp_path, jupyter, imds, endpoint + "/", channel="")
            assert out.returncode == 0, out.stderr
        # Then MLReaper/NotebookActivity for nb-1 is in CloudWatch, value 0, and nothing in Logs
        cw = boto3.client("cloudwatch", region_name="eu-west-1", endpoint_url=endpoint)
        [metric] = cw.list_metrics(Namespace="MLReaper")["Metrics"]
        assert metric["MetricName"] == "NotebookActivity"
        assert metric["Dimensions"] == [{"Name": "NotebookInstanceName", "Value": "nb-1"}]
        stats = cw.get_metric_statistics(
            Namespace="MLReaper",
            MetricName="NotebookActivity",
            Dimensions=metric["Dimensions"],
            StartTime=datetime.now(UTC) - timedelta(hours=1),
            EndTime=datetime.now(UTC) + timedelta(minutes=5),
            Period=3600,
            Statistics=["Maximum", "SampleCount"],
        )["Datapoints"]
        assert [(d["Maximum"], d["SampleCount"]) for d in stats] == [(0.0, 2.0)]
        assert boto3.client("logs", region_name="eu-west-1", endpoint_url=endpoint).describe_log_groups()["logGroups"] == []
    assert imds["gets_without_token"] == 0


# ---- the deployed default, end to end: template -> on-start script -> cron line -> request ----


@pytest.mark.parametrize(("channel", "target"), [(None, None), ("logs", "Logs_20140328.PutLogEvents")], ids=["template-default", "logs"])
def test_the_installed_agent_reports_where_the_stacks_channel_says(jupyter, imds, tmp_path, logs_endpoint, channel, target):
    import shlex

    from tests.helpers.agent_onstart import install

    # Given the on-start script as CloudFormation renders it (AgentChannel: the template's default, or logs)
    done = install(tmp_path / "nb", channel=channel)
    assert done.result.returncode == 0, done.result.stderr
    job = shlex.split(next(ln for ln in done.cron_lines() if ln.startswith("*/5 ")))
    cron_env = dict(f.split("=", 1) for f in job[6:] if "=" in f and not f.startswith((">", "/")))
    installed = done.root / "opt/mlreaper/agent.py"
    # When the installed agent runs with its cron entry's variables (endpoints pointed at this test)
    jupyter["kernels"] = [{"execution_state": "idle", "last_activity": stamp(40)}]
    env = agent_env(
        tmp_path,
        jupyter["url"],
        MLREAPER_IMDS_URL=imds["url"],
        MLREAPER_LOGS_URL=logs_endpoint.url,  # type: ignore[attr-defined]
        MLREAPER_CLOUDWATCH_URL=logs_endpoint.url,
        **cron_env,
    )  # type: ignore[attr-defined]
    del env["MLREAPER_DRY"]
    env["MLREAPER_CPU_PERCENT"] = "101"  # this test machine's CPU is busy; the cron entry's 10 would say active
    out = subprocess.run([sys.executable, "-I", "-S", str(installed)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    # Then the default deployment publishes the contract's metric (PutMetricData, MLReaper/NotebookActivity)
    [request] = logs_endpoint.seen
    if target is None:
        assert cron_env["MLREAPER_CHANNEL"] == "metric"
        form = dict(parse_qsl(request["body"].decode()))
        assert (form["Action"], form["Namespace"], form["MetricData.member.1.MetricName"]) == (
            "PutMetricData",
            "MLReaper",
            "NotebookActivity",
        )
        assert form["MetricData.member.1.Dimensions.member.1.Name"] == "NotebookInstanceName"
        assert form["MetricData.member.1.Dimensions.member.1.Value"] == "nb-1" and form["MetricData.member.1.Value"] == "0"
    else:  # and with logs, one sample in the stack's group
        assert request["headers"]["x-amz-target"] == target
        assert json.loads(request["body"])["logGroupName"] == "/mlreaper/mlreaper-activity-agent"

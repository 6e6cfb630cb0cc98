"""The side-by-side bench's counting and accounting (bench/server_count.py, bench/c7n_side_by_side.py,
bench/truth.py): one server-side count for any client, the resources change calls name, and what the
figures per tool add up to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.cloudwatch import models as cw_models

from bench import truth
from bench.c7n_side_by_side import counting_account, per, summarize
from bench.server_count import Tally, operation_of, targets_of
from reaper_devkit import seed_ec2
from reaper_devkit.calls import recording
from reaper_devkit.local_aws import session

SCOPE = "AWS4-HMAC-SHA256 Credential=demo/20261205/us-east-1/{}/aws4_request, SignedHeaders=host, Signature=x"


def test_operation_is_read_as_aws_reads_it_for_each_protocol() -> None:
    # JSON: the target header; Smithy RPC v2 CBOR: the path; query: Action in the body; moto's own API: not a call
    assert operation_of({"Authorization": SCOPE.format("sagemaker"), "X-Amz-Target": "SageMaker.ListTags"}, "/", "", b"{}") == (
        "sagemaker:ListTags"
    )
    cbor_path = "/service/GraniteServiceVersion20100801/operation/GetMetricStatistics"
    assert operation_of({"Authorization": SCOPE.format("monitoring")}, cbor_path, "", b"\xbf\xff") == "cloudwatch:GetMetricStatistics"
    body = b"Action=StopInstances&Version=2016-11-15&InstanceId.1=i-1&InstanceId.2=i-2"
    assert operation_of({"Authorization": SCOPE.format("ec2")}, "/", "", body) == "ec2:StopInstances"
    assert targets_of("ec2:StopInstances", "", body) == ["i-1", "i-2"]
    assert targets_of("sagemaker:DeleteEndpoint", "", b'{"EndpointName": "ep-1"}') == ["ep-1"]
    assert targets_of("sagemaker:DescribeEndpoint", "", b'{"EndpointName": "ep-1"}') == []  # a read acts on nothing
    assert operation_of({}, "/moto-api/reset", "", b"") is None


@pytest.mark.slow
def test_the_server_counts_what_the_client_made_and_the_resources_it_changed() -> None:
    # Given the counting server, and calls in three protocols, two of them changes
    with counting_account() as (_url, counter):
        sm, ec2, cw = session().client("sagemaker"), session().client("ec2"), session().client("cloudwatch")
        ami = seed_ec2.image(ec2)
        ids = [i["InstanceId"] for i in ec2.run_instances(ImageId=ami, MinCount=2, MaxCount=2, InstanceType="g5.xlarge")["Instances"]]
        with counter.counting() as tally, recording() as client:
            sm.list_notebook_instances()
            ec2.describe_instances()
            ec2.stop_instances(InstanceIds=ids)
            with pytest.raises(ec2.exceptions.ClientError):  # refused: counted as a call, acting on nothing
                ec2.stop_instances(InstanceIds=["i-0123456789abcdef0"])
            now = datetime.now(UTC)
            cw.get_metric_statistics(
                Namespace="AWS/EC2", MetricName="CPUUtilization", StartTime=now - timedelta(hours=1), EndTime=now, Period=300,
                Statistics=["Maximum"], Dimensions=[{"Name": "InstanceId", "Value": ids[0]}],
            )  # fmt: skip
    # Then the server saw each call once, named as the client's own recorder names it, and only the two instances stopped
    assert (
        tally.by_operation()
        == client.by_operation()
        == {
            "cloudwatch:GetMetricStatistics": 1,
            "ec2:DescribeInstances": 1,
            "ec2:StopInstances": 2,
            "sagemaker:ListNotebookInstances": 1,
        }
    )
    assert tally.acted_on() == set(ids)


def test_summary_counts_busy_and_protected_resources_acted_on_and_the_idle_missed() -> None:
    # Given a seed of four endpoints (one busy, one production, two idle: one of them with an inference component)
    seen = truth.Truth({"busy": truth.BUSY, "prod": truth.OUT, "idle-a": truth.IDLE, "idle-b": truth.IDLE}, {"idle-b-ic": "idle-b"})
    dry, act = Tally(), Tally()
    for op in ("sagemaker:ListEndpoints", "sagemaker:DescribeEndpoint", "sagemaker:DescribeEndpoint"):
        dry.add(op, [])
        act.add(op, [])
    # When a tool deletes the busy one and scales the component to zero, and logs one record
    act.add("sagemaker:DeleteEndpoint", ["busy"])
    act.add("sagemaker:UpdateInferenceComponentRuntimeConfig", ["idle-b-ic"])
    act.add("dynamodb:PutItem", [])
    r = summarize(dry, act, seen)
    # Then the component counts as its endpoint; one busy acted on, one idle missed
    assert r["acted_on"] == 2 and r["acted_on_by_class"] == {"busy": 1, "idle": 1}
    assert r["busy_acted_on"] == 1 and r["not_idle_acted_on"] == 1 and r["idle_missed"] == 1
    assert r["calls_per_action"] == 3.0 and r["calls_per_action_without_bookkeeping"] == 2.5
    assert r["calls_per_action_beyond_dry_run"] == 1.5
    assert r["seeded_classes"] == {"busy": 1, "idle": 2, "out-of-scope": 1}


def test_calls_per_action_is_none_when_nothing_was_acted_on() -> None:
    assert per(120, 0) is None and per(7, 2) == 3.5


def test_activity_marks_busy_only_within_the_window_and_maps_components_to_endpoints() -> None:
    now = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)

    class D:
        def __init__(self, name: str, dim: tuple[str, str], value: float, minutes_ago: int) -> None:
            self.namespace, self.name, self.value = "AWS/SageMaker", name, value
            self.dimensions = [cw_models.Dimension(*dim)]
            self.timestamp = (now - timedelta(minutes=minutes_ago)).replace(tzinfo=None)  # moto keeps naive UTC

    datums: list[Any] = [
        D("Invocations", ("InferenceComponentName", "ep-1-ic"), 3, 10),
        D("Invocations", ("EndpointName", "ep-2"), 5, 200),  # before the 120-minute window
        D("Invocations", ("EndpointName", "ep-3"), 0, 5),  # a zero is no activity
    ]
    busy, _ = truth.activity(datums, now, 120, lambda r: {"ep-1-ic": "ep-1"}.get(r, r))
    assert busy == {"ep-1"}


def test_get_metric_statistics_answers_only_the_exact_dimension_combination(monkeypatch: pytest.MonkeyPatch) -> None:
    # moto matches any datapoint whose dimensions include the query's; CloudWatch only the exact set (bench/truth.py)
    monkeypatch.setattr(cw_models.CloudWatchBackend, "get_metric_statistics", cw_models.CloudWatchBackend.get_metric_statistics)
    monkeypatch.setattr(cw_models.CloudWatchBackend, "_bench_exact", False, raising=False)
    truth.exact_dimension_statistics()
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    with mock_aws():
        cw = boto3.client("cloudwatch", region_name="us-east-1")
        per_gpu = [{"Name": "InstanceId", "Value": "i-1"}, {"Name": "index", "Value": "0"}]
        cw.put_metric_data(
            Namespace="CWAgent",
            MetricData=[
                {"MetricName": "gpu", "Dimensions": per_gpu, "Timestamp": now - timedelta(minutes=m), "Value": 90.0} for m in (3, 8)
            ],
        )
        ask: dict[str, Any] = {"Namespace": "CWAgent", "MetricName": "gpu", "StartTime": now - timedelta(hours=1), "EndTime": now}
        ask.update(Period=300, Statistics=["Maximum"])
        assert cw.get_metric_statistics(**ask, Dimensions=per_gpu[:1])["Datapoints"] == []
        points = cw.get_metric_statistics(**ask, Dimensions=per_gpu)["Datapoints"]
        assert sorted(p["Maximum"] for p in points) == [90.0, 90.0]

"""Idle GPU boxes stopped many per StopInstances (issue 27, item 3): each still begun and gated alone
before any call; a call EC2 refuses for one id falls back to one call each; a throttled call changes
nothing and is an error on each; a re-delivered event stops nothing twice. StopInstances calls are
counted where they arrive, in moto's EC2 backend."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.ec2.models.instances import InstanceBackend

from reaper.kinds.ec2 import STOP_BATCH
from reaper.record.actionlog import ActionLog
from reaper.sweep import pipeline
from reaper_devkit import seed_ec2
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext.ec2 import shape
from reaper_devkit.seed import aligned, put_metric_data_in_process
from tests.conftest import drain, event, load_function, throttle

pytestmark = pytest.mark.usefixtures("fresh_ec2_catalog")

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
IDLE = {"CPUUtilization": 1.5, "NetworkIn": 40_000.0, "NetworkOut": 40_000.0}


@pytest.fixture
def at_server(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The instance ids of every StopInstances that reaches moto's EC2 backend, refused ones included."""
    seen: list[list[str]] = []
    original = InstanceBackend.stop_instances

    def stop_instances(self: Any, instance_ids: list[str]) -> Any:
        seen.append(list(instance_ids))
        return original(self, instance_ids)

    monkeypatch.setattr(InstanceBackend, "stop_instances", stop_instances)
    return seen


def idle_boxes(ec2: Any, n: int, now: datetime, tags: dict[str, str] = DEV) -> list[str]:
    """n running g5g.xlarge dev boxes (EBS root, no instance store), idle for 3 hours on every signal."""
    made = ec2.run_instances(
        ImageId=seed_ec2.image(ec2),
        MinCount=n,
        MaxCount=n,
        InstanceType="g5g.xlarge",
        TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}],
    )
    ids = sorted(str(i["InstanceId"]) for i in made["Instances"])
    end = aligned(now)
    stamps = [end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=7) for k in range(36)]
    for namespace, metric, value in [
        *(("AWS/EC2", m, v) for m, v in IDLE.items()),
        ("CWAgent", "nvidia_smi_utilization_gpu", 0.0),
        ("CWAgent", "nvidia_smi_utilization_memory", 0.0),
    ]:
        points = [
            {"MetricName": metric, "Dimensions": [{"Name": "InstanceId", "Value": iid}], "Timestamp": ts, "Value": value}
            for iid in ids
            for ts in stamps
        ]
        put_metric_data_in_process(namespace, points)  # what seed_ec2.metrics puts, in bulk
    for iid in ids:
        shape(iid, launched_at=now - timedelta(hours=6))
    return ids


def logged(aws: Any, table: str, now: datetime) -> list[dict[str, Any]]:
    return ActionLog(aws.client("dynamodb"), table).stored_entries(now - timedelta(days=1), now + timedelta(days=1))


def test_two_hundred_idle_boxes_stop_in_ten_calls_each_recorded_and_posted_once(aws, ec2, enforce, lambda_context, at_server):
    # Given 200 idle dev boxes
    now = datetime.now(UTC)
    ids = idle_boxes(ec2, 200, now)
    app = load_function("ec2")
    # When one enforce sweep runs
    with recording() as calls:
        result = app.handler(event("ec2-schedule.json"), lambda_context)
    # Then all are stopped by 200 / 20 StopInstances calls, each id in exactly one of them
    assert sorted(result["acted"]) == ids
    assert {seed_ec2.state(ec2, i) for i in ids} == {"stopped"}
    assert len(at_server) == calls.calls["ec2:StopInstances"] == 200 // STOP_BATCH
    assert Counter(i for call in at_server for i in call) == Counter(ids)
    # each gated alone (state, stop protection and tags read again for each), begun alone before any call
    assert calls.calls["ec2:DescribeInstanceAttribute"] == 200
    before = calls.operations[: calls.operations.index("StopInstances")]
    assert before.count("TransactWriteItems") >= STOP_BATCH and before.count("DescribeInstanceAttribute") == STOP_BATCH
    # and each stop is in the log once, confirmed, and queued for Slack once
    done = [e for e in logged(aws, enforce["REAPER_TABLE"], now) if e.get("executed")]
    assert sorted(e["id"] for e in done) == ids and not any(e.get("unconfirmed") for e in done)
    posted = [m["id"] for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("executed")]
    assert sorted(posted) == ids


def test_a_box_that_turns_protected_after_the_read_is_refused_by_the_gate_and_the_others_stop_in_one_call(
    aws, ec2, enforce, lambda_context, at_server, monkeypatch
):
    # Given six idle boxes; while the sweep reads metrics one is tagged exempt and one joins a Ray cluster
    now = datetime.now(UTC)
    ids = idle_boxes(ec2, 6, now)
    exempt, joined = ids[1], ids[4]
    from reaper.kinds.ec2 import signals as ec2_signals

    real = ec2_signals.signals

    def then_tagged(*args: Any, **kwargs: Any) -> Any:
        read = real(*args, **kwargs)
        ec2.create_tags(Resources=[exempt], Tags=[{"Key": "reaper:exempt", "Value": "true"}])
        ec2.create_tags(Resources=[joined], Tags=[{"Key": "ray-cluster-name", "Value": "llm"}])
        return read

    monkeypatch.setattr(ec2_signals, "signals", then_tagged)
    app = load_function("ec2")
    result = app.handler(event("ec2-schedule.json"), lambda_context)
    # Then the gate keeps both, and the other four stop in one call
    others = [i for i in ids if i not in (exempt, joined)]
    assert at_server == [others] and sorted(result["acted"]) == others
    assert seed_ec2.state(ec2, exempt) == seed_ec2.state(ec2, joined) == "running"
    assert (result["verdicts"]["exempt"], result["verdicts"]["keep"], result["verdicts"]["error"]) == (1, 1, 0)


def _spoil_first_batch(monkeypatch: pytest.MonkeyPatch, client: Any, spoil: Callable[[], None]) -> None:
    """Just before the first StopInstances of many ids, `spoil` changes one of them (after its gate)."""
    real = client.stop_instances
    spoiled: list[bool] = []

    def stop_instances(**kwargs: Any) -> Any:
        if len(kwargs["InstanceIds"]) > 1 and not spoiled:
            spoiled.append(True)
            spoil()
        return real(**kwargs)

    monkeypatch.setattr(client, "stop_instances", stop_instances)


@pytest.mark.parametrize(
    ("spoil", "code", "kept"),
    [
        (lambda ec2, iid: ec2.terminate_instances(InstanceIds=[iid]), "IncorrectInstanceState", "gone before the action could run"),
        (
            lambda ec2, iid: ec2.modify_instance_attribute(InstanceId=iid, DisableApiStop={"Value": True}),
            "OperationNotPermitted",
            "stop-protected",
        ),
    ],
    ids=["terminated", "stop-protected"],
)
def test_one_id_ec2_refuses_fails_the_call_and_each_box_is_taken_alone_recorded_once(
    aws, ec2, enforce, at_server, monkeypatch, caplog, spoil, code, kept
):
    # Given five idle boxes, one of which EC2 will refuse to stop once its gate has passed
    now = datetime.now(UTC)
    ids = idle_boxes(ec2, 5, now)
    bad = ids[2]
    app = load_function("ec2")
    _spoil_first_batch(monkeypatch, app.RUNTIME.clients()("ec2"), lambda: spoil(ec2, bad))
    # When the sweep stops them
    with recording() as calls:
        outcomes = {o.resource.id: o for o in pipeline.sweep(app.RUNTIME, ["ec2"], now, "refused")}
    # Then the call for five failed as a whole and stopped none; each was gated and stopped alone after it
    good = [i for i in ids if i != bad]
    assert at_server[0] == ids and at_server[1:] == [[i] for i in good]
    assert calls.calls["ec2:StopInstances"] == 1 + len(good)
    assert {seed_ec2.state(ec2, i) for i in good} == {"stopped"} and seed_ec2.state(ec2, bad) != "stopped"
    # the refused one is kept, with the reason its own gate found, not an error of the batch
    assert not outcomes[bad].executed and kept in outcomes[bad].reason and outcomes[bad].verdict.value == "keep"
    assert all(outcomes[i].executed for i in good)
    # each recorded once (the refused one's write-ahead copies removed), each stop posted once
    entries = logged(aws, enforce["REAPER_TABLE"], now)
    assert sorted(e["id"] for e in entries if e.get("verdict") == "act") == good
    assert not any(e.get("unconfirmed") for e in entries)
    assert sorted(m["id"] for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("verdict") == "act") == good
    assert f"batched stop of 5 refused ({code}" in caplog.text


@pytest.mark.parametrize(("state", "code"), [("terminated", "IncorrectInstanceState"), ("stop-protected", "OperationNotPermitted")])
def test_the_kit_refuses_the_whole_call_for_one_id_and_stops_none_as_ec2_does(aws, ec2, state, code):
    now = datetime.now(UTC)
    a, b, c = idle_boxes(ec2, 3, now)
    if state == "terminated":
        ec2.terminate_instances(InstanceIds=[b])
    else:
        ec2.modify_instance_attribute(InstanceId=b, DisableApiStop={"Value": True})
    with pytest.raises(ClientError) as refused:
        ec2.stop_instances(InstanceIds=[a, b, c])
    assert refused.value.response["Error"]["Code"] == code and f"'{b}'" in refused.value.response["Error"]["Message"]
    assert seed_ec2.state(ec2, a) == seed_ec2.state(ec2, c) == "running"


def test_a_throttled_batch_call_is_an_error_on_each_changes_nothing_and_the_next_sweep_stops_them(
    aws, ec2, enforce, lambda_context, at_server, monkeypatch
):
    # Given five idle boxes and a StopInstances that is throttled (after botocore's own retries)
    now = datetime.now(UTC)
    ids = idle_boxes(ec2, 5, now)
    app = load_function("ec2")
    with monkeypatch.context() as throttled:
        throttle(throttled, app.RUNTIME.clients()("ec2"), "stop_instances")
        first = app.handler(event("ec2-schedule.json"), lambda_context)
    # Then each is an error, recorded and posted once; nothing was stopped, and no call per box followed
    assert first["acted"] == [] and first["verdicts"]["error"] == 5 == sum(first["verdicts"].values())
    assert all("ThrottlingException" in e and "one call for 5" in e for e in first["errors"])
    assert at_server == [] and {seed_ec2.state(ec2, i) for i in ids} == {"running"}
    errors = [e for e in logged(aws, enforce["REAPER_TABLE"], now) if e.get("verdict") == "error"]
    assert sorted(e["id"] for e in errors) == ids and not any(e.get("executed") for e in errors)
    assert sorted(m["id"] for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("verdict") == "error") == ids
    # When the next sweep runs unthrottled, it stops them in one call
    second = app.handler(event("ec2-schedule.json", id="next"), lambda_context)
    assert sorted(second["acted"]) == ids and at_server == [ids]


def test_a_redelivered_event_stops_nothing_twice_and_posts_each_once(aws, ec2, enforce, lambda_context, at_server):
    # Given eight idle boxes and one scheduled event delivered three times
    now = datetime.now(UTC)
    ids = idle_boxes(ec2, 8, now)
    app = load_function("ec2")
    results = [app.handler(event("ec2-schedule.json"), lambda_context) for _ in range(3)]
    # Then the first delivery stops them in one call; the others find each decision claimed
    assert sorted(results[0]["acted"]) == ids and results[1]["acted"] == results[2]["acted"] == []
    assert at_server == [ids]
    acts = [m["id"] for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("verdict") == "act"]
    assert sorted(acts) == ids


def test_each_batch_reads_its_boxes_again_in_one_describe_instances_and_their_tags_with_it(aws, ec2, enforce, lambda_context, at_server):
    # Given 60 idle dev boxes (three batches)
    now = datetime.now(UTC)
    ids = idle_boxes(ec2, 60, now)
    app = load_function("ec2")
    # When one enforce sweep runs
    with recording() as calls:
        result = app.handler(event("ec2-schedule.json"), lambda_context)
    # Then all are stopped, and between the first write-ahead and the first StopInstances the gates read the
    # instances once (one DescribeInstances for the batch), their tags in none more, their stop protection each
    assert sorted(result["acted"]) == ids and len(at_server) == 60 // STOP_BATCH
    first = calls.operations[calls.operations.index("TransactWriteItems") : calls.operations.index("StopInstances")]
    assert (first.count("DescribeInstances"), first.count("DescribeTags"), first.count("DescribeInstanceAttribute")) == (1, 0, STOP_BATCH)
    # and the whole sweep read the instances once to find them and once per batch to gate them
    assert calls.calls["ec2:DescribeTags"] == 0
    assert calls.calls["ec2:DescribeInstances"] <= 1 + 60 // STOP_BATCH

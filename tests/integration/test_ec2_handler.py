"""The ec2 function, called with the JSON in events/ against moto: every case of the seeded fleet,
dry-run, grace, duplicates, throttling, late protective tags, malformed events and the new-instance notice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.errors import BadEventError
from reaper.wiring import build_runtime
from reaper_devkit import seed_ec2
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function, throttle
from tests.helpers.ec2_fleet import Fleet, build

pytestmark = pytest.mark.usefixtures("fresh_ec2_catalog")


@pytest.fixture
def fleet(ec2: Any, cw: Any) -> Fleet:
    return build(ec2, cw, datetime.now(UTC))


def states(ec2: Any, fleet: Fleet) -> dict[str, str]:
    return {name: seed_ec2.state(ec2, iid) for name, iid in fleet.ids.items()}


def test_dry_run_decides_everything_and_changes_nothing(aws, ec2, fleet, deployed_env, lambda_context):
    app = load_function("ec2")
    with recording() as calls:
        result = app.handler(event("ec2-schedule.json"), lambda_context)
    assert result["resources"] == len(fleet.ids)  # the CPU decoy is not listed
    assert result["acted"] == []
    assert set(states(ec2, fleet).values()) == {"running"}
    assert all("reaper:warned-at" not in seed_ec2.tags(ec2, i) for i in fleet.ids.values())
    assert calls.actions <= function_actions("Ec2Function")
    assert not {a for a in calls.actions if a.startswith("ec2:") and not a.startswith("ec2:Describe")}
    assert calls.calls["ec2:DescribeInstanceAttribute"] == 0  # stop protection is read only before a stop
    by_id = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert by_id[fleet.ids["idle"]]["verdict"] == "act" and by_id[fleet.ids["idle"]]["executed"] is False
    no_metric = by_id[fleet.ids["no-gpu-metric"]]
    assert no_metric["verdict"] == "keep" and "nvidia_gpu" in no_metric["reason"]  # the owner is told how to publish it


def test_enforce_without_grace_stops_exactly_the_idle_unmanaged_ebs_gpu_instances(
    aws, ec2, fleet, deployed_env, lambda_context, monkeypatch
):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("ec2")
    with recording() as calls:
        result = app.handler(event("ec2-schedule.json"), lambda_context)
    should_stop = {n for n, (v, _) in fleet.expected.items() if v == "act"}
    assert {fleet.name_of(i) for i in result["acted"]} == should_stop
    for name, state in states(ec2, fleet).items():
        assert state == ("stopped" if name in should_stop else "running"), name
    assert seed_ec2.state(ec2, fleet.decoy) == "running"
    assert "ec2:TerminateInstances" not in calls.actions
    assert calls.actions <= function_actions("Ec2Function")
    # stop protection is read for the instances about to be stopped, not for the fleet
    assert calls.calls["ec2:DescribeInstanceAttribute"] == len(should_stop) + 1  # + the protected one
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    stopped = messages[fleet.ids["idle"]]
    assert stopped["executed"] is True and "start-instances" in stopped["undo"] and "capacity" in stopped["undo"]
    assert "capacity" in stopped["detail"]
    assert "hibernating" in messages[fleet.ids["idle-hibernate"]]["detail"]
    assert "instance store" in messages[fleet.ids["instance-store-data"]]["reason"]


def test_every_kept_instance_says_why(ec2, fleet, deployed_env, lambda_context, monkeypatch, capsys):
    from reaper.core.settings import Settings
    from reaper.sweep import pipeline

    rt = build_runtime(Settings(mode="enforce", grace_minutes=0), region="us-east-1")
    outcomes = pipeline.sweep(rt, ["ec2"], datetime.now(UTC), event_id="why")
    for o in outcomes:
        verdict, words = fleet.expected[fleet.name_of(o.resource.id)]
        assert (o.verdict.value, words in o.reason) == (verdict, True), (fleet.name_of(o.resource.id), o.reason)


def test_grace_warns_first_then_stops_after_it(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    now = datetime.now(UTC)
    iid = seed_ec2.instance(ec2, "g5g.xlarge", {"ml:owner": "ana@example.com"}, now=now)
    seed_ec2.metrics(cw, iid, now)
    app = load_function("ec2")
    first = app.handler(event("ec2-schedule.json"), lambda_context)
    assert first["verdicts"]["warn"] == 1 and seed_ec2.state(ec2, iid) == "running"
    assert "reaper:warned-at" in seed_ec2.tags(ec2, iid)
    later = now + timedelta(minutes=65)
    seed_ec2.metrics(cw, iid, later)
    from reaper.handlers import handle_kind_event

    done = handle_kind_event(event("ec2-schedule.json", id="later"), "ec2", app.RUNTIME, now=later)
    assert done["acted"] == [iid] and seed_ec2.state(ec2, iid) == "stopped"
    assert "reaper:warned-at" not in seed_ec2.tags(ec2, iid)


def test_same_event_three_times_stops_and_posts_once(aws, ec2, fleet, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("ec2")
    results = [app.handler(event("ec2-schedule.json"), lambda_context) for _ in range(3)]
    assert results[0]["acted"] and results[1]["acted"] == [] and results[2]["acted"] == []
    acts = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") == "act"]
    assert sorted(m["id"] for m in acts) == sorted(results[0]["acted"])


def test_throttled_stop_is_an_error_and_the_sweep_goes_on(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    a, b = (seed_ec2.instance(ec2, "g5g.xlarge", {"ml:owner": "ana@example.com"}, now=now) for _ in range(2))
    for iid in (a, b):
        seed_ec2.metrics(cw, iid, now)
    app = load_function("ec2")
    throttle(monkeypatch, app.RUNTIME.clients()("ec2"), "stop_instances", {"InstanceIds": [a]})
    result = app.handler(event("ec2-schedule.json"), lambda_context)
    assert result["acted"] == [b] and "ThrottlingException" in result["errors"][0]
    assert seed_ec2.state(ec2, a) == "running" and seed_ec2.state(ec2, b) == "stopped"
    assert [m["id"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") == "error"] == [a]


def test_throttled_metrics_stop_nothing_and_say_so(aws, ec2, fleet, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("ec2")
    throttle(monkeypatch, app.RUNTIME.clients()("cloudwatch"), "get_metric_data")
    result = app.handler(event("ec2-schedule.json"), lambda_context)
    assert result["acted"] == [] and result["verdicts"]["error"] == 1
    assert "ThrottlingException" in result["errors"][0]
    assert set(states(ec2, fleet).values()) == {"running"}


def test_a_protective_tag_added_after_discovery_wins(aws, ec2, fleet, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    from reaper.kinds.ec2 import signals as ec2_signals

    real = ec2_signals.signals

    def signals_then_tags(clients, resources, settings, now):  # the owner tags while the sweep reads metrics
        out = real(clients, resources, settings, now)
        ec2.create_tags(Resources=[fleet.ids["idle"]], Tags=[{"Key": "Reaper:Exempt", "Value": " TRUE "}])
        ec2.create_tags(Resources=[fleet.ids["idle-hibernate"]], Tags=[{"Key": "eks:cluster-name", "Value": "joined"}])
        return out

    monkeypatch.setattr(ec2_signals, "signals", signals_then_tags)
    app = load_function("ec2")
    result = app.handler(event("ec2-schedule.json"), lambda_context)
    assert fleet.ids["idle"] not in result["acted"] and fleet.ids["idle-hibernate"] not in result["acted"]
    assert seed_ec2.state(ec2, fleet.ids["idle"]) == "running"
    assert seed_ec2.state(ec2, fleet.ids["idle-hibernate"]) == "running"
    assert seed_ec2.state(ec2, fleet.ids["idle-disposable"]) == "stopped"  # the others still go


def test_cpu_only_setting_lets_cpu_and_network_decide(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setenv("REAPER_EC2_CPU_ONLY", "true")
    now = datetime.now(UTC)
    quiet = seed_ec2.instance(ec2, "g5g.xlarge", {"ml:owner": "ana@example.com"}, now=now)
    seed_ec2.metrics(cw, quiet, now, gpu=None)
    working = seed_ec2.instance(ec2, "g5g.xlarge", {"ml:owner": "ana@example.com"}, now=now)
    seed_ec2.metrics(cw, working, now, cpu=[40.0] + [1.0] * 35, gpu=None)
    result = load_function("ec2").handler(event("ec2-schedule.json"), lambda_context)
    assert result["acted"] == [quiet] and seed_ec2.state(ec2, working) == "running"


def test_an_idle_tag_window_longer_than_the_data_keeps_it(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    iid = seed_ec2.instance(
        ec2, "g5g.xlarge", {"ml:owner": "ana@example.com", "reaper:idle-minutes": "240"}, now=now, launched_ago=timedelta(hours=8)
    )
    seed_ec2.metrics(cw, iid, now)  # 3 hours of data, a 4-hour window
    result = load_function("ec2").handler(event("ec2-schedule.json"), lambda_context)
    assert result["acted"] == [] and seed_ec2.state(ec2, iid) == "running"


@pytest.mark.parametrize(
    "bad",
    [
        "not an object",
        {"detail-type": "Scheduled Event", "source": "aws.events"},
        {"id": "x", "detail-type": "Something Else", "source": "aws.ec2", "detail": {}},
        {"id": "x", "detail-type": "EC2 Instance State-change Notification", "source": "aws.ec2", "detail": {}},
        {
            "id": "x",
            "detail-type": "EC2 Instance State-change Notification",
            "source": "aws.ec2",
            "detail": {"instance-id": "i-; rm -rf /", "state": "running"},
        },
        {
            "id": "x",
            "detail-type": "EC2 Instance State-change Notification",
            "source": "aws.ec2",
            "detail": {"instance-id": ["i-0abc12345678"], "state": "running"},
        },
        {
            "id": "x",
            "detail-type": "EC2 Instance State-change Notification",
            "source": "aws.sagemaker",
            "detail": {"instance-id": "i-0abc12345678", "state": "running"},
        },
    ],
)
def test_malformed_events_are_refused_and_change_nothing(aws, ec2, fleet, deployed_env, lambda_context, monkeypatch, bad):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    with pytest.raises(BadEventError):
        load_function("ec2").handler(bad, lambda_context)
    assert set(states(ec2, fleet).values()) == {"running"}
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def running_event(instance_id: str, **overrides: Any) -> dict[str, Any]:
    ev = event("ec2-state-running.json", **overrides)
    ev["detail"] = {**ev["detail"], "instance-id": instance_id}
    return ev


def test_a_new_unowned_gpu_instance_is_reported_once(aws, ec2, deployed_env, lambda_context):
    now = datetime.now(UTC)
    iid = seed_ec2.instance(ec2, "p4d.24xlarge", {"Name": "<b>mine</b>"}, now=now, launched_ago=timedelta(minutes=1))
    app = load_function("ec2")
    first = app.handler(running_event(iid), lambda_context)
    again = app.handler(running_event(iid), lambda_context)  # a duplicate delivery
    restarted = app.handler(running_event(iid, id="next-start"), lambda_context)  # started again another day
    assert first["posted"] is True and len(first["problems"]) == 2  # ml:owner, ml:stage
    assert again["posted"] is False and restarted["posted"] is False
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert len(notices) == 1 and notices[0]["type"] == "notice" and notices[0]["owner"] is None
    assert "create-tags" in notices[0]["text"] and "p4d.24xlarge" in notices[0]["title"]
    assert seed_ec2.state(ec2, iid) == "running"


@pytest.mark.parametrize(
    ("itype", "tags", "skipped"),
    [
        ("t3.large", {}, "no accelerator"),
        ("g5.xlarge", {"aws:autoscaling:groupName": "web"}, "Auto Scaling"),
        ("g5.xlarge", {"ml:owner": "ana@example.com", "ml:stage": "dev"}, None),
    ],
)
def test_state_change_says_nothing_for_cpu_managed_or_owned_instances(aws, ec2, deployed_env, lambda_context, itype, tags, skipped):
    iid = seed_ec2.instance(ec2, itype, tags, now=datetime.now(UTC))
    result = load_function("ec2").handler(running_event(iid), lambda_context)
    assert result["posted"] is False
    assert (skipped in result.get("skipped", "")) if skipped else result["problems"] == []
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_state_change_for_a_gone_instance_is_skipped(aws, deployed_env, lambda_context):
    result = load_function("ec2").handler(running_event("i-0123456789abcdef0"), lambda_context)
    assert result["skipped"] == "the instance is gone" and result["posted"] is False

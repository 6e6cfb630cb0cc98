"""The capacity function, called with the JSON in events/ against moto: one seeded account with an
idle no-commitment ODCR, a committed ODCR, a Capacity Block and an Active training plan with free
instances; grace, dry-run, exemption, production, a late instance, throttling, duplicates, restore,
malformed events, the Health notice and the Capacity Block expiry warning."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.errors import BadEventError
from reaper.handlers import handle_kind_event
from reaper.restore.run import restore
from reaper_devkit import seed_capacity, seed_ec2, seed_training
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import capacity
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function, throttle
from tests.helpers.modes import enforce_mode

OWNER = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
CHANGING = {"ec2:CancelCapacityReservation", "ec2:CreateTags", "ec2:DeleteTags", "ec2:CreateCapacityReservation"}


@dataclass
class Account:
    now: datetime
    idle: str
    committed: str
    block: str
    plan: str


@pytest.fixture
def account(aws: Any, ec2: Any, cw: Any, sm: Any) -> Account:
    now = datetime.now(UTC)
    idle = seed_capacity.odcr(ec2, "p4d.24xlarge", 2, OWNER, now=now)
    committed = seed_capacity.odcr(ec2, "p5.48xlarge", 1, OWNER, now=now, committed_until=now + timedelta(days=20))
    block = capacity.capacity_block(ec2, "p5.48xlarge", 2, start=now - timedelta(days=5), end=now + timedelta(days=9), tags=OWNER)
    for cr in (idle, committed, block):
        seed_capacity.used(cw, cr, now)
    plan = capacity.training_plan(
        "us-east-1",
        "llm-pretrain",
        instance_type="ml.p5.48xlarge",
        total=4,
        in_use=1,
        start=now - timedelta(days=2),
        end=now + timedelta(days=12),
        upfront_fee=336_000,
        tags=OWNER,
    )
    seed_training.training_job(sm, "waiting-job", now, hours_ago=0.5, instance_type="ml.p5.48xlarge", tags=OWNER)
    capacity.set_secondary_status("us-east-1", "waiting-job", "Starting")
    return Account(now, idle, committed, block, plan.rsplit("/", 1)[-1])


def state(ec2: Any, cr: str) -> str:
    return str(ec2.describe_capacity_reservations(CapacityReservationIds=[cr])["CapacityReservations"][0]["State"])


def test_enforce_after_the_grace_cancels_only_the_idle_odcr_and_reports_the_rest(
    aws, ec2, cw, account, deployed_env, lambda_context, monkeypatch
):
    # Given the seeded account and a 60-minute grace
    enforce_mode(monkeypatch, 60)
    app = load_function("capacity")
    first = app.handler(event("capacity-schedule.json"), lambda_context)
    assert first["verdicts"]["warn"] == 1 and state(ec2, account.idle) == "active"
    later = account.now + timedelta(minutes=65)
    seed_capacity.used(cw, account.idle, later, hours=2)
    # the first sweep reported every one of them: the warning, and the capacity nobody can cancel
    reported = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id")}
    assert reported[account.idle]["verdict"] == "warn" and "$" in reported[account.idle]["reason"]
    # When the sweep after the grace runs
    with recording() as calls:
        done = handle_kind_event(event("capacity-schedule.json", id="after-grace"), "capacity", app.RUNTIME, now=later)
    # Then only the idle, open, uncommitted ODCR is cancelled, with one changing call on it
    assert done["acted"] == [account.idle] and state(ec2, account.idle) == "cancelled"
    assert state(ec2, account.committed) == "active" and state(ec2, account.block) == "active"
    changing = [(op, p) for op, p in calls.made if f"ec2:{op}" in CHANGING]
    assert changing == [("CancelCapacityReservation", {"CapacityReservationId": account.idle})]
    assert calls.actions <= function_actions("CapacityFunction")
    acted = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id")}
    assert acted[account.idle]["executed"] is True and "reaper restore" in acted[account.idle]["undo"]
    assert "idle instance-hours" in acted[account.idle]["reason"] and "$" in acted[account.idle]["reason"]
    assert set(acted) == {account.idle}  # the others were told once today already, not again each hour
    by_id = reported
    for cr, words in ((account.committed, "committed until"), (account.block, "Capacity Block cannot be cancelled")):
        assert by_id[cr]["verdict"] == "keep" and words in by_id[cr]["reason"], by_id[cr]["reason"]
        assert (
            "idle instance-hours" in by_id[cr]["reason"] and "$" in by_id[cr]["reason"] and "waiting-job (Starting)" in by_id[cr]["reason"]
        )
    plan = by_id[account.plan]
    assert (
        plan["verdict"] == "keep"
        and "3 of 4 reserved instances idle now" in plan["reason"]
        and "/h of its upfront fee idle" in plan["reason"]
    )


def test_dry_run_decides_everything_and_changes_nothing(aws, ec2, account, deployed_env, lambda_context):
    app = load_function("capacity")
    with recording() as calls:
        result = app.handler(event("capacity-schedule.json"), lambda_context)
    assert result["resources"] == 4 and result["acted"] == []
    assert not calls.actions & CHANGING
    by_id = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id")}
    assert by_id[account.idle]["verdict"] == "act" and by_id[account.idle]["executed"] is False
    assert calls.calls["sagemaker:ListTrainingJobs"] == 1  # once per sweep, not once per reservation


@pytest.mark.parametrize("tags", [{"reaper:exempt": "true"}, {"ml:stage": "prod"}], ids=["exempt", "production"])
def test_exempt_and_production_reservations_are_never_cancelled(aws, ec2, cw, deployed_env, lambda_context, monkeypatch, tags):
    enforce_mode(monkeypatch, 0)
    now = datetime.now(UTC)
    cr = seed_capacity.odcr(ec2, tags={**OWNER, **tags}, now=now)
    seed_capacity.used(cw, cr, now)
    app = load_function("capacity")
    result = app.handler(event("capacity-schedule.json"), lambda_context)
    assert result["acted"] == [] and state(ec2, cr) == "active"


def test_protection_tag_set_between_discovery_and_the_cancel_wins(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch, 0)
    now = datetime.now(UTC)
    cr = seed_capacity.odcr(ec2, tags=OWNER, now=now)
    seed_capacity.used(cw, cr, now)
    app = load_function("capacity")
    from reaper.kinds.capacity import actions

    original = actions.current_state

    def tag_then_read(clients: Any, resource: Any) -> Any:
        ec2.create_tags(Resources=[cr], Tags=[{"Key": "reaper:exempt", "Value": "true"}])
        return original(clients, resource)

    monkeypatch.setattr(actions, "current_state", tag_then_read)
    result = app.handler(event("capacity-schedule.json"), lambda_context)
    assert result["acted"] == [] and state(ec2, cr) == "active"


def test_an_instance_launched_into_it_after_discovery_keeps_it(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch, 0)
    now = datetime.now(UTC)
    cr = seed_capacity.odcr(ec2, "p4d.24xlarge", 1, OWNER, now=now)
    seed_capacity.used(cw, cr, now)
    app = load_function("capacity")
    from reaper.kinds.capacity import actions

    original = actions.current_state

    def launch_then_read(clients: Any, resource: Any) -> Any:
        capacity.place(seed_ec2.instance(ec2, "p4d.24xlarge", OWNER, now=now), cr)
        return original(clients, resource)

    monkeypatch.setattr(actions, "current_state", launch_then_read)
    result = app.handler(event("capacity-schedule.json"), lambda_context)
    assert result["acted"] == [] and result["verdicts"]["keep"] == 1 and state(ec2, cr) == "active"
    # someone else's launch is not news to the owner: nothing is posted as done
    assert not [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id") == cr and m.get("executed")]


def test_a_reservation_in_use_or_with_a_metric_gap_is_kept(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch, 0)
    now = datetime.now(UTC)
    busy = seed_capacity.odcr(ec2, tags=OWNER, now=now)
    seed_capacity.used(cw, busy, now, values=[0.0] * 5 + [1.0])  # one instance in it six hours ago
    unknown = seed_capacity.odcr(ec2, tags=OWNER, now=now)  # no UsedInstanceCount at all
    app = load_function("capacity")
    result = app.handler(event("capacity-schedule.json"), lambda_context)
    assert result["acted"] == []
    reasons = {m["id"]: m["reason"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id")}
    assert "used" in reasons.get(busy, "used") and "unknown is not idle" in reasons.get(unknown, "unknown is not idle")
    assert state(ec2, busy) == state(ec2, unknown) == "active"


def test_throttled_cancel_is_an_error_and_the_sweep_goes_on(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch, 0)
    now = datetime.now(UTC)
    a, b = (seed_capacity.odcr(ec2, tags=OWNER, now=now) for _ in range(2))
    for cr in (a, b):
        seed_capacity.used(cw, cr, now)
    app = load_function("capacity")
    throttle(monkeypatch, app.RUNTIME.clients()("ec2"), "cancel_capacity_reservation", {"CapacityReservationId": a})
    result = app.handler(event("capacity-schedule.json"), lambda_context)
    assert result["acted"] == [b] and "ThrottlingException" in result["errors"][0]
    assert state(ec2, a) == "active" and state(ec2, b) == "cancelled"


def test_same_event_three_times_cancels_and_posts_once(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch, 0)
    now = datetime.now(UTC)
    cr = seed_capacity.odcr(ec2, tags=OWNER, now=now)
    seed_capacity.used(cw, cr, now)
    app = load_function("capacity")
    results = [app.handler(event("capacity-schedule.json"), lambda_context) for _ in range(3)]
    assert results[0]["acted"] == [cr] and results[1]["acted"] == results[2]["acted"] == []
    acts = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") == "act"]
    assert [m["id"] for m in acts] == [cr]


def test_restore_makes_a_new_equivalent_reservation(aws, ec2, cw, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch, 0)
    now = datetime.now(UTC)
    cr = seed_capacity.odcr(ec2, "p4d.24xlarge", 3, {**OWNER, "team": "vision"}, now=now)
    seed_capacity.used(cw, cr, now)
    app = load_function("capacity")
    assert app.handler(event("capacity-schedule.json"), lambda_context)["acted"] == [cr]
    # the restore comes after the sweep (its record's time is the sweep's clock, not the seed's: a restore
    # dated before the cancel's record sorted under it when the sweep crossed a second, and failed under load)
    now = datetime.now(UTC)
    said = restore(app.RUNTIME, cr, now, lambda _msg: None)
    assert "new reservation" in said
    new = [r for r in ec2.describe_capacity_reservations()["CapacityReservations"] if r["State"] == "active"]
    assert len(new) == 1 and new[0]["CapacityReservationId"] != cr
    assert (new[0]["InstanceType"], new[0]["TotalInstanceCount"], new[0]["InstanceMatchCriteria"]) == ("p4d.24xlarge", 3, "open")
    tags = {t["Key"]: t["Value"] for t in new[0]["Tags"]}
    assert tags["team"] == "vision" and tags["reaper:restored-from"] == cr
    assert "restored already" in restore(app.RUNTIME, cr, now, lambda _msg: None)  # once, however often asked


def test_health_notice_rejudges_only_the_reservations_it_names(aws, ec2, cw, account, deployed_env, lambda_context, monkeypatch):
    enforce_mode(monkeypatch, 0)
    app = load_function("capacity")
    ev = event("capacity-health-underutilized.json", resources=[account.idle, account.committed])
    ev["detail"]["affectedEntities"] = [{"entityValue": account.idle}]
    result = app.handler(ev, lambda_context)
    assert result["checked"] == sorted([account.idle, account.committed])
    assert result["acted"] == [account.idle] and state(ec2, account.committed) == "active"
    again = app.handler(ev, lambda_context)  # a re-delivery: nothing more
    assert again["acted"] == []


def test_health_notice_naming_a_vanished_reservation_still_judges_the_others(
    aws, ec2, cw, account, deployed_env, lambda_context, monkeypatch
):
    # Given a Health notice naming the idle and the committed reservation, and one EC2 no longer knows
    # (DescribeCapacityReservations by id refuses the whole call for it: InvalidCapacityReservationId.NotFound)
    enforce_mode(monkeypatch, 0)
    vanished = "cr-0123456789abcdef0"
    app = load_function("capacity")
    ev = event("capacity-health-underutilized.json", resources=[account.idle, vanished, account.committed])
    ev["detail"]["affectedEntities"] = [{"entityValue": vanished}]
    # When the capacity function takes it
    with recording() as calls:
        result = app.handler(ev, lambda_context)
    # Then the vanished one is gone, and the others are judged as if it had not been named
    assert result["gone"] == [vanished]
    assert result["checked"] == sorted([account.idle, account.committed])
    assert result["acted"] == [account.idle] and result["verdicts"][account.committed] == "keep"
    assert state(ec2, account.idle) == "cancelled" and state(ec2, account.committed) == "active"
    # and discovery named them by CapacityReservationIds, then (refused for the vanished one) read the active list once
    named = [p.get("CapacityReservationIds") for op, p in calls.made if op == "DescribeCapacityReservations" and "Filters" in p]
    assert named == [sorted([account.idle, vanished, account.committed]), None]


def test_health_notice_of_another_kind_or_naming_nothing_does_nothing(account, deployed_env, lambda_context):
    app = load_function("capacity")
    other = event("capacity-health-underutilized.json")
    other["detail"]["eventTypeCode"] = "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"
    assert "skipped" in app.handler(other, lambda_context)
    nothing = event("capacity-health-underutilized.json", resources=[])
    nothing["detail"]["affectedEntities"] = []
    assert app.handler(nothing, lambda_context)["skipped"] == "the event names no capacity reservation"


def test_capacity_block_ending_tells_each_owner_running_on_it_once(aws, ec2, deployed_env, lambda_context):
    now = datetime.now(UTC)
    block = capacity.capacity_block(ec2, "p5.48xlarge", 2, start=now - timedelta(days=1), end=now + timedelta(minutes=40))
    ana = seed_ec2.instance(ec2, "p5.48xlarge", {"ml:owner": "ana@example.com"}, now=now)
    bo = seed_ec2.instance(ec2, "p5.48xlarge", {"ml:owner": "bo@example.com"}, now=now)
    for iid in (ana, bo):
        capacity.place(iid, block)
    app = load_function("capacity")
    ev = event("capacity-block-expiring.json", resources=[f"arn:aws:ec2:us-east-1:123456789012:capacity-reservation/{block}"])
    ev["detail"]["capacity-reservation-id"] = block
    result = app.handler(ev, lambda_context)
    assert result["told"] == ["ana@example.com", "bo@example.com"] and result["instances"] == sorted([ana, bo])
    assert app.handler(ev, lambda_context)["told"] == []  # re-delivered: told once
    notices = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("type") == "notice"]
    assert sorted(n["owner"] for n in notices) == ["ana@example.com", "bo@example.com"]
    assert all("checkpoint" in n["title"] for n in notices)


def test_the_sweep_warns_those_on_a_block_ending_before_the_next_sweep(aws, ec2, cw, deployed_env, lambda_context):
    now = datetime.now(UTC)
    block = capacity.capacity_block(ec2, "p5.48xlarge", 1, start=now - timedelta(days=1), end=now + timedelta(minutes=50), tags=OWNER)
    seed_capacity.used(cw, block, now, values=[1.0] * 30)
    capacity.place(seed_ec2.instance(ec2, "p5.48xlarge", {"ml:owner": "ana@example.com"}, now=now), block)
    app = load_function("capacity")
    app.handler(event("capacity-schedule.json"), lambda_context)
    [message] = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id") == block]
    assert message["verdict"] == "keep" and "checkpoint now" in message["reason"] and "ana@example.com" in message["reason"]


@pytest.mark.parametrize(
    ("name", "detail"),
    [
        ("capacity-block-expiring.json", {"capacity-reservation-id": "not-an-id"}),
        ("capacity-block-expiring.json", {}),
        ("capacity-health-underutilized.json", {"eventTypeCode": ""}),
    ],
)
def test_malformed_events_are_refused_with_one_line(deployed_env, name, detail):
    app = load_function("capacity")
    with pytest.raises(BadEventError, match="detail"):
        handle_kind_event(event(name, detail=detail), "capacity", app.RUNTIME)

"""A production endpoint's configuration is read only when its daily message is due: the action log
says which were told today (one Query), and those are not read again until the next UTC day, or
until the endpoint changes; nor is a message's claim tried again once today's log shows it. A log
that cannot be read costs the reads and the claims, never a message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.core.model import Outcome
from reaper.sweep import pipeline
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import sagemaker_inference
from tests.conftest import drain, load_function, throttle

PROD = {"ml:owner": "ops@example.com", "ml:stage": "prod"}
DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
MORNING = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
CONFIG_READ = "sagemaker:DescribeEndpointConfig"


def seed(sm) -> None:
    """Quiet production endpoints of the three types that have a daily message, and a quiet dev one
    (in dry-run it too is only told, once a day)."""
    se.classic(sm, "prod-classic", PROD, instance_type="ml.g4dn.xlarge")
    se.components(sm, "prod-ic", {"prod-ic-a": 2}, PROD)
    se.asynchronous(sm, "prod-async", PROD)
    se.classic(sm, "dev-classic", DEV)
    for name in ("prod-classic", "prod-ic", "prod-async", "dev-classic"):
        se.age(name, MORNING, 300)


def sweep(app, now: datetime, event_id: str) -> tuple[dict[str, Outcome], dict[str, int]]:
    with recording() as calls:
        outcomes = pipeline.sweep(app.RUNTIME, ["endpoint"], now, event_id=event_id)
    return {o.resource.id: o for o in outcomes}, calls.by_operation()


def test_production_configurations_are_read_once_a_day_when_their_message_is_due(aws, sm, deployed_env):
    # Given quiet production endpoints, and the first sweep of the day (every message due)
    seed(sm)
    app = load_function("endpoint")
    first, ops = sweep(app, MORNING, "sweep-1")
    told = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert ops[CONFIG_READ] == 4 and set(told) == {"prod-classic", "prod-ic", "prod-async", "dev-classic"}
    # When the next sweep of the day runs (dry-run: nothing is acted on, every endpoint is only told)
    later, ops = sweep(app, MORNING + timedelta(minutes=30), "sweep-2")
    # Then no configuration is read, and nothing is posted
    assert CONFIG_READ not in ops and ops["dynamodb:Query"] >= 1
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []
    # And no message claim is tried again: today's log shows each was claimed (courier._told_today)
    assert "dynamodb:PutItem" not in ops
    # And each endpoint has the verdict and action it had, with the cost today's message gave
    for name in ("prod-classic", "prod-ic", "prod-async", "dev-classic"):
        before, after = first[name], later[name]
        assert (after.verdict.value, after.decision.action) == (before.verdict.value, before.decision.action)
        assert after.decision.action in ("delete", "scale-to-zero") and "as told at 09:00 UTC today" in after.reason
        assert after.resource.hourly_usd == before.resource.hourly_usd and after.resource.instance_type == before.resource.instance_type
    assert first["prod-classic"].resource.hourly_usd is not None
    assert {n: o.verdict.value for n, o in later.items()} == {
        "prod-classic": "exempt",
        "prod-ic": "exempt",
        "prod-async": "exempt",
        "dev-classic": "act",
    }
    # When the first sweep of the next day runs
    nxt, ops = sweep(app, MORNING + timedelta(days=1), "sweep-3")
    # Then the configurations are read again and the daily messages posted again
    assert ops[CONFIG_READ] == 4
    assert {m["id"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])} == set(told)
    assert all("as told" not in o.reason for o in nxt.values())


def test_an_endpoint_changed_since_its_message_is_read_again_and_told_once(aws, sm, deployed_env):
    # Given a production endpoint told at 09:00, then updated at 09:05
    se.classic(sm, "prod-classic", PROD)
    se.age("prod-classic", MORNING, 300)
    app = load_function("endpoint")
    sweep(app, MORNING, "sweep-1")
    assert len(drain(aws, deployed_env["REAPER_QUEUE_URL"])) == 1
    sagemaker_inference.set_times("prod-classic", MORNING - timedelta(minutes=300), modified=MORNING + timedelta(minutes=5))
    # When a sweep runs once it is quiet again (12:00, past its 2 h window)
    outcomes, ops = sweep(app, MORNING + timedelta(hours=3), "sweep-2")
    # Then its configuration is read again (what it would be told may differ), and the same message is not posted twice
    assert ops[CONFIG_READ] == 1 and "as told" not in outcomes["prod-classic"].reason
    assert outcomes["prod-classic"].verdict.value == "exempt" and outcomes["prod-classic"].decision.action == "delete"
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_a_log_that_cannot_be_read_costs_the_reads_not_a_message(aws, sm, deployed_env, monkeypatch):
    # Given production endpoints told this morning, and today's log throttled on the next sweep
    seed(sm)
    app = load_function("endpoint")
    sweep(app, MORNING, "sweep-1")
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    throttle(monkeypatch, app.RUNTIME.log.client, "query", when={"KeyConditionExpression": "pk = :pk AND sk >= :from"})
    # When the sweep runs
    outcomes, ops = sweep(app, MORNING + timedelta(minutes=30), "sweep-2")
    # Then every configuration is read as if none had been told, no verdict is an error, and no message is posted twice
    assert ops[CONFIG_READ] == 4 and ops["dynamodb:PutItem"] == 4  # each message claimed again, and refused
    assert {o.verdict.value for n, o in outcomes.items() if n.startswith("prod")} == {"exempt"}
    assert all("as told" not in o.reason for o in outcomes.values())
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_a_message_told_in_dry_run_does_not_stand_in_for_enforce(aws, sm, deployed_env, monkeypatch):
    # Given a production endpoint told this morning in dry-run, and the admin switching to enforce
    se.classic(sm, "prod-classic", PROD)
    se.age("prod-classic", MORNING, 300)
    sweep(load_function("endpoint"), MORNING, "sweep-1")
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    monkeypatch.setenv("REAPER_MODE", "enforce")
    app = load_function("endpoint")
    # When the enforce sweep runs
    outcomes, ops = sweep(app, MORNING + timedelta(minutes=30), "sweep-2")
    # Then its configuration is read and the enforce message is due (its claim names the mode); nothing changed
    assert ops[CONFIG_READ] == 1 and outcomes["prod-classic"].verdict.value == "exempt"
    assert [m["mode"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])] == ["enforce"]
    assert sm.describe_endpoint(EndpointName="prod-classic")["EndpointStatus"] == "InService"


def test_an_async_endpoint_told_today_that_gets_work_is_kept(aws, sm, cw, deployed_env):
    # Given a production async endpoint told at 09:00 that it would go to zero
    se.asynchronous(sm, "prod-async", PROD)
    se.age("prod-async", MORNING, 300)
    app = load_function("endpoint")
    sweep(app, MORNING, "sweep-1")
    drain(aws, deployed_env["REAPER_QUEUE_URL"])
    # When it processes requests (async endpoints publish no Invocations) and the next sweep runs
    later = MORNING + timedelta(minutes=30)
    se.processed(cw, "prod-async", later, [4])
    outcomes, ops = sweep(app, later, "sweep-2")
    # Then its configuration is still not read, but its requests are: it is in use, not "as told"
    o = outcomes["prod-async"]
    assert CONFIG_READ not in ops and o.verdict.value == "exempt" and o.decision.action is None
    assert "4 invocations" in o.reason and "as told" not in o.reason


def test_in_enforce_a_dev_endpoint_that_may_be_acted_on_is_read_every_sweep(aws, sm, deployed_env, monkeypatch):
    # Given enforce with a long grace, and a quiet dev endpoint (and a production one, told once a day)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "600")
    se.classic(sm, "dev-classic", DEV)
    se.classic(sm, "prod-classic", PROD)
    for name in ("dev-classic", "prod-classic"):
        se.age(name, MORNING, 300)
    app = load_function("endpoint")
    first, ops1 = sweep(app, MORNING, "sweep-1")
    # When the next sweep of the day runs
    later, ops2 = sweep(app, MORNING + timedelta(minutes=30), "sweep-2")
    # Then the dev endpoint's configuration is read both times (a warning, then an action may follow); production's once
    assert ops1[CONFIG_READ] == 2 and ops2[CONFIG_READ] == 1
    assert first["dev-classic"].verdict.value == later["dev-classic"].verdict.value == "warn"
    assert "as told" not in later["dev-classic"].reason and "as told" in later["prod-classic"].reason

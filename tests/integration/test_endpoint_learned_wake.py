"""Learned wake, replayed: eight dev endpoints with labelled traffic, 14 days of history, then a sweep
every 15 minutes over 48 simulated hours through the pipeline's decision (tags, the kind's rule,
production guard). The restore schedule is played by bringing an endpoint back at its wake time."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from reaper import kinds
from reaper.core.model import Resource, Verdict
from reaper.core.rhythm import learn
from reaper.core.settings import Settings
from reaper.core.timeutil import parse_instant
from reaper.handlers import handle_kind_event
from reaper.kinds.endpoint.model import PERIOD, EndpointDetails, EndpointFacts, EndpointSignal, VariantSpec, VariantSummary
from reaper.sweep.pipeline import decide
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.seed import put_series
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function
from tests.helpers.wake import ENFORCE_NOW, GROUP, RESTORE_ARN, WAKE_TARGETS, deploy_wake

START = datetime(2026, 11, 17, 0, 0, tzinfo=UTC)  # a Tuesday
HOURS = 48
STEP = timedelta(minutes=15)


def _between(t: datetime, start: tuple[int, int], minutes: int) -> bool:
    begin = t.replace(hour=start[0], minute=start[1], second=0, microsecond=0)
    return begin <= t < begin + timedelta(minutes=minutes)


TRAFFIC: dict[str, tuple[bool, Callable[[datetime], bool]]] = {  # name: (periodic, calls in the 5-minute period from t)
    "office-api": (True, lambda t: t.weekday() < 5 and 9 <= t.hour < 17),
    "twice-a-day-demo": (True, lambda t: _between(t, (10, 0), 30) or _between(t, (15, 0), 30)),
    "nightly-batch": (True, lambda t: _between(t, (2, 0), 45)),
    "six-hourly-refresh": (True, lambda t: t.hour % 6 == 0 and t.minute < 20),
    "weekday-report": (True, lambda t: t.weekday() < 5 and _between(t, (7, 0), 30)),
    "forgotten-tutorial": (False, lambda t: t == START - timedelta(days=13, hours=-14)),
    "always-busy": (False, lambda t: True),
    "never-called": (False, lambda t: False),
}


@dataclass
class Replayed:
    name: str
    up: bool = True
    changed_at: datetime = START - timedelta(days=30)
    wake_at: datetime | None = None
    prewarm_until: datetime | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("idle", "raw_idle", "zero_idle", "prewarm", "disrupted", "zeroed_in_traffic"), 0)
    )


def _resource(e: Replayed) -> Resource:
    facts = EndpointFacts(config=f"{e.name}-cfg", variants=(VariantSummary("AllTraffic", 1, 1),))
    return Resource(
        "endpoint",
        e.name,
        f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{e.name}",
        "us-east-1",
        "InService",
        tags={"ml:stage": "dev", "ml:owner": "ana@example.com"},
        created_at=e.changed_at,
        changed_at=e.changed_at,
        facts=facts,
    )


def _signal(name: str, hourly: list[tuple[datetime, float]], now: datetime) -> EndpointSignal:
    calls = TRAFFIC[name][1]
    start = now - timedelta(minutes=180)
    traffic = [(start + PERIOD * k, 3.0) for k in range(36) if calls(start + PERIOD * k)]
    spec = VariantSpec("AllTraffic", "ml.g5.xlarge", 1, f"{name}-model", None)
    details = EndpointDetails(type="classic", config_name=f"{name}-cfg", config_exists=True, variants=(spec,))
    return EndpointSignal(start=start, end=now, traffic=traffic, details=details, rhythm=learn(hourly, now))


def _history(name: str) -> list[tuple[datetime, float]]:
    """Hourly Invocations sums from 14 days before the replay to its end (learn reads only what is past)."""
    calls, first = TRAFFIC[name][1], START - timedelta(days=14)
    hours = [first + timedelta(hours=h) for h in range((14 * 24) + HOURS)]
    return [(h, 1.0) for h in hours if any(calls(h + PERIOD * k) for k in range(12))]


def replay(settings: Settings) -> dict[str, Replayed]:
    kind = kinds.get("endpoint")
    state = {name: Replayed(name) for name in TRAFFIC}
    histories = {name: _history(name) for name in TRAFFIC}
    t, end = START, START + timedelta(hours=HOURS)
    while t < end:
        for e in state.values():
            _period(e, t, settings)
            if (t - START) % STEP == timedelta(0) and e.up:
                _sweep(kind, e, histories[e.name], settings, t)
        t += PERIOD
    return state


def _period(e: Replayed, t: datetime, settings: Settings) -> None:
    """One 5-minute period: the schedule fires, calls arrive (or find it at zero), idle periods are counted."""
    if not e.up and e.wake_at is not None and e.wake_at <= t:  # the restore schedule: back, recorded
        e.up, e.changed_at, e.prewarm_until, e.wake_at = True, t, t + timedelta(minutes=settings.endpoint_wake_lead_minutes), None
    calls = TRAFFIC[e.name][1]
    if calls(t) and not e.up:
        e.counts["disrupted"] += 1
    window = settings.idle_for("endpoint") // 5
    if not calls(t):
        e.counts["raw_idle"] += 1
    if not any(calls(t - PERIOD * k) for k in range(window)):
        e.counts["idle"] += 1
        e.counts["zero_idle"] += not e.up
    if e.up and e.prewarm_until is not None and t < e.prewarm_until and not calls(t):
        e.counts["prewarm"] += 1


def _sweep(kind: kinds.Kind, e: Replayed, history: list[tuple[datetime, float]], settings: Settings, now: datetime) -> None:
    decision, _view = decide(kind, _resource(e), _signal(e.name, history, now), settings, now)
    if decision.verdict is not Verdict.ACT:
        return
    e.counts["zeroed_in_traffic"] += TRAFFIC[e.name][1](now) or TRAFFIC[e.name][1](now - PERIOD)
    e.up = False
    wake = decision.evidence.get("wake_at")
    e.wake_at = parse_instant(str(wake)) if wake else None


def _settings(learned: bool) -> Settings:
    return Settings(
        mode="enforce",
        grace_minutes=0,
        endpoint_learned_wake=learned,
        restore_function_arn="arn:aws:lambda:us-east-1:123456789012:function:restore",
        scheduler_role_arn="arn:aws:iam::123456789012:role/scheduler",
    )


def figures(state: dict[str, Replayed]) -> dict[str, float]:
    total = {k: sum(e.counts[k] for e in state.values()) / 12 for k in ("idle", "raw_idle", "zero_idle", "prewarm")}
    periodic = sum(e.counts["disrupted"] for e in state.values() if TRAFFIC[e.name][0])
    zeroed = sum(e.counts["zeroed_in_traffic"] for e in state.values())
    # pre-warm hours are idle hours it is up in (the report ends its saving at the restore): counted
    # against the share once; `strict_share` takes them off the reclaimed hours a second time
    net = total["zero_idle"] / total["idle"]
    strict = (total["zero_idle"] - total["prewarm"]) / total["idle"]
    return {
        **total,
        "net_share": net,
        "strict_share": strict,
        "raw_share": total["zero_idle"] / total["raw_idle"],
        "disruptions": periodic,
        "zeroed_in_traffic": zeroed,
    }


def test_learned_wake_replay_disrupts_no_periodic_traffic_and_reclaims_idle_hours():
    # Given eight dev endpoints with labelled traffic and 14 days of history, learned wake on
    # When a sweep runs every 15 minutes for 48 hours
    learned = figures(replay(_settings(learned=True)))
    # Then no call of periodic traffic finds its endpoint at zero, and at least 95 % of the idle
    # endpoint-hours (no call in the idle window) are at zero, net of the pre-warm hours
    print(f"learned wake: {learned}")
    assert learned["disruptions"] == 0 and learned["zeroed_in_traffic"] == 0
    assert learned["net_share"] >= 0.95


def test_without_learned_wake_the_same_replay_disrupts_periodic_traffic():
    # Given the same replay without learned wake (the reaper before it)
    before = figures(replay(_settings(learned=False)))
    print(f"without learned wake: {before}")
    # Then callers find periodic endpoints at zero (and nothing is pre-warmed)
    assert before["disruptions"] > 0 and before["prewarm"] == 0


# -- the same through the endpoint function, against the moto kit ---------------------------------

WEDNESDAY = datetime(2026, 12, 9, 12, 40, tzinfo=UTC)
DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}


@pytest.fixture
def learned(aws, sm, cw, deployed_env, monkeypatch):
    deploy_wake(aws, monkeypatch, {**ENFORCE_NOW, "REAPER_ENDPOINT_LEARNED_WAKE": "true", **WAKE_TARGETS})
    se.classic(sm, "demo-dev", DEV)  # a demo at 15:00 every day for the last week
    se.classic(sm, "pinned-dev", {**DEV, "reaper:wake": "mon-fri 12:00-18:00"})  # its owner pinned its hours
    se.classic(sm, "tutorial-dev", DEV)  # never called
    demos = [(WEDNESDAY.replace(hour=15, minute=10) - timedelta(days=d), 6.0) for d in range(1, 8)]
    put_series(cw, "AWS/SageMaker", "Invocations", {"EndpointName": "demo-dev", "VariantName": "AllTraffic"}, demos)
    return load_function("endpoint")


def _schedules(aws) -> dict[str, dict]:
    sched = aws.client("scheduler")
    return {s["Name"]: sched.get_schedule(GroupName=GROUP, Name=s["Name"]) for s in sched.list_schedules(GroupName=GROUP)["Schedules"]}


def test_the_endpoint_function_learns_the_usual_hour_and_schedules_the_return_before_it(aws, sm, learned, deployed_env, lambda_context):
    # Given three quiet dev endpoints at 12:40 UTC: a daily 15:00 demo, hours pinned 12:00-18:00, one never called
    # When the endpoint function sweeps
    with recording() as calls:
        result = handle_kind_event(event("endpoint-schedule.json"), "endpoint", learned.RUNTIME, now=WEDNESDAY)
    # Then the pinned one is kept in its hours; the demo and the tutorial go to zero
    assert sorted(result["acted"]) == ["demo-dev", "tutorial-dev"] and result["errors"] == []
    # And the demo comes back at 14:30, the lead before its usual 15:00, through the restore function
    (only,) = _schedules(aws).values()
    assert only["ScheduleExpression"] == "at(2026-12-09T14:30:00)" and only["Target"]["Arn"] == RESTORE_ARN
    assert json.loads(only["Target"]["Input"])["name"] == "demo-dev"
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert "back at Wed 2026-12-09 14:30 UTC, 30 min before its usual traffic from 15:00" in messages["demo-dev"]["reason"]
    assert "stays at zero until restored" in messages["tutorial-dev"]["reason"]
    assert "pinned-dev" not in messages and "pinned-dev" in {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    # And the restore record keeps the pre-warm, which the report does not count as saved
    record = learned.RUNTIME.log.latest_restore("endpoint", "demo-dev")
    assert record["prewarm_minutes"] == 30 and record["usual_start"].startswith("2026-12-09T15:00")
    assert calls.actions <= function_actions("EndpointFunction")
    assert calls.ungranted("EndpointFunction") == []

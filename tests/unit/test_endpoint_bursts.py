"""Learned wake by bursts: recurring bursts learned from 5-minute Invocations, zero between them, back just
before each by the measured start-up; on by default where a wake can be scheduled. docs/kinds/endpoint.md,
"Learned wake"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper import kinds
from reaper.core.errors import ConfigError
from reaper.core.model import Resource, Verdict
from reaper.core.rhythm import learn_bursts
from reaper.core.settings import Settings
from reaper.kinds.endpoint.model import PERIOD, EndpointDetails, EndpointFacts, EndpointSignal, VariantSpec, VariantSummary
from reaper.kinds.endpoint.rules import may_act
from reaper.kinds.endpoint.settings import EndpointSettings
from reaper.sweep.pipeline import decide

NOW = datetime(2026, 12, 2, 10, 50, tzinfo=UTC)  # a Wednesday, 20 minutes after its usual 10:00-10:30 burst
KIND = kinds.get("endpoint")
WIRED = {
    "restore_function_arn": "arn:aws:lambda:us-east-1:123456789012:function:restore",
    "scheduler_role_arn": "arn:aws:iam::123456789012:role/scheduler",
}
DEV = {"ml:stage": "dev", "ml:owner": "ana@example.com"}


def daily(start: tuple[int, int], minutes: int, days: int = 14, until: datetime = NOW) -> list[tuple[datetime, float]]:
    """Calls every 5 minutes of a daily burst, over the last `days` days (up to `until`)."""
    out = []
    for d in range(days + 1):
        begin = (until - timedelta(days=d)).replace(hour=start[0], minute=start[1], second=0, microsecond=0)
        out += [(begin + PERIOD * k, 4.0) for k in range(minutes // 5) if begin + PERIOD * k < until]
    return sorted(out)


def resource(tags: dict[str, str] | None = None) -> Resource:
    return Resource(
        "endpoint",
        "demo",
        "arn:aws:sagemaker:us-east-1:123456789012:endpoint/demo",
        "us-east-1",
        "InService",
        tags=DEV if tags is None else tags,
        created_at=NOW - timedelta(days=3),
        changed_at=NOW - timedelta(days=3),
        facts=EndpointFacts(config="demo-cfg", variants=(VariantSummary("AllTraffic", 1, 1),)),
    )


def signal(history: list[tuple[datetime, float]], now: datetime = NOW, startup: timedelta | None = None) -> EndpointSignal:
    details = EndpointDetails("classic", "demo-cfg", True, (VariantSpec("AllTraffic", "ml.g5.xlarge", 1, "m", None),))
    traffic = [(t, v) for t, v in history if now - timedelta(minutes=180) <= t < now]
    return EndpointSignal(
        start=now - timedelta(minutes=180),
        end=now,
        traffic=traffic,
        details=details,
        rhythm=learn_bursts(history, now),
        startup=startup,
    )


def settings(**kw: object) -> Settings:
    return Settings(mode="enforce", grace_minutes=0).with_kind(EndpointSettings(**WIRED, **kw))  # type: ignore[arg-type]


# -- what is learned ---------------------------------------------------------------------------------


def test_a_daily_burst_is_learned_with_its_start_and_length():
    # Given 14 days of calls from 10:00 to 10:30
    rhythm = learn_bursts(daily((10, 0), 30), NOW)
    # Then the burst is 10:00-10:30 (not the whole hour), and the next one is tomorrow at 10:00
    assert rhythm.last_burst(NOW) == (NOW.replace(hour=10, minute=0), NOW.replace(hour=10, minute=30))
    assert rhythm.needed_at(NOW.replace(hour=10, minute=25)) and not rhythm.needed_at(NOW.replace(hour=10, minute=35))
    assert rhythm.next_start(NOW) == datetime(2026, 12, 3, 10, 0, tzinfo=UTC)


def test_several_bursts_a_day_are_each_learned():
    # Given a refresh every 6 hours, 20 minutes long
    history = sorted(p for h in (0, 6, 12, 18) for p in daily((h, 0), 20))
    rhythm = learn_bursts(history, NOW)
    # Then the next burst is at 12:00 today, and 06:20-12:00 is between bursts
    assert rhythm.next_start(NOW) == NOW.replace(hour=12, minute=0)
    assert not rhythm.needed_at(NOW.replace(hour=7)) and rhythm.needed_at(NOW.replace(hour=6, minute=15))


def test_a_weekday_burst_is_learned_from_both_weeks_and_not_on_the_weekend():
    # Given a report at 07:00-07:30 on weekdays only, over two weeks, and seen on just two days of the last seven
    history = [(t, v) for t, v in daily((7, 0), 30) if t.weekday() < 5 and t < NOW - timedelta(days=5)]
    rhythm = learn_bursts(history, NOW)
    # Then its weekday slots are usual (both weeks), its weekend ones not
    assert rhythm.needed_at(datetime(2026, 12, 4, 7, 10, tzinfo=UTC))  # Friday
    assert not rhythm.needed_at(datetime(2026, 12, 5, 7, 10, tzinfo=UTC))  # Saturday


def test_a_short_pause_inside_a_burst_does_not_end_it_and_a_one_off_is_not_a_burst():
    # Given a burst 10:00-10:15 and 10:25-10:40 every day (a 10-minute pause), and one call 9 days ago at 03:00
    history = sorted(daily((10, 0), 15) + daily((10, 25), 15) + [(NOW.replace(hour=3) - timedelta(days=9), 1.0)])
    rhythm = learn_bursts(history, NOW)
    # Then it is one burst 10:00-10:40, and 03:00 is not usual
    assert rhythm.last_burst(NOW) == (NOW.replace(hour=10, minute=0), NOW.replace(hour=10, minute=40))
    assert not rhythm.needed_at(NOW.replace(hour=3))


# -- what the rule does with it --------------------------------------------------------------------


def test_after_its_usual_burst_it_goes_to_zero_and_comes_back_its_start_up_before_the_next():
    # Given a daily 10:00-10:30 burst, calls until 10:30 today, now 10:50, and its last restore took 8 minutes
    sig = signal(daily((10, 0), 30), startup=timedelta(minutes=8))
    decision, _ = decide(KIND, resource(), sig, settings(), NOW)
    # Then it goes to zero now (not after the 120-minute idle window), back at 09:45 tomorrow: 8 min
    # start-up, a quarter more and 5 min for the schedule, in whole 5 minutes (15 min)
    assert decision.verdict is Verdict.ACT, decision.reason
    assert "its usual burst (10:00-10:30 UTC" in decision.reason and "is over" in decision.reason
    assert decision.evidence["wake_at"].startswith("2026-12-03T09:45") and decision.evidence["prewarm_minutes"] == 15
    assert "lead from its measured start-up of 8 m" in decision.reason


def test_unmeasured_the_configured_lead_is_used():
    decision, _ = decide(KIND, resource(), signal(daily((10, 0), 30)), settings(), NOW)
    assert decision.evidence["wake_at"].startswith("2026-12-03T09:30") and "the configured lead" in decision.reason


def test_in_its_burst_and_too_soon_after_it_it_is_kept():
    history = daily((10, 0), 30)
    # Given calls until now, in its usual burst
    during = NOW.replace(hour=10, minute=20)
    assert decide(KIND, resource(), signal(history, during), settings(), during)[0].verdict is Verdict.KEEP
    # And 10 minutes after the burst: less than BURST_TAIL (metrics land late)
    soon = NOW.replace(hour=10, minute=40)
    assert decide(KIND, resource(), signal(history, soon), settings(), soon)[0].verdict is Verdict.KEEP


def test_calls_outside_its_bursts_keep_the_whole_idle_window():
    # Given its usual burst, and calls today at 11:00-11:10 as well (past the burst and its tail: not usual)
    extra = [(NOW.replace(hour=11, minute=0), 2.0), (NOW.replace(hour=11, minute=5), 2.0)]
    later = NOW.replace(hour=11, minute=40)
    # Then it is kept: those calls count against the idle window as before
    decision, _ = decide(KIND, resource(), signal(sorted(daily((10, 0), 30) + extra), later), settings(), later)
    assert decision.verdict is Verdict.KEEP and "invocations in the last 2 h" in decision.reason


def test_a_burst_that_runs_a_little_late_is_still_its_burst():
    # Given the usual 10:00-10:30 burst running until 10:40 today: the tail after its end is the burst's
    late = sorted(daily((10, 0), 30) + [(NOW.replace(hour=10, minute=35), 2.0)])
    decision, _ = decide(KIND, resource(), signal(late, NOW + timedelta(minutes=5)), settings(), NOW + timedelta(minutes=5))
    # Then it goes to zero once quiet for the tail after its last call
    assert decision.verdict is Verdict.ACT and "0 invocations since 10:40 UTC" in decision.reason


def test_an_owners_idle_minutes_tag_stands_against_the_burst():
    decision, _ = decide(KIND, resource({**DEV, "reaper:idle-minutes": "90"}), signal(daily((10, 0), 30)), settings(), NOW)
    assert decision.verdict is Verdict.KEEP


def test_production_and_exempt_are_never_zeroed_after_their_burst():
    for tags in ({**DEV, "reaper:exempt": "true"}, {"ml:stage": "prod", "ml:owner": "ana@example.com"}):
        decision, _ = decide(KIND, resource(tags), signal(daily((10, 0), 30)), settings(), NOW)
        assert decision.verdict is Verdict.EXEMPT, (tags, decision)


def test_may_act_reads_the_configuration_once_the_burst_is_over():
    # the signals read: details are read for an endpoint whose burst is over, as for an idle one
    assert may_act(resource(), signal(daily((10, 0), 30)), settings(), NOW)
    assert not may_act(resource(), signal(daily((10, 0), 30)), settings(endpoint_learned_wake=False), NOW)


# -- on by default ---------------------------------------------------------------------------------


def test_learned_wake_is_on_by_default_where_a_wake_can_be_scheduled():
    assert EndpointSettings(**WIRED).endpoint_learned_wake
    assert (
        Settings.from_env({"REAPER_RESTORE_FUNCTION_ARN": WIRED["restore_function_arn"], "REAPER_SCHEDULER_ROLE_ARN": "r"})
        .of(EndpointSettings)
        .endpoint_learned_wake
    )
    # Without the restore function (the CLI on a laptop) it is off, unless asked for, which is refused
    assert not Settings().of(EndpointSettings).endpoint_learned_wake
    with pytest.raises(ConfigError, match="REAPER_RESTORE_FUNCTION_ARN"):
        Settings.from_env({"REAPER_ENDPOINT_LEARNED_WAKE": "true"}).of(EndpointSettings)
    assert (
        not Settings.from_env(
            {**{"REAPER_ENDPOINT_LEARNED_WAKE": "false"}, "REAPER_RESTORE_FUNCTION_ARN": "a", "REAPER_SCHEDULER_ROLE_ARN": "r"}
        )
        .of(EndpointSettings)
        .endpoint_learned_wake
    )

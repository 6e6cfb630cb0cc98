"""The endpoint rules, pure: traffic vs no traffic vs young, each endpoint type, stages, off-hours."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper import kinds
from reaper.core.errors import ConfigError
from reaper.core.model import Mode, Resource, Verdict
from reaper.core.settings import Settings
from reaper.kinds.endpoint import DECLARATION
from reaper.kinds.endpoint.events import status_of
from reaper.kinds.endpoint.model import (
    ASYNC,
    CLASSIC,
    COMPONENTS,
    Component,
    EndpointDetails,
    EndpointFacts,
    EndpointSignal,
    VariantSpec,
    VariantSummary,
    quiet_text,
)
from reaper.kinds.endpoint.settings import EndpointSettings
from reaper.kinds.endpoint.wake import next_work_start, schedule_name
from reaper.sweep.pipeline import decide

NOW = datetime(2026, 12, 2, 14, 0, tzinfo=UTC)  # a Wednesday, 14:00 UTC
KIND = kinds.get("endpoint")
DEV = {"ml:stage": "dev", "ml:owner": "ana@example.com"}


def resource(
    tags: dict[str, str] | None = None, state: str = "InService", age: float = 300, changed: float | None = None, count: int = 1
) -> Resource:
    created = NOW - timedelta(minutes=age)
    return Resource(
        kind="endpoint",
        id="ep",
        arn="arn:aws:sagemaker:us-east-1:123456789012:endpoint/ep",
        region="us-east-1",
        state=state,
        tags=DEV if tags is None else tags,
        instance_count=count,
        created_at=created,
        changed_at=NOW - timedelta(minutes=changed) if changed is not None else created,
        facts=EndpointFacts(
            config="ep-config", variants=(VariantSummary("AllTraffic", current=count, desired=count, serverless=False, managed_min=None),)
        ),
    )


def details(kind_of: str = CLASSIC, **kw: Any) -> EndpointDetails:
    variant = VariantSpec("AllTraffic", "ml.g5.xlarge", 1, None if kind_of == COMPONENTS else "m", kw.pop("managed_min", None))
    return EndpointDetails(type=kind_of, config_name="ep-config", config_exists=kw.pop("config_exists", True), variants=(variant,), **kw)


def signal(
    traffic: list[tuple[datetime, float]] | None = None,
    backlog: list[tuple[datetime, float]] | None = None,
    d: EndpointDetails | None = None,
) -> EndpointSignal:
    return EndpointSignal(start=NOW - timedelta(minutes=180), end=NOW, traffic=traffic or [], backlog=backlog or [], details=d or details())


def verdict(r: Resource, sig: Any, settings: Settings | None = None, now: datetime = NOW):
    return decide(KIND, r, sig, settings or Settings(), now)[0]


def test_traffic_in_the_window_keeps_it():
    # Given 3 invocations 20 minutes ago
    sig = signal([(NOW - timedelta(minutes=20), 3.0)])
    # When decided Then kept, with the count as evidence
    d = verdict(resource(), sig)
    assert d.verdict is Verdict.KEEP and "3 invocations in the last 2 h 00 m" in d.reason


def test_traffic_before_the_window_is_idle_and_says_how_long():
    # Given the last invocations in the period that ended 2 h 10 m ago
    sig = signal([(NOW - timedelta(minutes=135), 4.0)])
    d = verdict(resource(), sig)
    assert d.verdict is Verdict.ACT and d.action == "delete"
    assert d.reason.startswith("0 invocations in 2 h 10 m")


def test_a_period_only_partly_inside_the_window_still_counts():
    sig = signal([(NOW - timedelta(minutes=123), 1.0)])  # 123..118 min ago overlaps the 120-min window
    assert verdict(resource(), sig).verdict is Verdict.KEEP


def test_no_data_is_no_traffic_only_when_in_service_for_the_whole_window():
    # Given no datapoints at all
    # Then an endpoint InService for 2 h 10 m is idle ...
    d = verdict(resource(age=130), signal())
    assert d.verdict is Verdict.ACT and d.reason.startswith("0 invocations in 2 h 10 m")
    # ... and one created an hour ago is kept: no data is not evidence yet
    young = verdict(resource(age=60), signal())
    assert young.verdict is Verdict.KEEP and "no data is not yet evidence" in young.reason


def test_a_recent_change_restarts_the_clock():
    # Given an old endpoint updated 30 minutes ago and no data
    d = verdict(resource(age=3000, changed=30), signal())
    assert d.verdict is Verdict.KEEP and "InService only since" in d.reason


def test_idle_minutes_tag_overrides_the_window():
    d = verdict(resource(tags={**DEV, "reaper:idle-minutes": "30"}, age=45), signal())
    assert d.verdict is Verdict.ACT


@pytest.mark.parametrize("state", ["Creating", "Updating", "RollingBack", "SystemUpdating", "Failed"])
def test_not_in_service_is_kept_and_retried(state):
    d = verdict(resource(state=state), None)
    assert d.verdict is Verdict.KEEP and state in d.reason and "later sweep" in d.reason


def test_serverless_is_kept():
    r = resource()
    r.facts = replace(r.facts, serverless=True)
    assert verdict(r, None).verdict is Verdict.KEEP


def test_classic_whose_config_or_model_is_gone_is_refused_as_error():
    gone = verdict(resource(), signal(d=details(config_exists=False)))
    assert gone.verdict is Verdict.ERROR and gone.action == "delete" and "ep-config no longer exists" in gone.reason
    model = verdict(resource(), signal(d=details(models_missing=("m",))))
    assert model.verdict is Verdict.ERROR and "model m" in model.reason and "Nothing was changed" in model.reason


def test_production_is_notify_only_even_when_it_could_not_be_recreated():
    d = verdict(resource(tags={"ml:stage": "prod"}), signal(d=details(models_missing=("m",))))
    assert d.verdict is Verdict.EXEMPT and d.notify and "notify-only" in d.reason and "could not be recreated" in d.reason


@pytest.mark.parametrize("tags", [{"ml:stage": "qa"}, {"ml:owner": "ana@example.com"}])
def test_idle_endpoint_outside_dev_stages_is_kept_and_reported_once(tags):
    d = verdict(resource(tags=tags), signal())
    assert d.verdict is Verdict.KEEP and d.notify and d.notify_key and "only dev stages" in d.reason


def test_components_go_to_zero_only_where_managed_scaling_allows_a_minimum_of_zero():
    comps = (Component("a", "AllTraffic", 2), Component("b", "AllTraffic", 1))
    act = verdict(resource(), signal(d=details(COMPONENTS, components=comps, managed_min=0)))
    assert act.verdict is Verdict.ACT and act.action == "scale-to-zero" and "a × 2, b × 1" in act.reason
    blocked = verdict(resource(), signal(d=details(COMPONENTS, components=comps, managed_min=1)))
    assert blocked.verdict is Verdict.KEEP and blocked.notify and "keeps at least 1 instance" in blocked.reason
    unmanaged = verdict(resource(), signal(d=details(COMPONENTS, components=comps, managed_min=None)))
    assert unmanaged.verdict is Verdict.KEEP and "no managed instance scaling" in unmanaged.reason


def test_components_already_at_zero_are_kept():
    comps = (Component("a", "AllTraffic", 0),)
    d = verdict(resource(), signal(d=details(COMPONENTS, components=comps, managed_min=0)))
    assert d.verdict is Verdict.KEEP and "already at zero" in d.reason


def test_async_reads_processed_requests_and_backlog():
    d = details(ASYNC)
    assert verdict(resource(), signal([(NOW - timedelta(minutes=10), 2.0)], d=d)).verdict is Verdict.KEEP
    queued = verdict(resource(), signal([], [(NOW - timedelta(minutes=10), 5.0)], d=d))
    assert queued.verdict is Verdict.KEEP and "queued" in queued.reason
    idle = verdict(resource(), signal([], [(NOW - timedelta(minutes=10), 0.0)], d=d))
    assert idle.verdict is Verdict.ACT and idle.action == "scale-to-zero" and "0 requests processed" in idle.reason
    assert verdict(resource(count=0), signal(d=d)).verdict is Verdict.KEEP


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ({**DEV, "reaper:exempt": "true"}, Verdict.EXEMPT),
        ({**DEV, "reaper:snooze-until": "2026-12-24"}, Verdict.EXEMPT),
        ({**DEV, "reaper:idle-minutes": "soon"}, Verdict.EXEMPT),
        ({**DEV, "reaper:snooze-until": "2026-01-01"}, Verdict.ACT),
    ],
)
def test_tags_screen_before_the_rule(tags, expected):
    assert verdict(resource(tags=tags), signal()).verdict is expected


def test_enforce_warns_before_deleting():
    d = verdict(resource(), signal(), Settings(mode=Mode.ENFORCE, grace_minutes=60))
    assert d.verdict is Verdict.WARN and d.newly_warned and "will delete in 60 min" in d.reason


def test_off_hours_takes_dev_endpoints_to_zero_whatever_their_traffic():
    saturday = datetime(2026, 12, 5, 11, 0, tzinfo=UTC)
    busy = signal([(saturday - timedelta(minutes=5), 50.0)])
    on = Settings(off_hours={"enabled": True})
    d = verdict(resource(), busy, on, saturday)
    assert d.verdict is Verdict.ACT and d.evidence["policy"] == "off-hours" and "outside working hours" in d.reason
    assert verdict(resource(), busy, Settings(), saturday).verdict is Verdict.KEEP  # off by default
    prod = verdict(resource(tags={"ml:stage": "prod"}), busy, on, saturday)
    assert prod.verdict is Verdict.EXEMPT and not prod.notify  # off-hours never applies to production
    assert verdict(resource(), busy, on, NOW).verdict is Verdict.KEEP  # Wednesday 14:00 is working time


def test_quiet_text_says_at_least_when_the_reading_is_the_limit():
    start = NOW - timedelta(hours=3)
    assert quiet_text("invocations", NOW, [], start, None) == "0 invocations in at least 3 h 00 m"
    assert quiet_text("invocations", NOW, [], start, NOW - timedelta(minutes=130)) == "0 invocations in 2 h 10 m"


def test_next_work_start_in_the_working_timezone():
    s = Settings(off_hours={"enabled": True, "timezone": "Europe/Berlin", "start": "08:00", "end": "19:00", "days": "mon-fri"})
    friday_evening = datetime(2026, 12, 4, 19, 30, tzinfo=UTC)  # 20:30 in Berlin
    at = next_work_start(s, friday_evening)
    assert at is not None and (at.weekday(), at.hour, at.minute) == (0, 8, 0) and str(at.tzinfo) == "Europe/Berlin"
    early = datetime(2026, 12, 2, 5, 0, tzinfo=UTC)  # 06:00 Wednesday in Berlin
    at = next_work_start(s, early)
    assert at is not None and at.date() == early.date() and at.hour == 8


def test_schedule_names_fit_scheduler_limits():
    name = schedule_name("a" * 63, NOW)
    assert len(name) <= 64 and name.replace("-", "").isalnum()
    assert schedule_name("a" * 63, NOW) != schedule_name("a" * 62 + "b", NOW)


def test_restore_claims_endpoint_names_also_those_shaped_like_file_system_ids():
    # an endpoint may legally be called fs-0123…: reaper.restore.run asks each claiming kind for a record
    assert DECLARATION.restorer is not None
    claims = DECLARATION.restorer.claims
    assert claims("llm-dev") and claims("A1") and claims("fs-0123456789abcdef0")
    assert not claims("bad_name") and not claims("-x")


@pytest.mark.parametrize(
    ("name", "claimed"),
    [
        ("a" * 63, True),  # the longest endpoint name
        ("a" * 64, False),
        ("fs-0123abcd", True),  # also an FSx id: both kinds claim it, the restore record decides
        ("fs-0123abc", True),  # 7: not an FSx id, a valid endpoint name
        ("fs-dev", True),
        ("fs-0123abcd-canary", True),  # an endpoint whose name starts like an FSx id
        ("fs-0123456789abcdef0\n", True),  # trimmed, as the restore command trims it
        ("llm--dev", True),
        ("llm-dev-", False),
        ("", False),
        ("llm dev", False),
    ],
)
def test_restore_name_pattern_edges(name, claimed):
    assert DECLARATION.restorer is not None
    assert DECLARATION.restorer.claims(name) is claimed


def test_event_and_api_statuses_compare_equal():
    assert status_of("IN_SERVICE") == status_of("InService") == "INSERVICE"


def test_undo_says_the_restore_command_and_the_gpu_wait():
    r = resource()
    r.facts = replace(r.facts, details=details(), table="mlreaper-log")
    hint = KIND.undo_hint(r, "delete") or ""
    assert hint.startswith("reaper restore ep --table mlreaper-log") and "GPU endpoint (ml.g5.xlarge)" in hint and "minutes" in hint


def test_off_hours_restore_needs_its_function_and_role():
    with pytest.raises(ConfigError, match="REAPER_RESTORE_FUNCTION_ARN"):
        Settings.from_env({"REAPER_ENDPOINT_OFF_HOURS_RESTORE": "true"}).of(EndpointSettings)
    s = Settings.from_env(
        {
            "REAPER_ENDPOINT_OFF_HOURS_RESTORE": "true",
            "REAPER_RESTORE_FUNCTION_ARN": "arn:aws:lambda:us-east-1:123456789012:function:restore",
            "REAPER_SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/scheduler",
            "REAPER_SCHEDULE_GROUP": "mlreaper-restores",
            "REAPER_RESTORE_WAIT_MINUTES": "0",
        }
    )
    own = s.of(EndpointSettings)
    assert own.endpoint_off_hours_restore and s.schedule_group == "mlreaper-restores" and own.restore_wait_minutes == 0

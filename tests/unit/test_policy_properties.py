"""Property tests: whatever the signals, exempt, snoozed, production and bad-tag resources are
never acted on, in any mode, at any time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from reaper import kinds
from reaper.core.model import Mode, Resource, Verdict
from reaper.core.settings import OffHours, Settings
from reaper.kinds.notebook.model import ActivitySignal, NotebookFacts
from reaper.kinds.notebook.settings import NotebookSettings
from reaper.sweep.pipeline import decide
from reaper_devkit.seed import aligned

KIND = kinds.get("notebook")

nows = st.datetimes(min_value=datetime(2025, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC))
series_values = st.lists(st.one_of(st.none(), st.sampled_from([0.0, 1.0])), min_size=0, max_size=60)
modes = st.sampled_from([Mode.DRY_RUN, Mode.ENFORCE])
states = st.sampled_from(["InService", "Stopped", "Pending", "Stopping", "Failed", "Updating"])
settings_strategy = st.builds(
    Settings,
    mode=modes,
    grace_minutes=st.integers(0, 180),
    kinds=st.builds(lambda attach: {"NotebookSettings": NotebookSettings(attach_agent=attach)}, st.booleans()),
    off_hours=st.builds(OffHours, enabled=st.booleans(), timezone=st.sampled_from(["UTC", "Europe/Berlin", "America/New_York"])),
)


def _resource(tags: dict[str, str], state: str, agent: bool) -> Resource:
    return Resource(
        kind="notebook",
        id="nb",
        arn="arn:aws:sagemaker:us-east-1:123456789012:notebook-instance/nb",
        region="us-east-1",
        state=state,
        tags=tags,
        facts=NotebookFacts("mlreaper-activity-agent" if agent else None),
    )


def _signal(now: datetime, values: list[float | None]) -> ActivitySignal:
    end = aligned(now)
    return ActivitySignal([(end - timedelta(minutes=5 * (k + 1)), v) for k, v in enumerate(values) if v is not None][::-1], end)


protected_tags = st.one_of(
    st.fixed_dictionaries({"reaper:exempt": st.sampled_from(["true", " TRUE", "True "])}),
    st.fixed_dictionaries({"ml:stage": st.sampled_from(["prod", "Production", " PROD "])}),
    st.fixed_dictionaries({"reaper:idle-minutes": st.sampled_from(["abc", "0", "4", "-1", "1e9x"])}),
    st.fixed_dictionaries({"reaper:snooze-until": st.just("2031-01-01")}),
    st.fixed_dictionaries(
        {"reaper:disposable": st.text(min_size=1, max_size=5).filter(lambda s: s.strip().lower() not in ("true", "false", ""))}
    ),
)


@hsettings(max_examples=300, deadline=None)
@given(
    tags=protected_tags,
    now=nows,
    values=series_values,
    settings=settings_strategy,
    state=states,
    agent=st.booleans(),
    warned_ago=st.one_of(st.none(), st.integers(0, 10_000)),
)
def test_protected_resources_are_never_acted_on_or_warned(tags, now, values, settings, state, agent, warned_ago):
    if warned_ago is not None:
        tags = {**tags, "reaper:warned-at": (now - timedelta(minutes=warned_ago)).isoformat()}
    decision, _ = decide(KIND, _resource(tags, state, agent), _signal(now, values), settings, now)
    assert decision.verdict is Verdict.EXEMPT
    assert not decision.newly_warned


@hsettings(max_examples=300, deadline=None)
@given(now=nows, values=series_values, settings=settings_strategy)
def test_a_gap_or_missing_data_never_counts_as_idle(now, values, settings):
    settings = settings.replace(off_hours={"enabled": False})
    window_periods = 12  # the default 60-minute window
    head = values[:window_periods]
    if len(head) == window_periods and None not in head and not any(head):
        return  # a complete, all-zero window really is idle
    decision, _ = decide(KIND, _resource({}, "InService", True), _signal(now, values), settings, now)
    assert decision.verdict is not Verdict.ACT and decision.verdict is not Verdict.WARN


@hsettings(max_examples=200, deadline=None)
@given(now=nows, settings=settings_strategy)
def test_a_complete_idle_window_is_reapable_in_dry_run_and_warned_first_in_enforce(now, settings):
    settings = settings.replace(off_hours={"enabled": False})
    decision, _ = decide(KIND, _resource({}, "InService", True), _signal(now, [0.0] * 12), settings, now)
    if settings.mode is Mode.DRY_RUN or settings.grace_minutes == 0:
        assert decision.verdict is Verdict.ACT
    else:
        assert decision.verdict is Verdict.WARN and decision.newly_warned

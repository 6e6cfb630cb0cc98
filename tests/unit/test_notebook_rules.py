"""The notebook rule as a pure function: idle window, gaps, off-hours, the agent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper import kinds
from reaper.kinds.notebook.model import ActivitySignal, NotebookFacts
from reaper.model import Resource, Verdict
from reaper.policy import read_tags
from reaper.settings import OffHours, Settings
from reaper_devkit.seed import aligned

KIND = kinds.get("notebook")
NOW = datetime(2026, 12, 2, 14, 7, tzinfo=UTC)  # a Wednesday


def nb(tags: dict[str, str] | None = None, state: str = "InService", lifecycle: str | None = "mlreaper-activity-agent") -> Resource:
    return Resource("notebook", "nb", "arn:aws:sagemaker:us-east-1:1:notebook-instance/nb", "us-east-1", state, tags or {}, facts=NotebookFacts(lifecycle))


def signal(values: list[float | None], now: datetime = NOW) -> ActivitySignal:
    end = aligned(now)
    return ActivitySignal(sorted((end - timedelta(minutes=5 * (k + 1)), v) for k, v in enumerate(values) if v is not None), end)


DEFAULTS = Settings()


def decide(resource: Resource, sig: ActivitySignal | None, settings: Settings = DEFAULTS, now: datetime = NOW):
    return KIND.decide(resource, sig, read_tags(resource.tags, settings), settings, now)


def test_idle_for_the_whole_window_is_stopped_with_the_evidence():
    d = decide(nb(), signal([0] * 12 + [1]))
    assert d.verdict is Verdict.ACT and d.action == "stop"
    assert d.reason == "no activity for 1 h 02 m"


def test_activity_inside_the_window_keeps():
    d = decide(nb(), signal([0] * 11 + [1]))
    assert d.verdict is Verdict.KEEP and "active" in d.reason


def test_the_idle_minutes_tag_widens_the_window():
    d = decide(nb({"reaper:idle-minutes": "120"}), signal([0] * 12 + [1]))
    assert d.verdict is Verdict.KEEP


def test_a_single_missing_period_is_unknown():
    d = decide(nb(), signal([0] * 5 + [None] + [0] * 6))
    assert d.verdict is Verdict.KEEP and "1 of 12 periods missing" in d.reason


def test_no_agent_and_no_data_is_reported_not_reaped():
    d = decide(nb(lifecycle=None), signal([]))
    assert d.verdict is Verdict.KEEP and "no activity agent" in d.reason


def test_agent_attached_but_silent_is_unknown():
    d = decide(nb(), signal([]))
    assert d.verdict is Verdict.KEEP and "no activity data" in d.reason


def test_off_hours_stops_dev_notebooks_whatever_the_activity():
    s = Settings(off_hours=OffHours(enabled=True, timezone="UTC", start="08:00", end="19:00"))
    night = datetime(2026, 12, 2, 22, 0, tzinfo=UTC)
    assert decide(nb({"ml:stage": "dev"}), signal([1] * 12, night), s, night).verdict is Verdict.ACT
    assert decide(nb({"ml:stage": "dev"}), signal([1] * 12, NOW), s, NOW).verdict is Verdict.KEEP
    saturday = datetime(2026, 12, 5, 11, 0, tzinfo=UTC)
    assert decide(nb(), signal([1] * 12, saturday), s, saturday).verdict is Verdict.ACT
    # a stage that is neither dev nor production is left to the activity rule
    assert decide(nb({"ml:stage": "research"}), signal([1] * 12, night), s, night).verdict is Verdict.KEEP


def test_stopped_notebooks_get_the_agent_only_when_asked_and_only_without_a_config():
    assert decide(nb(state="Stopped", lifecycle=None), None).verdict is Verdict.KEEP
    s = Settings(attach_agent=True)
    d = decide(nb(state="Stopped", lifecycle=None), None, s)
    assert d.verdict is Verdict.ACT and d.action == "attach-agent" and d.skip_grace
    assert decide(nb(state="Stopped", lifecycle="team-config"), None, s).verdict is Verdict.KEEP

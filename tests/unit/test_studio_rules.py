"""The studio-app rule, pure: activity, app types, windows, and domains' idle-shutdown settings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.studio_app.actions import disabled_blocks, enabled_blocks, undo_hint
from reaper.kinds.studio_app.discover import _billable_and_running, _with_owner, idle_settings
from reaper.kinds.studio_app.model import AppActivity, AppFacts, DomainFacts
from reaper.kinds.studio_app.rules import decide

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
S = Settings()


def app(app_type: str = "JupyterLab", created: datetime | None = NOW - timedelta(days=1), tags: dict[str, str] | None = None) -> Resource:
    facts = AppFacts("d-lab", app_type, "default", None, "ana-lab", "ana")
    return Resource(
        "studio-app",
        "d-lab/ana-lab/JupyterLab/default",
        "arn:aws:sagemaker:us-east-1:1:app/d-lab/ana-lab/JupyterLab/default",
        "us-east-1",
        "InService",
        tags=tags or {},
        instance_type="ml.t3.medium",
        created_at=created,
        facts=facts,
    )


def activity(minutes_ago: float | None, status: str = "InService") -> AppActivity:
    last = None if minutes_ago is None else NOW - timedelta(minutes=minutes_ago)
    return AppActivity(status, NOW - timedelta(days=1), last, last)


def run(r: Resource, signal: AppActivity | None, settings: Settings = S):
    return decide(r, signal, read_tags(r.tags, settings), settings, NOW)


def test_idle_past_the_window_is_deleted_with_what_happens_to_open_work():
    d = run(app(), activity(61))
    assert d.verdict is Verdict.ACT and d.action == "delete"
    assert "1 h 01 m" in d.reason and "unsaved" in d.reason and "storage volume stay" in d.reason


@pytest.mark.parametrize("minutes", [0, 30, 59.9, -5])  # -5: a clock ahead of ours is recent, never idle
def test_activity_within_the_window_is_kept(minutes):
    assert run(app(), activity(minutes)).verdict is Verdict.KEEP


def test_the_tag_window_overrides_the_default():
    r = app(tags={"reaper:idle-minutes": "240"})
    assert run(r, activity(200)).verdict is Verdict.KEEP
    assert run(r, activity(241)).verdict is Verdict.ACT


def test_an_app_younger_than_the_window_is_kept_whatever_its_activity():
    d = run(app(created=NOW - timedelta(minutes=20)), AppActivity("InService", NOW - timedelta(minutes=20), NOW - timedelta(days=3), None))
    assert d.verdict is Verdict.KEEP and "less than the idle window" in d.reason


@pytest.mark.parametrize("app_type", ["KernelGateway", "JupyterServer"])
def test_types_without_recorded_activity_are_unknown_and_kept(app_type):
    d = run(app(app_type), None)
    assert d.verdict is Verdict.KEEP and "AWS records no user activity" in d.reason


def test_no_signal_or_no_timestamp_is_unknown_not_idle():
    assert run(app(), None).verdict is Verdict.KEEP
    assert "unknown" in run(app(), activity(None)).reason


def test_a_naive_timestamp_is_read_as_utc():
    naive = (NOW - timedelta(hours=2)).replace(tzinfo=None)
    assert run(app(), AppActivity("InService", None, naive, None)).verdict is Verdict.ACT


def test_app_deleted_meanwhile_is_kept():
    assert run(app(), activity(500, status="Deleting")).verdict is Verdict.KEEP


def test_billable_filter_keeps_out_the_free_system_jupyter_server_and_other_types():
    assert not _billable_and_running({"AppType": "JupyterServer", "Status": "InService", "ResourceSpec": {"InstanceType": "system"}})
    assert not _billable_and_running({"AppType": "JupyterServer", "Status": "InService"})
    assert _billable_and_running({"AppType": "JupyterServer", "Status": "InService", "ResourceSpec": {"InstanceType": "ml.t3.medium"}})
    assert not _billable_and_running({"AppType": "Canvas", "Status": "InService", "ResourceSpec": {"InstanceType": "ml.t3.medium"}})
    assert not _billable_and_running({"AppType": "JupyterLab", "Status": "Pending"})


def test_owner_comes_from_the_app_then_its_space_then_the_profile():
    assert _with_owner({"ML:Owner ": "a@x"}, [{"ml:owner": "b@x"}]) == {"ML:Owner ": "a@x"}
    assert _with_owner({}, [{}, {"ml:owner": "c@x"}]) == {"ml:owner": "c@x"}
    assert _with_owner({}, [{"ml:owner": "  "}]) == {}


def domain(settings: dict) -> Resource:
    facts = DomainFacts(
        "d-x", "x", idle_settings(settings), {k: settings.get(k, {}) for k in ("JupyterLabAppSettings", "CodeEditorAppSettings")}
    )
    return Resource("studio-app", "d-x", "arn:aws:sagemaker:us-east-1:1:domain/d-x", "us-east-1", "InService", facts=facts)


ON = {"AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 120}}}


def test_domain_with_idle_shutdown_off_is_reported_then_turned_on_only_with_the_admin_setting():
    off = domain({"JupyterLabAppSettings": ON})  # Code Editor has none: off
    report = run(off, None)
    assert (
        report.verdict is Verdict.KEEP
        and report.notify
        and "CodeEditor" in report.reason
        and "JupyterLab" not in report.reason.split("off for")[1]
    )
    enforce = run(off, None, Settings(studio_enforce_idle_shutdown_minutes=90))
    assert enforce.verdict is Verdict.ACT and enforce.action == "enable-idle-shutdown" and enforce.skip_grace
    on = run(domain({"JupyterLabAppSettings": ON, "CodeEditorAppSettings": ON}), None)
    assert on.verdict is Verdict.KEEP and not on.notify


def test_turning_on_keeps_the_other_settings_and_the_undo_turns_it_off_again():
    before = {"JupyterLabAppSettings": {"DefaultResourceSpec": {"InstanceType": "ml.t3.medium"}}}
    sent = enabled_blocks(before, ("JupyterLab",), 90)
    assert sent["JupyterLabAppSettings"]["DefaultResourceSpec"] == {"InstanceType": "ml.t3.medium"}
    assert sent["JupyterLabAppSettings"]["AppLifecycleManagement"]["IdleSettings"]["LifecycleManagement"] == "ENABLED"
    assert "AppLifecycleManagement" not in before["JupyterLabAppSettings"]  # not changed in place
    back = disabled_blocks(before, ("JupyterLab",))
    assert back["JupyterLabAppSettings"]["AppLifecycleManagement"]["IdleSettings"] == {"LifecycleManagement": "DISABLED"}
    assert "update-domain --domain-id d-x" in (undo_hint(domain(before), "enable-idle-shutdown") or "")


def test_the_admin_timeout_is_held_to_what_aws_accepts():
    from reaper.core.errors import ConfigError

    with pytest.raises(ConfigError):
        Settings.from_env({"REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES": "59"})
    assert Settings.from_env({"REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES": "60"}).studio_enforce_idle_shutdown_minutes == 60

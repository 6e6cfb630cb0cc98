"""The studio-app rule, pure: Canvas activity, app types without evidence, windows, space protection, and
domains' idle-shutdown settings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.base import inherit_protection
from reaper.kinds.studio_app.actions import disabled_blocks, enabled_blocks, undo_hint
from reaper.kinds.studio_app.discover import (
    _billable_and_running,
    _custom_image,
    _smd_version,
    _space,
    _with_owner,
    idle_settings,
    shared_idle_settings,
)
from reaper.kinds.studio_app.model import AppActivity, AppFacts, DomainFacts, IdleSetting
from reaper.kinds.studio_app.rules import decide
from reaper.kinds.studio_app.settings import StudioAppSettings

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
S = Settings()


# younger than its timeout plus the margin (docs/kinds/studio-app.md, trust then verify): covered, not yet due a look
YOUNG = NOW - timedelta(minutes=45)


def app(
    app_type: str = "Canvas",
    created: datetime | None = NOW - timedelta(days=1),
    tags: dict[str, str] | None = None,
    idle_shutdown: int | None = None,
    image: str | None = None,
    smd_version: str | None = "2.0.0",
    shared: bool = False,
) -> Resource:
    if app_type == "Canvas":
        facts = AppFacts("d-lab", app_type, "default", "ana", None)
    else:
        facts = AppFacts(
            "d-lab",
            app_type,
            "default",
            None,
            "ana-lab",
            "ana",
            idle_shutdown_minutes=idle_shutdown,
            custom_image=image,
            smd_version=None if image else smd_version,
            shared=shared,
        )
    return Resource(
        "studio-app",
        f"d-lab/{facts.owner_name}/{app_type}/default",
        f"arn:aws:sagemaker:us-east-1:1:app/d-lab/{facts.owner_name}/{app_type}/default",
        "us-east-1",
        "InService",
        tags=tags or {},
        instance_type="ml.t3.medium",
        created_at=created,
        facts=facts,
    )


def inactive(minutes: float) -> AppActivity:
    """Canvas's TimeSinceLastActive, measured five minutes ago."""
    return AppActivity(minutes * 60, NOW - timedelta(minutes=5))


def run(r: Resource, signal: AppActivity | None, settings: Settings = S):
    return decide(r, signal, read_tags(r.tags, settings), settings, NOW)


def test_a_canvas_app_inactive_past_the_window_is_deleted_saying_what_stays():
    d = run(app(), inactive(61))
    assert d.verdict is Verdict.ACT and d.action == "delete"
    assert "1 h 01 m" in d.reason and "models and datasets stay" in d.reason


@pytest.mark.parametrize("minutes", [0, 30, 59.9])
def test_a_canvas_app_used_within_the_window_is_kept(minutes):
    assert run(app(), inactive(minutes)).verdict is Verdict.KEEP


def test_the_tag_window_overrides_the_default():
    r = app(tags={"reaper:idle-minutes": "240"})
    assert run(r, inactive(200)).verdict is Verdict.KEEP
    assert run(r, inactive(241)).verdict is Verdict.ACT


def test_a_canvas_app_younger_than_the_window_is_kept_whatever_its_metric():
    d = run(app(created=NOW - timedelta(minutes=20)), inactive(600))
    assert d.verdict is Verdict.KEEP and "less than the idle window" in d.reason


def test_a_canvas_app_with_no_metric_is_unknown_not_idle():
    d = run(app(), None)
    assert d.verdict is Verdict.KEEP and d.unknown == "no-canvas-metric" and "unknown" in d.reason


@pytest.mark.parametrize("app_type", ["KernelGateway", "JupyterServer"])
def test_classic_types_are_unknown_and_kept(app_type):
    d = run(app(app_type), None)
    assert d.verdict is Verdict.KEEP and d.unknown == "classic-no-activity-signal"


@pytest.mark.parametrize("app_type", ["JupyterLab", "CodeEditor"])
def test_jupyterlab_and_code_editor_are_never_idle_whatever_their_age(app_type):
    # AWS's LastUserActivityTimestamp follows the health checks: nothing to judge idleness by
    old = app(app_type, created=NOW - timedelta(days=30))
    d = run(old, None)
    assert d.verdict is Verdict.KEEP and d.unknown == "no-activity-signal" and "StudioEnforceIdleShutdownMinutes" in d.reason
    covered = run(app(app_type, idle_shutdown=120, created=YOUNG), None)
    assert covered.verdict is Verdict.KEEP and covered.unknown == "idle-shutdown-on" and "after 120 min idle" in covered.reason
    custom = run(app(app_type, idle_shutdown=120, image="team-image"), None)
    assert custom.verdict is Verdict.KEEP and custom.unknown == "idle-shutdown-unsupported-image" and "team-image" in custom.reason


def test_a_space_tag_protects_its_app_and_a_production_space_wins_over_the_app_stage():
    space = {"reaper:exempt": "true", "ml:stage": "prod", "ml:owner": "x@example.com"}
    merged = inherit_protection({"ml:stage": "dev", "Name": "a"}, space, S)
    assert merged == {"Name": "a", "reaper:exempt": "true", "ml:stage": "prod"}
    # the app's own exempt value stays; a dev space stage never overrides the app's
    assert inherit_protection({"reaper:exempt": "false"}, {"reaper:exempt": "true", "ml:stage": "dev"}, S) == {"reaper:exempt": "false"}


def test_custom_images_are_told_apart_from_sagemaker_distribution():
    smd = {"ResourceSpec": {"SageMakerImageArn": "arn:aws:sagemaker:us-east-1:885854791233:image/sagemaker-distribution-cpu"}}
    assert _custom_image(smd) is None
    assert _custom_image({"ResourceSpec": {"SageMakerImageArn": "arn:aws:sagemaker:us-east-1:1:image/team-image"}}) == "team-image"
    assert _custom_image({"ResourceSpec": {}}) is None


def test_billable_filter_keeps_out_the_free_system_jupyter_server_and_other_types():
    assert not _billable_and_running({"AppType": "JupyterServer", "Status": "InService", "ResourceSpec": {"InstanceType": "system"}})
    assert not _billable_and_running({"AppType": "JupyterServer", "Status": "InService"})
    assert _billable_and_running({"AppType": "JupyterServer", "Status": "InService", "ResourceSpec": {"InstanceType": "ml.t3.medium"}})
    assert _billable_and_running({"AppType": "Canvas", "Status": "InService", "ResourceSpec": {"InstanceType": "ml.t3.medium"}})
    assert not _billable_and_running({"AppType": "RStudioServerPro", "Status": "InService"})
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
    enforce = run(off, None, Settings().with_kind(StudioAppSettings(enforce_idle_shutdown_minutes=90)))
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

    with pytest.raises(ConfigError, match="REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES"):
        Settings.from_env({"REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES": "59"}).of(StudioAppSettings)
    taken = Settings.from_env({"REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES": "60"}).of(StudioAppSettings)
    assert taken.enforce_idle_shutdown_minutes == 60


@pytest.mark.parametrize(
    ("version", "old"),
    [("2.0.0", False), ("2", False), ("2.6", False), ("10.1.0", False), ("1.9.0", True), ("1", True), (None, True), ("x", True)],
)
def test_idle_shutdown_counts_only_on_sagemaker_distribution_2_or_newer(version, old):
    # Given a JupyterLab app its domain's idle shutdown covers, on SageMaker Distribution `version` (None: not said)
    d = run(app("JupyterLab", idle_shutdown=120, smd_version=version, created=YOUNG), None)
    # Then it is covered only from 2.0 on; before, or unsaid, it is unknown with the image's own code and fix
    if old:
        assert d.verdict is Verdict.KEEP and d.unknown == "idle-shutdown-old-image" and "2.0 or newer" in d.reason
        assert (version or "does not say") in d.reason
    else:
        assert d.unknown == "idle-shutdown-on"


def test_a_custom_image_is_unknown_whatever_its_domain_says_and_says_why():
    d = run(app("CodeEditor", idle_shutdown=120, image="team-image"), None)
    assert d.unknown == "idle-shutdown-unsupported-image" and "jupyter-activity-monitor-extension 0.3.1" in d.reason


@pytest.mark.parametrize("app_type", ["JupyterLab", "CodeEditor"])
def test_a_shared_space_follows_its_space_settings_and_says_so(app_type):
    # covered when its domain's DefaultSpaceSettings turn idle shutdown on
    covered = run(app(app_type, idle_shutdown=60, shared=True, created=YOUNG), None)
    assert covered.unknown == "idle-shutdown-on" and "shared space's (DefaultSpaceSettings)" in covered.reason
    # unknown when they do not (Code Editor: there is no such setting), with the shared-space code and its fix
    off = run(app(app_type, shared=True), None)
    assert off.verdict is Verdict.KEEP and off.unknown == "shared-space-idle-shutdown-off" and "shared space ana-lab" in off.reason
    fix = "StudioEnforceIdleShutdownMinutes" if app_type == "JupyterLab" else "lifecycle configuration"
    assert fix in off.reason


def test_list_spaces_says_which_spaces_are_shared():
    assert _space(
        {"SpaceSharingSettingsSummary": {"SharingType": "Shared"}, "OwnershipSettingsSummary": {"OwnerUserProfileName": "a"}}
    ) == (
        "a",
        True,
    )
    assert _space(
        {"SpaceSharingSettingsSummary": {"SharingType": "Private"}, "OwnershipSettingsSummary": {"OwnerUserProfileName": "a"}}
    ) == (
        "a",
        False,
    )
    assert _space({}) == (None, True)  # no owner: only a shared space can have none
    assert _smd_version({"ResourceSpec": {"SageMakerImageVersionAlias": " 2.1.0 "}}) == "2.1.0"
    assert _smd_version({"ResourceSpec": {"SageMakerImageVersionArn": "arn:aws:sagemaker:us-east-1:1:image-version/x/24"}}) is None


def test_a_domain_whose_shared_spaces_lack_idle_shutdown_is_reported_and_the_opt_in_sets_both():
    user = {"JupyterLabAppSettings": ON, "CodeEditorAppSettings": ON}
    shared_previous = {"JupyterLabAppSettings": {"DefaultResourceSpec": {"InstanceType": "ml.t3.large"}}}
    facts = DomainFacts("d-x", "x", idle_settings(user), user, shared_idle_settings({"DefaultSpaceSettings": {}}), shared_previous)
    r = Resource("studio-app", "d-x", "arn:aws:sagemaker:us-east-1:1:domain/d-x", "us-east-1", "InService", facts=facts)
    report = run(r, None)
    assert report.verdict is Verdict.KEEP and report.notify and "JupyterLab in shared spaces" in report.reason
    enforce = run(r, None, Settings().with_kind(StudioAppSettings(enforce_idle_shutdown_minutes=90)))
    assert enforce.verdict is Verdict.ACT and enforce.evidence["shared_idle_shutdown_off"] == ["JupyterLab"]
    # the undo puts back the shared spaces' block as it was (idle shutdown off), and leaves the user settings alone
    undo = undo_hint(r, "enable-idle-shutdown") or ""
    assert "--default-space-settings" in undo and "--default-user-settings" not in undo and "ml.t3.large" in undo
    # DefaultSpaceSettings has no Code Editor block: only JupyterLab is read from it
    assert shared_idle_settings({"DefaultSpaceSettings": {"JupyterLabAppSettings": ON, "CodeEditorAppSettings": ON}}) == (
        IdleSetting("JupyterLab", True, 120),
    )


# these apps have no IAM sign-in (JupyterReads could not read them): the code without "jupyterlab-"; the one
# JupyterReads reaches is tests/integration/test_studio_idle_shutdown_verified.py's
@pytest.mark.parametrize(("app_type", "code"), [("JupyterLab", "idle-shutdown-unverified"), ("CodeEditor", "idle-shutdown-unverified")])
def test_a_covered_app_past_its_timeout_and_the_margin_is_covered_by_aws_unverified(app_type, code):
    # Given an app idle shutdown (120 min) covers, running for a day, and nothing read for it
    d = run(app(app_type, idle_shutdown=120), None)
    # Then it is kept as unknown, saying since when it should have been stopped and how to verify it
    assert d.verdict is Verdict.KEEP and d.unknown == code
    assert d.reason.startswith("covered by AWS, unverified since 2026-") and "after 120 min idle" in d.reason
    # created a day before NOW (12:00), due at its 120-minute timeout plus the 30-minute margin
    assert d.evidence["unverified_since"] == "2026-12-01T14:30:00Z" and "unverified since 2026-12-01T14:30:00Z" in d.reason

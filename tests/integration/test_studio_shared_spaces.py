"""Studio shared spaces and the images idle shutdown runs on (issue 33 item 11), through the CLI and the studio-app
function's runtime against the kit.

A user profile's (and the domain's DefaultUserSettings') JupyterLab and Code Editor settings "apply only to private
spaces"; a shared space takes its domain's DefaultSpaceSettings, which have a JupyterLab block and no Code Editor one.
Idle shutdown needs SageMaker Distribution 2.0 or newer (docs/aws-assumptions.md, issue 33 section).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto.sagemaker.exceptions import ValidationError

from reaper_devkit import seed_studio as studio
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext.sagemaker_studio import checked_sharing, checked_space_defaults, checked_spec
from tests.helpers.studio_fleet import cli_rows

DEV = {"ml:stage": "dev"}
DESCRIBE = "sagemaker:DescribeUserProfile"


@pytest.fixture
def fleet(sm: Any) -> dict[str, str]:
    """Two domains that disagree with themselves:
    - "private-on": idle shutdown on for private spaces (DefaultUserSettings), off for shared ones (DefaultSpaceSettings);
      ana's own profile turns it on for JupyterLab too (240 min). Her shared and private spaces, a shared Code Editor
      space, and private spaces on SageMaker Distribution 1.9 and on SMD without a version.
    - "shared-on": the other way round; cy's profile turns JupyterLab's off. Her shared and private JupyterLab spaces.
    """
    on = studio.domain(sm, "private-on", idle_shutdown=True, shared_idle_shutdown=False)
    vice = studio.domain(sm, "shared-on", idle_shutdown=False, shared_idle_shutdown=True)
    studio.user(sm, on, "ana", {"ml:owner": "ana@example.com"})
    studio.user(sm, vice, "cy", {"ml:owner": "cy@example.com"})
    sm.update_user_profile(DomainId=on, UserProfileName="ana", UserSettings={"JupyterLabAppSettings": studio.idle_block(True, 240)})
    sm.update_user_profile(DomainId=vice, UserProfileName="cy", UserSettings={"JupyterLabAppSettings": studio.idle_block(False)})
    # younger than their timeouts plus the margin (docs/kinds/studio-app.md, trust then verify): covered apps not yet due a look
    old = datetime.now(UTC) - timedelta(minutes=30)
    smd = studio.smd_image(sm)
    apps: dict[str, str] = {"domain": on, "vice": vice}
    for domain, space, owner, kwargs in (
        (on, "team-lab", "ana", {"shared": True}),
        (on, "ana-lab", "ana", {}),
        (on, "team-code", "ana", {"shared": True, "app_type": "CodeEditor"}),
        (on, "ana-old", "ana", {"image_version": "1.9.0"}),
        (on, "ana-unsaid", "ana", {"image_arn": smd}),
        (vice, "cy-team", "cy", {"shared": True}),
        (vice, "cy-lab", "cy", {}),
    ):
        app_type = kwargs.pop("app_type", "JupyterLab")
        studio.space(sm, domain, space, owner=owner, app_type=app_type, shared=bool(kwargs.pop("shared", False)))
        arn = studio.app(sm, domain, space_name=space, app_type=app_type, tags=DEV, created=old, **kwargs)
        apps[space] = arn.split(":app/", 1)[1]
    return apps


def test_a_shared_space_is_judged_by_its_domains_space_settings_never_by_its_owners_profile(sm, fleet, capsys):
    # When the CLI sweeps (JupyterReads off)
    with recording() as calls:
        out = {r["id"]: r for r in cli_rows(capsys, "sweep", "--json")}
    # Then ana's shared JupyterLab space is NOT covered, though her profile and the domain's user settings turn it on
    team = out[fleet["team-lab"]]
    assert (team["verdict"], team["unknown"]) == ("keep", "jupyterlab-shared-space-idle-shutdown-off")
    assert "shared space team-lab" in team["reason"] and "DefaultSpaceSettings" in team["reason"]
    # while her private space follows her profile (240 min), as before
    lab = out[fleet["ana-lab"]]
    assert lab["unknown"] == "idle-shutdown-on" and "after 240 min" in lab["reason"]
    # a shared Code Editor space: DefaultSpaceSettings has no Code Editor block, so nothing documented covers it
    code = out[fleet["team-code"]]
    assert code["unknown"] == "shared-space-idle-shutdown-off" and "no idle-shutdown setting for Code Editor" in code["reason"]
    # and the other way round: cy's profile turns JupyterLab's idle shutdown off, her domain's space settings turn it on
    assert (
        out[fleet["cy-team"]]["unknown"] == "idle-shutdown-on"
        and "shared space's (DefaultSpaceSettings)" in out[fleet["cy-team"]]["reason"]
    )
    assert out[fleet["cy-lab"]]["unknown"] == "jupyterlab-no-activity-signal"  # private: the domain's user settings, off
    # only the owners of covered private-space apps are read: ana (ana-lab); never for a shared space (cy has none)
    assert calls.by_operation().get(DESCRIBE) == 1


def test_an_app_on_sagemaker_distribution_before_2_or_an_unsaid_version_is_not_covered(sm, fleet, capsys):
    out = {r["id"]: r for r in cli_rows(capsys, "sweep", "--json")}
    # ana's profile and her domain turn idle shutdown on, but it does not run on SMD 1.9, nor on a version not said
    old, unsaid = out[fleet["ana-old"]], out[fleet["ana-unsaid"]]
    assert (old["verdict"], old["unknown"]) == ("keep", "jupyterlab-old-image") and "SageMaker Distribution 1.9.0" in old["reason"]
    assert unsaid["unknown"] == "jupyterlab-old-image" and "version the app does not say" in unsaid["reason"]


def test_reaper_coverage_shows_the_new_codes_with_their_cost_and_fix(sm, fleet, capsys):
    cov = cli_rows(capsys, "coverage", "--output", "json")
    reasons = {t["code"]: t for c in cov if c["type"] == "coverage" for t in c["reasons"]}
    shared = reasons["jupyterlab-shared-space-idle-shutdown-off"]
    assert shared["resources"] == 1 and shared["hourly_usd"] > 0 and "StudioEnforceIdleShutdownMinutes" in shared["fix"]
    code = reasons["shared-space-idle-shutdown-off"]
    assert code["resources"] == 1 and code["hourly_usd"] > 0 and "lifecycle configuration" in code["fix"]
    old = reasons["jupyterlab-old-image"]
    assert old["resources"] == 2 and old["hourly_usd"] > 0 and "SageMaker Distribution 2.0" in old["fix"]
    assert "idle-shutdown-on" not in reasons  # covered: not a blind spot


def test_the_opt_in_turns_idle_shutdown_on_for_private_and_shared_spaces(sm, fleet, capsys, monkeypatch):
    # Given the admin's timeout
    monkeypatch.setenv("REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES", "90")
    out = {r["id"]: r for r in cli_rows(capsys, "sweep", "--mode", "enforce", "--json")}
    # Then each domain gets what it lacked, and only that: shared spaces in one, private ones in the other
    on, vice = sm.describe_domain(DomainId=fleet["domain"]), sm.describe_domain(DomainId=fleet["vice"])
    enabled = {"LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 90}
    assert on["DefaultSpaceSettings"]["JupyterLabAppSettings"]["AppLifecycleManagement"]["IdleSettings"] == enabled
    assert on["DefaultUserSettings"]["JupyterLabAppSettings"]["AppLifecycleManagement"]["IdleSettings"]["IdleTimeoutInMinutes"] == 120
    for block in ("JupyterLabAppSettings", "CodeEditorAppSettings"):
        assert vice["DefaultUserSettings"][block]["AppLifecycleManagement"]["IdleSettings"] == enabled
    assert on["DefaultSpaceSettings"]["ExecutionRole"] and vice["DefaultUserSettings"]["ExecutionRole"]
    assert "in shared spaces" in out[fleet["domain"]]["reason"] and out[fleet["domain"]]["executed"] is True
    assert out[fleet["vice"]]["executed"] is True
    # the next sweep counts the shared JupyterLab space covered; the shared Code Editor one still has no setting
    again = {r["id"]: r for r in cli_rows(capsys, "plan", "--json")}
    assert again[fleet["team-lab"]]["unknown"] == "idle-shutdown-on"
    assert again[fleet["team-code"]]["unknown"] == "shared-space-idle-shutdown-off"


def test_the_kit_refuses_what_the_reference_does_not_allow(sm, fleet):
    # DefaultSpaceSettings has no Code Editor block; IdleSettings values as the reference bounds them
    with pytest.raises(ValidationError, match="CodeEditorAppSettings"):
        checked_space_defaults({"CodeEditorAppSettings": studio.idle_block(True)})
    with pytest.raises(ValidationError, match="IdleTimeoutInMinutes"):  # (botocore refuses it before sending, too)
        checked_space_defaults({"JupyterLabAppSettings": studio.idle_block(True, 30)})
    # a sharing type outside Private | Shared, and an image version alias that is not SemVer (the shape check refuses
    # them before they are sent: the kit's own refusal, for raw requests)
    with pytest.raises(ValidationError):
        checked_sharing("Public")
    assert checked_sharing("Shared") == "Shared"
    for bad in ("latest", "v2", "2.0.0.1"):
        with pytest.raises(ValidationError):
            checked_spec({"SageMakerImageVersionAlias": bad})
    for good in ("2", "2.6", "2.6.0", "3.0.0-rc.1"):
        assert checked_spec({"SageMakerImageVersionAlias": good})
    # DescribeSpace and ListSpaces say how a space is shared
    assert sm.describe_space(DomainId=fleet["domain"], SpaceName="team-lab")["SpaceSharingSettings"] == {"SharingType": "Shared"}
    summary = {s["SpaceName"]: s["SpaceSharingSettingsSummary"]["SharingType"] for s in sm.list_spaces()["Spaces"]}
    assert summary["team-lab"] == "Shared" and summary["ana-lab"] == "Private"

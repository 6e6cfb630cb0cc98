"""`reaper sweep --kind studio-app` in-process under moto: what is deleted, what is kept and why."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper_devkit import seed_studio as studio
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.helpers import studio_fleet as fleet

REQUIRED = {"kind", "id", "arn", "region", "verdict", "action", "reason", "executed", "hourly_usd", "owner"}


@pytest.fixture
def seeded(aws) -> dict[str, Any]:
    return fleet.seed(aws, datetime.now(UTC))


def rows(out: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(line) for line in out.splitlines() if line.strip())}


def by_case(out: dict[str, dict[str, Any]], seeded: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case: out[fleet.app_id(arn)] for case, arn in seeded["apps"].items()}


def test_enforce_with_grace_zero_deletes_exactly_the_idle_apps_and_keeps_spaces(sm, seeded, capsys):
    # When the CLI sweeps the kind in enforce with no grace
    with recording() as calls:
        code = main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "0", "--json"])
    # Then every billable running app and both domains got a verdict, with the contract's fields
    assert code == 0
    out = rows(capsys.readouterr().out)
    assert all(set(r) >= REQUIRED for r in out.values())
    apps = by_case(out, seeded)
    assert set(out) == {fleet.app_id(a) for a in seeded["apps"].values()} | {seeded["domain"], seeded["off_domain"]}
    assert {c: r["verdict"] for c, r in apps.items()} == seeded["expected"]
    # every app kept as unknown says why, with a short stable code
    assert {c: r["unknown"] for c, r in apps.items() if seeded["codes"][c]} == {c: k for c, k in seeded["codes"].items() if k}
    # exactly the idle Canvas apps were deleted; the rest still run
    deleted = sorted(c for c, r in apps.items() if r["executed"])
    assert deleted == ["idle-canvas", "idle-canvas-big"]
    for case, arn in seeded["apps"].items():
        assert studio.status(sm, arn) in (("Deleting", "Deleted") if case in deleted else ("InService",)), case
    # spaces, user profiles and domains are all still there
    spaces = {s["SpaceName"] for s in sm.list_spaces()["Spaces"]}
    assert {"ana-lab", "ana-code"} <= spaces
    assert sm.describe_user_profile(DomainId=seeded["domain"], UserProfileName="cy")["Status"] == "InService"
    assert len(sm.list_domains()["Domains"]) == 2
    # reasons and figures
    canvas = apps["idle-canvas"]
    # the newest 5-minute datapoint says 3 h, or 2 h 55 m when it falls in the period CloudWatch has not closed
    assert re.search(r"no Canvas activity by cy for (3 h 00 m|2 h 55 m)", canvas["reason"]) and canvas["owner"] == "cy@example.com"
    assert "user profile cy" in canvas["detail"]
    assert "create-app" in canvas["undo"] and "--user-profile-name cy" in canvas["undo"] and "--app-type Canvas" in canvas["undo"]
    assert "Canvas user active" in apps["busy-canvas"]["reason"]
    assert "less than the idle window" in apps["young-canvas"]["reason"]
    assert "idle shutdown stops this JupyterLab app after 120 min idle" in apps["covered-lab"]["reason"]
    assert (
        "idle shutdown is off" in apps["uncovered-lab"]["reason"] and "StudioEnforceIdleShutdownMinutes" in apps["uncovered-lab"]["reason"]
    )
    assert "custom image team-image" in apps["custom-image-lab"]["reason"]
    assert "AWS records no user activity for classic KernelGateway" in apps["classic-kg"]["reason"]
    assert "production stage" in apps["prod-lab"]["reason"]
    off = out[seeded["off_domain"]]
    assert off["verdict"] == "keep" and "idle shutdown is off" in off["reason"] and not off["executed"]
    assert "built-in idle shutdown on" in out[seeded["domain"]]["reason"]
    # every call the sweep made is granted to the function
    assert calls.actions <= function_actions("StudioAppFunction")
    # no app is described to judge it (its last activity is its last health check): only the 2 state re-reads
    assert calls.by_operation().get("sagemaker:DescribeApp", 0) == 2
    assert calls.by_operation().get("cloudwatch:GetMetricData") == 1  # every Canvas app in one batch


def test_a_space_tagged_exempt_protects_its_app_in_the_plan(sm, seeded, capsys):
    # Given a space tagged reaper:exempt=true whose app carries no tag of its own but ml:stage=dev
    assert main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    apps = by_case(rows(capsys.readouterr().out), seeded)
    # Then the app is exempt, as if it were tagged itself
    assert apps["space-exempt-lab"]["verdict"] == "exempt" and not apps["space-exempt-lab"]["executed"]
    assert studio.status(sm, seeded["apps"]["space-exempt-lab"]) == "InService"


def test_a_space_tagged_after_discovery_stops_the_delete_of_its_app(sm, aws, capsys, monkeypatch):
    # Given an idle app in a space (here: past its kill date, so a sweep would delete it)
    from reaper.kinds.studio_app import actions

    now = datetime.now(UTC)
    d = studio.domain(sm, "lab")
    studio.space(sm, d, "s1", owner=None)
    arn = studio.app(sm, d, space_name="s1", tags={"ml:stage": "dev", "reaper:kill-after": "2020-01-01"}, created=now - timedelta(days=2))
    space_arn = sm.describe_space(DomainId=d, SpaceName="s1")["SpaceArn"]
    real = actions.current_state

    def space_tagged_meanwhile(clients, resource):
        if resource.arn == arn:
            sm.add_tags(ResourceArn=space_arn, Tags=[{"Key": "ml:stage", "Value": "prod"}])
        return real(clients, resource)

    # When the space is tagged production between discovery and the delete
    monkeypatch.setattr(actions, "current_state", space_tagged_meanwhile)
    assert main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    row = rows(capsys.readouterr().out)[fleet.app_id(arn)]
    # Then the space's tag, read again just before the change, stops it
    assert row["verdict"] == "exempt" and not row["executed"]
    assert "production stage 'prod' on space/" in row["reason"] and "read again just before the change" in row["reason"]
    assert studio.status(sm, arn) == "InService"


def test_dry_run_changes_nothing_and_says_would(sm, seeded, capsys):
    assert main(["sweep", "--kind", "studio-app", "--mode", "dry-run", "--json"]) == 0
    out = rows(capsys.readouterr().out)
    apps = by_case(out, seeded)
    assert sorted(c for c, r in apps.items() if r["verdict"] == "act") == ["idle-canvas", "idle-canvas-big"]
    assert not any(r["executed"] for r in out.values())
    assert all(studio.status(sm, a) == "InService" for a in seeded["apps"].values())
    assert all("reaper:warned-at" not in {t["Key"] for t in sm.list_tags(ResourceArn=a)["Tags"]} for a in seeded["apps"].values())


def test_enforce_with_grace_warns_first_with_a_tag_on_the_app(sm, seeded, capsys):
    assert main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "60", "--json"]) == 0
    apps = by_case(rows(capsys.readouterr().out), seeded)
    assert apps["idle-canvas"]["verdict"] == "warn" and not apps["idle-canvas"]["executed"]
    tags = {t["Key"] for t in sm.list_tags(ResourceArn=seeded["apps"]["idle-canvas"])["Tags"]}
    assert "reaper:warned-at" in tags
    assert studio.status(sm, seeded["apps"]["idle-canvas"]) == "InService"


def test_a_protective_tag_added_after_discovery_stops_the_delete(sm, seeded, capsys, monkeypatch):
    # Given the owner tags the app exempt between discovery and the action
    from reaper.kinds.studio_app import actions

    real = actions.current_state

    def tagged_meanwhile(clients, resource):
        if resource.arn == seeded["apps"]["idle-canvas"]:
            sm.add_tags(ResourceArn=resource.arn, Tags=[{"Key": "reaper:exempt", "Value": "true"}])
        return real(clients, resource)

    monkeypatch.setattr(actions, "current_state", tagged_meanwhile)
    assert main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    apps = by_case(rows(capsys.readouterr().out), seeded)
    assert apps["idle-canvas"]["verdict"] == "exempt" and not apps["idle-canvas"]["executed"]
    assert "read again just before the change" in apps["idle-canvas"]["reason"]
    assert studio.status(sm, seeded["apps"]["idle-canvas"]) == "InService"
    assert apps["idle-canvas-big"]["executed"] is True


def test_an_app_deleted_by_its_user_meanwhile_is_kept_quietly(sm, seeded, capsys, monkeypatch):
    from reaper.kinds.studio_app import actions

    real = actions.current_state

    def deleted_meanwhile(clients, resource):
        if resource.arn == seeded["apps"]["idle-canvas"]:
            sm.delete_app(DomainId=seeded["domain"], UserProfileName="cy", AppType="Canvas", AppName="default")
        return real(clients, resource)

    monkeypatch.setattr(actions, "current_state", deleted_meanwhile)
    assert main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    apps = by_case(rows(capsys.readouterr().out), seeded)
    assert apps["idle-canvas"]["verdict"] == "keep" and not apps["idle-canvas"]["executed"]
    assert "Deleting" in apps["idle-canvas"]["reason"]


def test_admin_timeout_turns_idle_shutdown_on_and_the_undo_turns_it_back(sm, seeded, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES", "90")
    assert main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "60", "--json"]) == 0
    out = rows(capsys.readouterr().out)
    off = out[seeded["off_domain"]]
    assert off["verdict"] == "act" and off["executed"] is True and off["action"] == "enable-idle-shutdown"
    assert '"LifecycleManagement": "DISABLED"' in off["detail"]  # the previous settings, recorded
    settings = sm.describe_domain(DomainId=seeded["off_domain"])["DefaultUserSettings"]
    for block in ("JupyterLabAppSettings", "CodeEditorAppSettings"):
        idle = settings[block]["AppLifecycleManagement"]["IdleSettings"]
        assert idle == {"LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 90}
    assert settings["ExecutionRole"]  # the rest of the domain's settings are untouched
    # and for shared spaces too: DefaultSpaceSettings (JupyterLab: the one block it has), the rest kept
    shared = sm.describe_domain(DomainId=seeded["off_domain"])["DefaultSpaceSettings"]
    assert shared["JupyterLabAppSettings"]["AppLifecycleManagement"]["IdleSettings"] == {
        "LifecycleManagement": "ENABLED",
        "IdleTimeoutInMinutes": 90,
    }
    assert shared["ExecutionRole"] and "CodeEditorAppSettings" not in shared
    assert out[seeded["domain"]]["executed"] is False  # already on: not touched
    # the undo command's settings put both back
    undo = off["undo"]
    blocks = json.loads(undo.split("--default-user-settings '", 1)[1].split("'", 1)[0])
    space_blocks = json.loads(undo.split("--default-space-settings '", 1)[1].split("'", 1)[0])
    sm.update_domain(DomainId=seeded["off_domain"], DefaultUserSettings=blocks, DefaultSpaceSettings=space_blocks)
    again = sm.describe_domain(DomainId=seeded["off_domain"])
    assert (
        again["DefaultUserSettings"]["JupyterLabAppSettings"]["AppLifecycleManagement"]["IdleSettings"]["LifecycleManagement"] == "DISABLED"
    )
    assert (
        again["DefaultSpaceSettings"]["JupyterLabAppSettings"]["AppLifecycleManagement"]["IdleSettings"]["LifecycleManagement"]
        == "DISABLED"
    )


def test_bad_admin_timeout_is_a_usage_error(seeded, capsys, monkeypatch):
    monkeypatch.setenv("REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES", "30")  # AWS accepts 60..525600
    assert main(["sweep", "--kind", "studio-app", "--json"]) == 2
    assert "REAPER_STUDIO_ENFORCE_IDLE_SHUTDOWN_MINUTES" in capsys.readouterr().err


def test_no_domains_is_an_empty_sweep(aws, capsys):
    assert main(["sweep", "--kind", "studio-app", "--json"]) == 0
    assert capsys.readouterr().out.strip() == ""


def test_a_healthy_app_reports_its_health_check_as_user_activity_and_is_never_idle(sm, aws, capsys):
    # Given an app in a domain without idle shutdown, created long ago; AWS sets its "last user
    # activity" to its last health check (DescribeApp reference), so it looks busy whatever its use
    now = datetime.now(UTC)
    d = studio.domain(sm, "lab", idle_shutdown=False)
    studio.space(sm, d, "s1")
    arn = studio.app(sm, d, space_name="s1", tags={"ml:stage": "dev"}, created=now - timedelta(days=3))
    described = sm.describe_app(DomainId=d, SpaceName="s1", AppType="JupyterLab", AppName="default")
    assert described["LastUserActivityTimestamp"] == described["LastHealthCheckTimestamp"]
    # When the reaper sweeps in enforce
    assert main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    row = rows(capsys.readouterr().out)[fleet.app_id(arn)]
    # Then it is neither idle nor busy: unknown, kept, with the code coverage groups by and its fix (a space without an
    # owner is shared: its domain's DefaultSpaceSettings, off here, are what apply)
    assert row["verdict"] == "keep" and row["unknown"] == "shared-space-idle-shutdown-off"
    assert "StudioEnforceIdleShutdownMinutes" in row["reason"] and "last user activity" not in row["reason"]


def test_demo_scene_in_server_mode_plays_as_it_says(capsys):
    # The moto extension works behind moto's server too (the demo and the bench use it)
    from reaper_devkit.local_aws import local_account, session
    from reaper_devkit.scenes import studio_app as scene

    with local_account():
        expected = scene.seed(session(), datetime.now(UTC))
        assert main(["sweep", "--kind", "studio-app", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
        out = rows(capsys.readouterr().out)
    verdicts = {rid: out[rid]["verdict"] for rid in expected}
    for rid, says in expected.items():
        word = says.split(":", 1)[0]
        assert {"deleted": "act", "kept": "keep", "exempt": "exempt", "reported": "keep"}[word] == verdicts[rid], (rid, out[rid]["reason"])
    assert sum(r["executed"] for r in out.values()) == 1  # the idle Canvas app

"""A user profile that turned its domain's idle shutdown off (issue 24): its apps look covered by the domain, but AWS
never stops them. Through the studio-app function's handler and runtime, the CLI, and the kit's user profiles
(UpdateUserProfile as a user or admin does it; the reaper never calls it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.sagemaker.exceptions import ValidationError

from reaper_devkit import seed_studio as studio
from reaper_devkit.calls import recording
from reaper_devkit.jupyter_hop import JupyterServer, PresignedHop
from reaper_devkit.moto_ext.sagemaker_presigned import store
from reaper_devkit.moto_ext.sagemaker_studio import checked_idle
from reaper_devkit.template import function_actions
from tests.conftest import event, load_function, throttle
from tests.helpers.studio_fleet import cli_rows, studio_outcomes

DEV = {"ml:stage": "dev", "reaper:idle-minutes": "5"}
DESCRIBE = "sagemaker:DescribeUserProfile"


def lab_off() -> dict[str, Any]:
    return {"JupyterLabAppSettings": studio.idle_block(False)}


@pytest.fixture
def fleet(sm: Any) -> dict[str, str]:
    """One domain with idle shutdown on (120 min): ana turned it off for JupyterLab in her profile, dee for Code
    Editor, cy set her own timeout, bo left it; each has a JupyterLab or Code Editor app half an hour old."""
    d = studio.domain(sm, "lab")
    for user in ("ana", "bo", "cy", "dee"):
        studio.user(sm, d, user, {"ml:owner": f"{user}@example.com"})
    sm.update_user_profile(DomainId=d, UserProfileName="ana", UserSettings=lab_off())
    sm.update_user_profile(DomainId=d, UserProfileName="dee", UserSettings={"CodeEditorAppSettings": studio.idle_block(False)})
    sm.update_user_profile(DomainId=d, UserProfileName="cy", UserSettings={"JupyterLabAppSettings": studio.idle_block(True, 240)})
    # younger than their timeouts plus the margin (docs/kinds/studio-app.md, trust then verify): covered apps not yet due a look
    old = datetime.now(UTC) - timedelta(minutes=30)
    apps = {}
    for space, owner, app_type in (
        ("ana-lab", "ana", "JupyterLab"),
        ("ana-code", "ana", "CodeEditor"),
        ("bo-lab", "bo", "JupyterLab"),
        ("cy-lab", "cy", "JupyterLab"),
        ("dee-code", "dee", "CodeEditor"),
    ):
        studio.space(sm, d, space, owner=owner, app_type=app_type)
        apps[space] = studio.app(sm, d, space_name=space, app_type=app_type, tags=DEV, created=old).split(":app/", 1)[1]
    return {"domain": d, **apps}


def test_a_profile_that_turned_idle_shutdown_off_uncovers_its_apps_and_only_those(sm, fleet, capsys):
    # When the CLI sweeps (JupyterReads off), reading each profile once
    with recording() as calls:
        out = {r["id"]: r for r in cli_rows(capsys, "sweep", "--json")}
    # Then ana's JupyterLab app and dee's Code Editor app are unknown, with the profile and the fix in the reason
    lab, code = out[fleet["ana-lab"]], out[fleet["dee-code"]]
    assert (lab["verdict"], lab["unknown"]) == ("keep", "jupyterlab-profile-idle-shutdown-off")
    assert (code["verdict"], code["unknown"]) == ("keep", "profile-idle-shutdown-off")
    assert "user profile ana turned" in lab["reason"] and "never changes a user profile" in lab["reason"]
    # the others stay covered: ana's Code Editor (her profile turned off JupyterLab only), bo's, and cy's at her own timeout
    for space in ("ana-code", "bo-lab", "cy-lab"):
        assert out[fleet[space]]["unknown"] == "idle-shutdown-on", space
    assert "after 240 min" in out[fleet["cy-lab"]]["reason"] and "after 120 min" in out[fleet["bo-lab"]]["reason"]
    # one DescribeUserProfile per distinct profile owning a covered app (4 profiles, 5 apps), every call granted
    assert calls.by_operation().get(DESCRIBE) == 4
    assert calls.actions <= function_actions("StudioAppFunction")
    # nothing changed any user profile
    assert sm.describe_user_profile(DomainId=fleet["domain"], UserProfileName="ana")["UserSettings"] == lab_off()
    # and `reaper coverage` names them, counts what JupyterReads would reach (the JupyterLab one), with its fix
    cov = cli_rows(capsys, "coverage", "--output", "json")
    reasons = {t["code"]: t for c in cov if c["type"] == "coverage" for t in c["reasons"]}
    assert (
        reasons["profile-idle-shutdown-off"]["resources"] == 1
        and "never changes a user profile" in reasons["profile-idle-shutdown-off"]["fix"]
    )
    [reach] = [c for c in cov if c["type"] == "opt-in"]
    assert (reach["opt_in"], reach["would_reach"]) == ("JupyterReads", 1)


def test_with_jupyter_reads_on_the_uncovered_jupyterlab_app_is_judged_by_its_server(
    aws, sm, fleet, hop: PresignedHop, jupyter: JupyterServer, deployed_env, monkeypatch
):
    # Given JupyterReads on and ana's JupyterLab app behind the Studio hop, its server quiet
    monkeypatch.setenv("REAPER_JUPYTER_READS", "on")
    hop.serve_app(fleet["domain"], "ana-lab", jupyter)
    app = load_function("studio_app")
    # When swept an hour later (its window is 5 min)
    out = studio_outcomes(app, datetime.now(UTC) + timedelta(hours=1))
    # Then it is judged on its Jupyter server's evidence (would delete, dry-run), saying why it was read
    lab = out[fleet["ana-lab"]]
    assert lab.verdict.value == "act" and lab.decision.evidence["source"] == "jupyter" and not lab.executed
    # Code Editor has no Jupyter API: still unknown; the covered apps are not opened
    assert out[fleet["dee-code"]].decision.unknown == "profile-idle-shutdown-off"
    assert out[fleet["bo-lab"]].decision.unknown == "idle-shutdown-on"
    assert [space for (_, _, space, _) in store_calls(hop)] == ["ana-lab"]


def store_calls(hop: PresignedHop) -> list[tuple[str, str, str, str]]:
    return list(store(hop._backend()).studio_calls)


def test_a_throttled_profile_read_is_unknown_never_covered_and_the_sweep_goes_on(aws, sm, fleet, deployed_env, lambda_context, monkeypatch):
    # Given DescribeUserProfile throttled for bo (whose profile says nothing: covered, if it had been read)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("studio_app")
    throttle(monkeypatch, app.RUNTIME.clients()("sagemaker"), "describe_user_profile", {"UserProfileName": "bo"})
    # When the handler runs, then nothing fails and nothing is deleted
    result = app.handler(event("studio-app-schedule.json"), lambda_context)
    assert result["acted"] == [] and result["errors"] == []
    assert all(studio.status(sm, f"arn:aws:sagemaker:us-east-1:123456789012:app/{fleet[s]}") == "InService" for s in ("bo-lab", "ana-lab"))
    # and the sweep keeps bo's app as unknown (not read, with the error), never as covered by assumption
    out = studio_outcomes(app, datetime.now(UTC))
    bo = out[fleet["bo-lab"]]
    assert bo.verdict.value == "keep" and bo.decision.unknown == "not-read" and "ThrottlingException" in bo.reason
    assert out[fleet["cy-lab"]].decision.unknown == "idle-shutdown-on"
    assert out[fleet["ana-lab"]].decision.unknown == "jupyterlab-profile-idle-shutdown-off"


def test_a_profile_deleted_between_the_listing_and_its_describe_is_unknown(aws, sm, fleet, deployed_env, monkeypatch):
    # Given bo deletes his app and his profile after ListApps listed it running, before the reaper describes the profile
    app = load_function("studio_app")
    client = app.RUNTIME.clients()("sagemaker")
    real = client.describe_user_profile

    def deleted_meanwhile(**kwargs: Any) -> Any:
        if kwargs.get("UserProfileName") == "bo":
            sm.delete_app(DomainId=fleet["domain"], SpaceName="bo-lab", AppType="JupyterLab", AppName="default")
            for _ in range(3):  # DeleteApp takes a moment: ResourceInUse until the app is Deleted
                try:
                    sm.delete_user_profile(DomainId=fleet["domain"], UserProfileName="bo")
                    break
                except ClientError as exc:
                    assert exc.response["Error"]["Code"] == "ResourceInUse"
        return real(**kwargs)

    monkeypatch.setattr(client, "describe_user_profile", deleted_meanwhile)
    out = studio_outcomes(app, datetime.now(UTC))
    # Then bo's app is kept as unknown (its profile was not found), the rest as usual, and no error
    bo = out[fleet["bo-lab"]]
    assert bo.verdict.value == "keep" and bo.decision.unknown == "not-read" and "ResourceNotFound" in bo.reason
    assert out[fleet["cy-lab"]].decision.unknown == "idle-shutdown-on"
    assert all(o.verdict.value != "error" for o in out.values())


def test_the_kit_refuses_idle_settings_outside_the_reference_and_a_profile_in_use(sm, fleet):
    # (botocore and the shape check refuse these before they are sent: the kit's own refusal, for raw requests)
    for idle in ({"LifecycleManagement": "OFF"}, {"IdleTimeoutInMinutes": 30}, {"MaxIdleTimeoutInMinutes": 600_000}):
        with pytest.raises(ValidationError):
            checked_idle({"JupyterLabAppSettings": {"AppLifecycleManagement": {"IdleSettings": idle}}})
    assert checked_idle(lab_off()) == lab_off()
    with pytest.raises(ClientError, match="ResourceInUse"):
        sm.delete_user_profile(DomainId=fleet["domain"], UserProfileName="bo")  # his app runs
    with pytest.raises(ClientError, match="ResourceNotFound"):
        sm.describe_user_profile(DomainId=fleet["domain"], UserProfileName="nobody")

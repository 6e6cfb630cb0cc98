"""A user profile's idle settings win over its domain's (kinds/studio_app/profiles.py): what is read, from which
profile, and what the rule says of an app whose profile turned idle shutdown off, set its own timeout, or was not read."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.core.coverage import reason
from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.studio_app import profiles
from reaper.kinds.studio_app.model import AppFacts
from reaper.kinds.studio_app.rules import decide

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
OFF = Settings()
# a JupyterLab app in a private space of ana's, on SageMaker Distribution 2.0, in an IAM domain whose idle shutdown is on (120 min)
LAB = AppFacts("d-lab", "JupyterLab", "default", None, "ana-lab", "ana", idle_shutdown_minutes=120, auth_mode="IAM", smd_version="2.0.0")
CODE = replace(LAB, app_type="CodeEditor", space="ana-code")


def idle(state: str | None = None, minutes: int | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {}
    if state:
        block["LifecycleManagement"] = state
    if minutes:
        block["IdleTimeoutInMinutes"] = minutes
    return {"AppLifecycleManagement": {"IdleSettings": block}}


class Sagemaker:
    """DescribeUserProfile answers from `settings` by profile name, or fails with `fail[name]`."""

    def __init__(self, settings: dict[str, Any], fail: dict[str, str] | None = None) -> None:
        self.settings, self.fail, self.asked = settings, fail or {}, []

    def describe_user_profile(self, DomainId: str, UserProfileName: str) -> dict[str, Any]:
        self.asked.append((DomainId, UserProfileName))
        if UserProfileName in self.fail:
            raise ClientError({"Error": {"Code": self.fail[UserProfileName], "Message": "no"}}, "DescribeUserProfile")
        return {"DomainId": DomainId, "UserProfileName": UserProfileName, "UserSettings": self.settings.get(UserProfileName, {})}


def judged(facts: AppFacts, settings: Settings = OFF):
    r = Resource(
        "studio-app",
        "d-lab/x/JupyterLab/default",
        "arn:x",
        "us-east-1",
        "InService",
        tags={},
        created_at=NOW - timedelta(minutes=90),  # within a 120-minute timeout plus the margin: covered, not yet due a look
        facts=facts,
    )
    return decide(r, None, read_tags({}, settings), settings, NOW)


def test_one_describe_per_distinct_profile_and_only_for_apps_their_domain_covers():
    apps = [
        LAB,
        CODE,  # ana again: no second call
        replace(LAB, space="bo-lab", space_owner="bo"),
        replace(LAB, space="cy-lab", space_owner="cy", idle_shutdown_minutes=None),  # domain off: nothing to override
        replace(LAB, space="dee-lab", space_owner="dee", custom_image="team"),  # not covered anyway
        replace(LAB, space="shared", space_owner=None),  # no owner: its domain's setting stands
        AppFacts("d-lab", "Canvas", "default", "eve", None),  # no idle shutdown for Canvas
    ]
    sm = Sagemaker({})
    got = profiles.read(sm, apps)
    assert sm.asked == [("d-lab", "ana"), ("d-lab", "bo")]
    assert set(got) == {("d-lab", "ana"), ("d-lab", "bo")}


def test_a_profile_that_disables_idle_shutdown_uncovers_its_apps_of_that_type_only():
    sm = Sagemaker({"ana": {"JupyterLabAppSettings": idle("DISABLED")}})
    read = profiles.read(sm, [LAB, CODE])
    lab, code = profiles.apply(LAB, read), profiles.apply(CODE, read)
    assert lab.idle_shutdown_minutes is None and lab.profile_idle_off and lab.jupyter_readable
    assert code == CODE  # its Code Editor block says nothing: the domain's setting stands


def test_a_profile_timeout_is_the_apps_timeout_and_an_enabled_profile_changes_nothing():
    sm = Sagemaker({"ana": {"JupyterLabAppSettings": idle("ENABLED", 480), "CodeEditorAppSettings": idle("ENABLED")}})
    read = profiles.read(sm, [LAB, CODE])
    lab, code = profiles.apply(LAB, read), profiles.apply(CODE, read)
    assert (lab.idle_shutdown_minutes, lab.profile_timeout) == (480, True)
    assert code == CODE
    d = judged(lab)
    assert d.unknown == "idle-shutdown-on" and "its user profile's built-in idle shutdown" in d.reason and "after 480 min" in d.reason


@pytest.mark.parametrize("code", ["ThrottlingException", "ResourceNotFound", "AccessDeniedException"])
def test_a_profile_not_read_leaves_its_apps_unknown_never_covered_by_assumption(code):
    read = profiles.read(Sagemaker({}, fail={"ana": code}), [LAB])
    facts = profiles.apply(LAB, read)
    assert facts.idle_shutdown_minutes is None and facts.profile_unread == code and not facts.profile_idle_off
    d = judged(facts)
    assert d.verdict is Verdict.KEEP and d.unknown == "not-read" and code in d.reason
    assert not reason(d.unknown).covered


def test_an_app_whose_profile_turned_idle_shutdown_off_is_unknown_with_its_fix():
    off = replace(LAB, idle_shutdown_minutes=None, profile_idle_off=True)
    d = judged(off)
    assert d.verdict is Verdict.KEEP and d.unknown == "jupyterlab-profile-idle-shutdown-off"
    assert "user profile ana turned" in d.reason and "never changes a user profile" in d.reason and "or JupyterReads" in d.reason
    assert reason(d.unknown).opt_in == "JupyterReads" and not reason(d.unknown).covered
    # Code Editor (no Jupyter API) and an SSO domain's JupyterLab: a code no opt-in reaches
    for facts in (replace(off, app_type="CodeEditor"), replace(off, auth_mode="SSO")):
        other = judged(facts)
        assert other.unknown == "profile-idle-shutdown-off" and "JupyterReads" not in other.reason
    assert reason("profile-idle-shutdown-off").opt_in is None
    # with JupyterReads on, such a JupyterLab app is what a reading judges
    assert off.jupyter_readable and not replace(off, app_type="CodeEditor").jupyter_readable


def test_overrides_read_the_reference_shape_and_nothing_else():
    assert profiles.overrides(None) == {"JupyterLab": (None, None), "CodeEditor": (None, None)}
    got = profiles.overrides({"JupyterLabAppSettings": idle("disabled"), "CodeEditorAppSettings": idle(minutes=90)})
    assert got == {"JupyterLab": ("DISABLED", None), "CodeEditor": (None, 90)}


def test_a_shared_space_is_never_judged_by_its_owners_profile():
    # Given ana's profile turns JupyterLab's idle shutdown off, and a shared space she created, covered by its domain's
    # DefaultSpaceSettings
    shared = replace(LAB, space="team", shared=True)
    sm = Sagemaker({"ana": {"JupyterLabAppSettings": idle("DISABLED")}})
    # When the profiles are read for it, then hers is not asked and the app keeps its space settings' coverage
    read = profiles.read(sm, [shared])
    assert sm.asked == [] and profiles.apply(shared, read) == shared
    assert judged(shared).unknown == "idle-shutdown-on"
    # an image idle shutdown does not run on is not worth a read either
    assert not profiles.needs_profile(replace(LAB, smd_version="1.9.0"))

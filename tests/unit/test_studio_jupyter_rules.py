"""The studio-app rule with JupyterReads: which apps a Jupyter reading judges, and what it decides."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.coverage import reason
from reaper.core.jupyter_verdict import JupyterKernel, JupyterReading
from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.studio_app import studio_jupyter
from reaper.kinds.studio_app.model import AppFacts
from reaper.kinds.studio_app.rules import decide

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
ON, OFF = Settings(jupyter_reads=True), Settings()
LAB = AppFacts("d-lab", "JupyterLab", "default", None, "ana-lab", "ana", auth_mode="IAM", smd_version="2.0.0")
CLASSIC = AppFacts("d-lab", "JupyterServer", "default", "ana", None, auth_mode="IAM")
STARTED = NOW - timedelta(days=1)


def app(facts: AppFacts = LAB, created: datetime = NOW - timedelta(days=2)) -> Resource:
    return Resource(
        "studio-app",
        f"d-lab/{facts.owner_name}/{facts.app_type}/default",
        f"arn:aws:sagemaker:us-east-1:1:app/d-lab/{facts.owner_name}/{facts.app_type}/default",
        "us-east-1",
        "InService",
        tags={},
        instance_type="ml.t3.medium",
        created_at=created,
        facts=facts,
    )


def run(r: Resource, signal: Any, settings: Settings = ON):
    return decide(r, signal, read_tags(r.tags, settings), settings, NOW)


@pytest.mark.parametrize(
    "facts, readable",
    [
        (LAB, True),  # idle shutdown off
        (replace(LAB, idle_shutdown_minutes=60), False),  # covered by idle shutdown: nothing to read
        (replace(LAB, idle_shutdown_minutes=60, custom_image="team"), True),  # a custom image idle shutdown cannot cover
        (CLASSIC, True),
        (replace(LAB, app_type="CodeEditor"), False),  # not Jupyter
        (replace(CLASSIC, app_type="KernelGateway"), False),  # kernels only; AWS documents no reading of it
        (replace(LAB, auth_mode="SSO"), False),  # CreatePresignedDomainUrl: IAM domains only
        (replace(LAB, space_owner=None), False),  # no user profile to sign in as
        (replace(LAB, profile_idle_off=True), True),  # its domain has idle shutdown on, its user profile turned it off
        (replace(LAB, app_type="CodeEditor", profile_idle_off=True), False),  # the same, not Jupyter
    ],
)
def test_which_apps_a_jupyter_reading_may_judge(facts, readable):
    assert facts.jupyter_readable is readable


def test_the_url_signs_in_as_the_spaces_owner_and_lands_on_the_apps_own_status():
    assert (LAB.sign_in_as, studio_jupyter.landing_uri(LAB)) == ("ana", "app:JupyterLab:api/status")
    assert (CLASSIC.sign_in_as, studio_jupyter.landing_uri(CLASSIC)) == ("ana", "app:JupyterServer:api/status")


def test_an_idle_reading_deletes_the_app_saying_what_stays_and_a_busy_kernel_keeps_it():
    idle = run(app(), JupyterReading(STARTED, (JupyterKernel("idle", NOW - timedelta(hours=3), 0),)))
    assert idle.verdict is Verdict.ACT and idle.action == "delete" and "storage volume stay" in idle.reason
    assert idle.evidence["source"] == "jupyter" and idle.evidence["app_type"] == "JupyterLab"
    busy = run(app(CLASSIC), JupyterReading(STARTED, (JupyterKernel("busy", NOW - timedelta(hours=3), 0),)))
    assert busy.verdict is Verdict.KEEP and busy.unknown is None and "busy" in busy.reason


@pytest.mark.parametrize("code", ["url-refused", "jupyter-unreachable", "jupyter-unreadable", "jupyter-not-reached"])
def test_a_failed_reading_is_unknown_with_its_code_never_idle(code):
    d = run(app(), JupyterReading(unreadable="why", unknown=code))
    assert d.verdict is Verdict.KEEP and d.unknown == code and "why" in d.reason and "idle shutdown off" in d.reason


def test_a_readable_app_younger_than_its_window_is_kept_on_its_age_and_without_the_reading_unknown():
    assert run(app(created=NOW - timedelta(minutes=10)), None).unknown is None
    # with JupyterReads off, the same young app is what it was: unknown
    assert run(app(created=NOW - timedelta(minutes=10)), None, OFF).unknown == "jupyterlab-no-activity-signal"


def test_without_a_reading_the_reasons_say_what_would_reach_it():
    off = run(app(), None, OFF)
    assert off.unknown == "jupyterlab-no-activity-signal" and "or JupyterReads" in off.reason
    assert reason(off.unknown).opt_in == "JupyterReads"  # reaper coverage counts it as what JupyterReads would reach
    classic_off = run(app(CLASSIC), None, OFF)
    assert classic_off.unknown == "classic-jupyterserver-no-activity-signal" and "or JupyterReads" in classic_off.reason
    assert reason(classic_off.unknown).opt_in == "JupyterReads"
    # what JupyterReads cannot open keeps a code no opt-in reaches, and its reason does not offer it
    sso = run(app(replace(LAB, auth_mode="SSO")), None)
    assert sso.unknown == "no-activity-signal" and "IAM Identity Center" in sso.reason
    sso_off = run(app(replace(LAB, auth_mode="SSO")), None, OFF)
    assert sso_off.unknown == "no-activity-signal" and "JupyterReads" not in sso_off.reason
    classic_sso = run(app(replace(CLASSIC, auth_mode="SSO")), None)
    assert classic_sso.unknown == "classic-no-activity-signal" and "IAM Identity Center" in classic_sso.reason
    assert reason("no-activity-signal").opt_in is None and reason("classic-no-activity-signal").opt_in is None


class Sagemaker:
    """DescribeApp answers `status`; CreatePresignedDomainUrl records what it was asked and fails (no network here)."""

    def __init__(self, status: str) -> None:
        self.status = status
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def describe_app(self, **kwargs: Any) -> dict[str, str]:
        self.asked.append(("DescribeApp", kwargs))
        return {"Status": self.status}

    def create_presigned_domain_url(self, **kwargs: Any) -> dict[str, str]:
        self.asked.append(("CreatePresignedDomainUrl", kwargs))
        raise RuntimeError("https://d-lab.studio.us-east-1.sagemaker.aws/auth?token=SECRET")


def test_the_url_is_asked_for_only_after_describe_app_says_in_service_with_the_shortest_session():
    sm = Sagemaker("InService")
    reading = studio_jupyter.read_all(sm, [app()])[app().id]
    assert reading.unknown == "jupyter-unreachable" and "SECRET" not in (reading.unreadable or "")
    assert [op for op, _ in sm.asked] == ["DescribeApp", "CreatePresignedDomainUrl"]
    assert sm.asked[1][1] == {
        "DomainId": "d-lab",
        "UserProfileName": "ana",
        "SpaceName": "ana-lab",
        "SessionExpirationDurationInSeconds": 1_800,
        "ExpiresInSeconds": 60,
        "LandingUri": "app:JupyterLab:api/status",
    }


@pytest.mark.parametrize("status", ["Pending", "Deleting", "Deleted", "Failed"])
def test_an_app_not_in_service_at_the_moment_of_the_read_is_never_asked_a_url(status):
    sm = Sagemaker(status)
    reading = studio_jupyter.read_all(sm, [app()])[app().id]
    assert reading.unknown == "jupyter-unreachable" and status in (reading.unreadable or "")
    assert [op for op, _ in sm.asked] == ["DescribeApp"]

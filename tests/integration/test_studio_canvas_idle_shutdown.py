"""Trust, then verify AWS's idle shutdown, Canvas half (issue 37, item 2). The API reference gives Canvas no idle-shutdown
setting: CanvasAppSettings lists DirectDeploySettings, EmrServerlessSettings, GenerativeAiSettings,
IdentityProviderOAuthSettings, KendraSettings, ModelRegisterSettings, TimeSeriesForecastingSettings and
WorkspaceSettings, and no AppLifecycleManagement / IdleSettings (API_CanvasAppSettings.html); IdleSettings live under
JupyterLabAppSettings and CodeEditorAppSettings only. So nothing in SageMaker schedules a Canvas app's shutdown, there
is nothing to trust and verify, and the reaper's own rule on Canvas's TimeSinceLastActive metric is the Canvas idle
shutdown: a Canvas app in a domain whose (JupyterLab, Code Editor) idle shutdown is on is never "covered by AWS".
The kit refuses an idle setting for Canvas as AWS's reference has none (docs/kinds/studio-app.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from reaper.cli.main import main as cli
from reaper_devkit import seed_studio as studio
from reaper_devkit.local_aws import local_account, session
from tests.conftest import REGION, load_function
from tests.helpers.studio_fleet import studio_outcomes

CANVAS_IDLE = {"AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 60}}}


def _raw(s: Any, target: str, body: dict[str, Any]) -> requests.Response:
    """A signed SageMaker request sent as written (botocore would drop or refuse a member its model lacks)."""
    url = s.client("sagemaker").meta.endpoint_url
    headers = {"X-Amz-Target": f"SageMaker.{target}", "Content-Type": "application/x-amz-json-1.1"}
    req = AWSRequest("POST", url, data=json.dumps(body), headers=headers)
    SigV4Auth(s.get_credentials(), "sagemaker", s.region_name).add_auth(req)
    return requests.post(req.url, data=req.body, headers=dict(req.headers), timeout=30)


@pytest.mark.slow
def test_the_kit_refuses_an_idle_setting_for_canvas_on_the_wire_as_the_reference_lists_none():
    with local_account():
        s = session()
        sm = s.client("sagemaker")
        domain = studio.domain(sm, "canvas")
        studio.user(sm, domain, "cy")
        # When an admin sends Canvas an idle setting, for the domain or for a user profile, as a raw request
        canvas = {"CanvasAppSettings": CANVAS_IDLE}
        sent = [
            _raw(s, "UpdateDomain", {"DomainId": domain, "DefaultUserSettings": canvas}),
            _raw(s, "UpdateUserProfile", {"DomainId": domain, "UserProfileName": "cy", "UserSettings": canvas}),
            _raw(s, "CreateUserProfile", {"DomainId": domain, "UserProfileName": "dee", "UserSettings": canvas}),
            # and a shared space's Code Editor block, which DefaultSpaceSettings does not have either
            _raw(s, "UpdateDomain", {"DomainId": domain, "DefaultSpaceSettings": {"CodeEditorAppSettings": CANVAS_IDLE}}),
        ]
        # Then each is refused, and nothing of it is kept
        assert [r.status_code for r in sent] == [400] * 4, [r.text for r in sent]
        assert all("ValidationException" in r.text for r in sent)
        described = sm.describe_domain(DomainId=domain)
        assert "AppLifecycleManagement" not in json.dumps(described["DefaultUserSettings"].get("CanvasAppSettings") or {})
        assert "CodeEditorAppSettings" not in (described.get("DefaultSpaceSettings") or {})
        assert "dee" not in [p["UserProfileName"] for p in sm.list_user_profiles(DomainIdEquals=domain)["UserProfiles"]]
        # while the members the reference lists are taken
        ok = _raw(s, "UpdateDomain", {"DomainId": domain, "DefaultUserSettings": {"CanvasAppSettings": {"WorkspaceSettings": {}}}})
        assert ok.status_code == 200, ok.text


def _canvas(sm: Any, cw: Any, user: str, *, created: datetime, last_active: datetime | None, now: datetime) -> tuple[str, str]:
    """A domain whose built-in idle shutdown is on (JupyterLab and Code Editor, 120 min), and a Canvas app of `user` in it,
    publishing TimeSinceLastActive (none when `last_active` is None). Returns (domain id, the app's sweep id)."""
    domain = studio.domain(sm, f"d-{user}")
    studio.user(sm, domain, user, {"ml:owner": f"{user}@example.com"})
    arn = studio.app(sm, domain, user_name=user, app_type="Canvas", instance_type="ml.m5.xlarge", created=created)
    if last_active is not None:
        studio.canvas_activity(cw, domain, user, last_active=last_active, now=now)
    return domain, arn.split(":app/", 1)[1]


def test_an_idle_canvas_app_in_a_domain_with_idle_shutdown_on_is_warned_then_deleted_on_its_own_metric(
    aws, sm, cw, deployed_env, monkeypatch
):
    # Given enforce with the grace, and a Canvas app running 12 h, idle 3 h by TimeSinceLastActive, in a domain whose
    # JupyterLab and Code Editor idle shutdown is on (120 min): nothing in SageMaker stops a Canvas app
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    app = load_function("studio_app")
    now = datetime.now(UTC)
    domain, key = _canvas(sm, cw, "cy", created=now - timedelta(hours=12), last_active=now - timedelta(hours=3), now=now)
    arn = f"arn:aws:sagemaker:{REGION}:123456789012:app/{key}"
    # When the studio-app function sweeps, then again after the grace (Canvas still publishing, still idle)
    first = studio_outcomes(app, now)[key]
    later = now + timedelta(minutes=65)
    studio.canvas_activity(cw, domain, "cy", last_active=now - timedelta(hours=3), now=later)
    second = studio_outcomes(app, later)[key]
    # Then it is warned, then deleted, judged on its own metric and never "covered by AWS"; its user profile is kept
    assert first.verdict.value == "warn" and "TimeSinceLastActive" in first.reason, first.reason
    assert second.verdict.value == "act" and second.executed, second.reason
    assert "covered by AWS" not in first.reason + second.reason and first.decision.unknown is None
    assert studio.status(sm, arn) in ("Deleting", "Deleted")
    assert sm.describe_user_profile(DomainId=domain, UserProfileName="cy")["UserProfileName"] == "cy"


def test_a_canvas_app_with_no_metric_is_a_coverage_line_with_its_cost_never_covered_by_aws(aws, sm, cw, deployed_env, capsys):
    # Given a Canvas app running 12 h, in a domain whose idle shutdown is on, publishing no TimeSinceLastActive
    now = datetime.now(UTC)
    _canvas(sm, cw, "gus", created=now - timedelta(hours=12), last_active=None, now=now)
    # When the admin asks for coverage
    capsys.readouterr()
    assert cli(["coverage", "--kind", "studio-app", "--region", REGION, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    [line] = [r for r in rows if r.get("type") == "coverage"]
    reasons = {r["code"]: r for r in line["reasons"]}
    # Then it is counted as unknown, with its cost from the Pricer, not as covered (verified or not) by AWS
    assert reasons["no-canvas-metric"]["resources"] == 1 and reasons["no-canvas-metric"]["hourly_usd"] > 0
    assert not {"idle-shutdown-on", "idle-shutdown-unverified", "jupyterlab-idle-shutdown-unverified"} & set(reasons)


def test_a_canvas_app_used_within_the_window_is_kept(aws, sm, cw, deployed_env):
    # Given a Canvas app running 12 h whose user was active 10 minutes ago
    now = datetime.now(UTC)
    _, key = _canvas(sm, cw, "eve", created=now - timedelta(hours=12), last_active=now - timedelta(minutes=10), now=now)
    # When the function sweeps
    out = studio_outcomes(load_function("studio_app"), now)[key]
    # Then it is kept on evidence
    assert out.verdict.value == "keep" and out.decision.unknown is None and "active" in out.reason, out.reason

"""JupyterReads for Studio: JupyterLab and classic JupyterServer apps that nothing else judges, read through
CreatePresignedDomainUrl and a real jupyter_server behind a stand-in for the Studio hop (reaper_devkit.jupyter_hop),
through the studio-app function's own runtime, its handler and the CLI.

The server serves under a path (as a Studio app does), so the reader must take the base from where the hop lands.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.aws.clients import Clients
from reaper.cli.main import main as cli
from reaper.core.settings import Settings
from reaper.kinds.studio_app import studio_jupyter
from reaper.kinds.studio_app.discover import discover
from reaper_devkit import seed_studio as studio
from reaper_devkit.calls import recording
from reaper_devkit.jupyter_hop import JupyterServer
from reaper_devkit.moto_ext.sagemaker_presigned import store
from tests.conftest import REGION, event, load_function
from tests.helpers.jupyter import DEV, space_app, start_kernel
from tests.helpers.studio_fleet import studio_outcomes
from tests.helpers.sweep_output import everything_seen

PRESIGN = "sagemaker:CreatePresignedDomainUrl"


@pytest.fixture
def jupyter(lab: JupyterServer) -> JupyterServer:
    """The hop (tests/integration/conftest.py) serves the server under a JupyterLab app's path here."""
    return lab


@pytest.fixture
def domains(sm: Any) -> dict[str, str]:
    """A domain whose idle shutdown is off (its JupyterLab apps are read) and one where it is on."""
    off = studio.domain(sm, "legacy", idle_shutdown=False)
    on = studio.domain(sm, "lab")
    for d in (off, on):
        studio.user(sm, d, "ana", {"ml:owner": "ana@example.com"})
    return {"off": off, "on": on}


@pytest.fixture
def app(deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("REAPER_JUPYTER_READS", "on")
    return load_function("studio_app")


def test_a_busy_kernel_keeps_the_app_and_the_only_new_call_is_the_granted_url(aws, sm, hop, lab, domains, app):
    # Given a JupyterLab app in a domain without idle shutdown, whose kernel runs a cell
    busy = space_app(sm, hop, lab, domains["off"], "ana-train")
    kernel = start_kernel(lab)
    client = lab.kernel_client(kernel)
    try:
        client.execute("import time; time.sleep(120)")
        assert lab.wait_for(f"/api/kernels/{kernel}", lambda k: k["execution_state"] == "busy")["execution_state"] == "busy"
        # When a sweep judges it two hours later (past its 5-minute window)
        with recording() as calls:
            out = studio_outcomes(app, datetime.now(UTC) + timedelta(hours=2))[busy]
    finally:
        client.stop_channels()
    # Then it is kept, busy on evidence, read as a browser opens the space (signed in as its owner, landing on the
    # app's own status), and every call is granted with JupyterReads on (and not without)
    assert out.verdict.value == "keep" and "kernel busy" in out.reason and out.decision.unknown is None
    [(domain, user, space, landing)] = store(hop._backend()).studio_calls
    assert (domain, user, space, landing) == (domains["off"], "ana", "ana-train", "app:JupyterLab:api/status")
    assert calls.ungranted("StudioAppFunction", {"JupyterReadsOn"}) == []
    assert PRESIGN in {r.action for r in calls.requests} and calls.ungranted("StudioAppFunction", set()) != []
    assert hop.started == []


def test_an_idle_kernel_is_kept_inside_the_window_and_deleted_on_evidence_after_it(aws, sm, hop, lab, domains, app):
    # Given an app whose kernel ran a cell and sits idle
    idle = space_app(sm, hop, lab, domains["off"], "ana-idle")
    start_kernel(lab)
    # When swept now: active moments ago, kept
    now = studio_outcomes(app, datetime.now(UTC))[idle]
    assert now.verdict.value == "keep" and "active" in now.reason and now.decision.unknown is None
    # and 20 minutes later (window 5 min): idle on the kernel's own last activity, would delete (dry-run)
    later = studio_outcomes(app, datetime.now(UTC) + timedelta(minutes=20))[idle]
    assert later.verdict.value == "act" and later.decision.action == "delete" and not later.executed
    assert "1 idle kernel(s)" in later.reason and "storage volume stay" in later.reason
    assert later.decision.evidence["source"] == "jupyter" and later.decision.evidence["kernels"] == 1


def test_an_open_terminal_keeps_it_and_the_custom_image_app_is_read_too(aws, sm, hop, lab, domains, app):
    # Given an app on a custom image (idle shutdown cannot cover it) in the domain where it is on, a terminal just opened
    custom = space_app(sm, hop, lab, domains["on"], "ana-custom", image_arn="arn:aws:sagemaker:us-east-1:123456789012:image/team")
    lab.api("POST", "/api/terminals")
    # When swept 2 minutes later
    out = studio_outcomes(app, datetime.now(UTC) + timedelta(minutes=2))[custom]
    # Then it is kept on the terminal's activity
    assert out.verdict.value == "keep" and "terminal active" in out.reason
    assert out.decision.evidence["terminals"] == 1 and out.decision.evidence["kernels"] == 0


def test_no_kernel_through_the_handler_changes_nothing_and_a_classic_server_is_read_as_its_user(
    aws, sm, hop, lab, domains, app, lambda_context
):
    # Given an app running nothing, and a Studio Classic JupyterServer app on a billed instance of the same user
    empty = space_app(sm, hop, lab, domains["off"], "ana-empty")
    classic = studio.app(
        sm,
        domains["off"],
        user_name="ana",
        app_type="JupyterServer",
        instance_type="ml.t3.medium",
        tags=DEV,
        created=datetime.now(UTC) - timedelta(days=2),
    ).split(":app/", 1)[1]
    hop.serve_app(domains["off"], "ana", lab)
    # When the schedule fires (the handler, dry-run) and a sweep judges them an hour later
    assert app.handler(event("studio-app-schedule.json"), lambda_context)["resources"] >= 2
    out = studio_outcomes(app, datetime.now(UTC) + timedelta(hours=1))
    # Then both would be deleted on evidence, and nothing changed
    assert out[empty].verdict.value == "act" and "0 idle kernel(s), 0 terminal(s)" in out[empty].reason
    assert out[classic].verdict.value == "act" and out[classic].decision.evidence["source"] == "jupyter"
    assert (domains["off"], "ana", None, "app:JupyterServer:api/status") in store(hop._backend()).studio_calls
    assert studio.status(sm, f"arn:aws:sagemaker:us-east-1:123456789012:app/{empty}") == "InService"


def test_a_refused_url_is_unknown_with_its_reason_and_fix(aws, sm, hop, lab, domains, app):
    # Given an account that denies the reaper one space's URL (AccessDeniedException) and another's hop (HTTP 403)
    api_denied = space_app(sm, hop, lab, domains["off"], "ana-walled")
    hop.refuse_presign_app(domains["off"], "ana-walled")
    hop_denied = space_app(sm, hop, lab, domains["off"], "ana-vpce")
    hop.refuse_app(domains["off"], "ana-vpce")
    # When swept a day later
    out = studio_outcomes(app, datetime.now(UTC) + timedelta(days=1))
    # Then both are kept as unknown, with the stable code and the fix
    for key in (api_denied, hop_denied):
        assert out[key].verdict.value == "keep" and out[key].decision.unknown == "url-refused", out[key].reason
        assert "aws:SourceIp" in out[key].reason and "aws:PrincipalArn" in out[key].reason
    assert "AccessDeniedException" in out[api_denied].reason and "HTTP 403" in out[hop_denied].reason
    assert hop.hits == ["ana-vpce"]


def test_a_hop_that_lands_on_a_studio_page_is_unknown_and_goes_no_further(aws, sm, hop, lab, domains, app):
    # Given a space the hop does not route to a Jupyter server: it lands on a Studio page (a JavaScript app)
    studio_page = space_app(sm, hop, None, domains["off"], "ana-nowhere")
    store(hop._backend()).studio_hops[domains["off"]] = hop.origin
    out = studio_outcomes(app, datetime.now(UTC) + timedelta(days=1))[studio_page]
    # Then nothing past the landing is requested: unknown, never idle
    assert out.verdict.value == "keep" and out.decision.unknown == "jupyter-unreadable"
    assert "did not land on the app's Jupyter server" in out.reason


def test_an_app_not_in_service_at_the_moment_of_the_read_is_never_opened(aws, sm, hop, lab, domains, app):
    # Given an app that discovery found running, deleted before its reading
    key = space_app(sm, hop, lab, domains["off"], "ana-going")
    [resource] = [r for r in discover(Clients(REGION, aws), Settings(), datetime.now(UTC)) if r.id == key]
    sm.delete_app(DomainId=domains["off"], SpaceName="ana-going", AppType="JupyterLab", AppName="default")
    # When it is read
    reading = studio_jupyter.read_all(sm, [resource])[key]
    # Then DescribeApp said so, no URL was asked for, nothing was opened or started: unknown
    assert reading.unknown == "jupyter-unreachable" and "not opened" in (reading.unreadable or "")
    assert store(hop._backend()).studio_calls == [] and hop.hits == [] and hop.started == []


def test_covered_protected_code_editor_and_sso_apps_are_never_opened(aws, sm, hop, lab, domains, app, deployed_env, monkeypatch):
    # Given apps JupyterReads must not open: covered by idle shutdown (and not yet past its 120-minute timeout plus the
    # margin: docs/kinds/studio-app.md, trust then verify), exempt (its space's tag), production,
    # Code Editor (not Jupyter), and one in a domain that signs in through IAM Identity Center
    covered = space_app(sm, hop, lab, domains["on"], "ana-covered", created=datetime.now(UTC))
    exempt = space_app(sm, hop, lab, domains["off"], "ana-exempt", space_tags={"reaper:exempt": "true"})
    prod = space_app(sm, hop, lab, domains["off"], "ana-prod", tags={"ml:stage": "prod"})
    studio.space(sm, domains["off"], "ana-code", owner="ana", app_type="CodeEditor")
    code = studio.app(
        sm, domains["off"], space_name="ana-code", app_type="CodeEditor", tags=DEV, created=datetime.now(UTC) - timedelta(days=2)
    )
    sso = studio.domain(sm, "sso", idle_shutdown=False, auth_mode="SSO")
    studio.user(sm, sso, "ana")
    in_sso = space_app(sm, hop, lab, sso, "ana-sso")
    later = datetime.now(UTC) + timedelta(hours=1)
    # When JupyterReads is off, then on
    monkeypatch.delenv("REAPER_JUPYTER_READS")
    off = studio_outcomes(load_function("studio_app"), later)
    assert store(hop._backend()).studio_calls == []
    assert off[in_sso].decision.unknown == "no-activity-signal" and "JupyterReads" not in off[in_sso].reason
    monkeypatch.setenv("REAPER_JUPYTER_READS", "on")
    on = studio_outcomes(load_function("studio_app"), later)
    # Then no URL is asked for any of them, and each keeps its verdict and reason
    assert store(hop._backend()).studio_calls == [] and hop.hits == []
    assert on[covered].decision.unknown == "idle-shutdown-on"
    assert on[exempt].verdict.value == "exempt" and on[prod].verdict.value == "exempt"
    assert on[code.split(":app/", 1)[1]].decision.unknown == "no-activity-signal"
    assert on[in_sso].decision.unknown == "no-activity-signal" and "IAM Identity Center" in on[in_sso].reason


def test_the_url_its_token_and_jupyters_token_are_never_logged_posted_or_recorded(
    aws, sm, hop, lab, domains, app, deployed_env, caplog, capsys
):
    # Given apps read through the hop, one idle (posted), one refused
    quiet = space_app(sm, hop, lab, domains["off"], "ana-quiet")
    space_app(sm, hop, lab, domains["off"], "ana-walled")
    hop.refuse_app(domains["off"], "ana-walled")
    caplog.set_level(logging.DEBUG)
    # When swept (records, queue, logs) and printed as the CLI prints
    out = studio_outcomes(app, datetime.now(UTC) + timedelta(hours=1))
    seen = everything_seen(aws, deployed_env, out.values(), caplog, capsys)
    # Then the tokens were issued and used, and none of them, nor the hop's or the server's address, appears anywhere
    tokens = store(hop._backend()).issued
    assert len(tokens) == 2 and out[quiet].verdict.value == "act"
    for secret in [*tokens, lab.token, "token=", hop.origin, lab.origin, "AuthorizedUrl"]:
        assert secret not in seen


def test_the_cli_sweeps_with_the_reading_and_prints_its_verdicts(aws, sm, hop, lab, domains, deployed_env, monkeypatch, capsys):
    # Given an app nothing else judges, with a terminal just opened, and JupyterReads on in the CLI's environment
    busy = space_app(sm, hop, lab, domains["off"], "ana-cli")
    lab.api("POST", "/api/terminals")
    monkeypatch.setenv("REAPER_JUPYTER_READS", "on")
    # When `reaper sweep --kind studio-app --json` runs
    code = cli(["sweep", "--kind", "studio-app", "--json"])
    rows = {r["id"]: r for r in (json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{"))}
    # Then the app is kept on the terminal's activity, on evidence
    assert code == 0
    assert rows[busy]["verdict"] == "keep" and rows[busy]["unknown"] is None and "terminal active" in rows[busy]["reason"]

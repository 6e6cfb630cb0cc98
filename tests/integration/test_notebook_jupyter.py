"""JupyterReads: notebooks without the agent judged by a real jupyter_server, behind a stand-in for the
presigned hop, through the notebook function's own runtime (reaper_devkit.jupyter_hop)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.model import Outcome
from reaper.sweep.pipeline import sweep
from reaper_devkit import seed
from reaper_devkit.calls import recording
from reaper_devkit.jupyter_hop import JupyterServer, PresignedHop
from reaper_devkit.jupyter_hostile import FakeJupyter
from reaper_devkit.moto_ext.sagemaker_presigned import store
from tests.conftest import event, load_function
from tests.helpers.jupyter import start_kernel
from tests.helpers.sweep_output import everything_seen

OWNER = {"ml:owner": "ana@example.com", "ml:stage": "dev", "reaper:idle-minutes": "5"}


@pytest.fixture
def app(deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("REAPER_JUPYTER_READS", "on")
    return load_function("notebook")


def run(app: Any, now: datetime) -> dict[str, Outcome]:
    return {o.resource.id: o for o in sweep(app.RUNTIME, ["notebook"], now, f"t-{now.isoformat()}")}


def notebook(sm: Any, hop: PresignedHop, jupyter: JupyterServer, name: str, tags: dict[str, str] = OWNER) -> str:
    seed.notebook(sm, name, tags, agent=False)
    hop.serve(name, jupyter)
    return name


def test_a_busy_kernel_keeps_the_notebook_however_long_ago_it_started(aws, sm, hop, jupyter, app):
    # Given a notebook without the agent whose kernel runs a cell
    notebook(sm, hop, jupyter, "busy")
    kernel = start_kernel(jupyter)
    client = jupyter.kernel_client(kernel)
    try:
        client.execute("import time; time.sleep(120)")  # busy for the whole test on a loaded machine
        seen = jupyter.wait_for(f"/api/kernels/{kernel}", lambda k: k["execution_state"] == "busy")
        assert seen["execution_state"] == "busy"
        # When a sweep judges it two hours later (past its 5-minute window)
        with recording() as calls:
            out = run(app, datetime.now(UTC) + timedelta(hours=2))
    finally:
        client.stop_channels()
    # Then it is kept, busy on evidence, and the only new call is the granted presigned URL
    assert out["busy"].verdict.value == "keep" and "kernel busy" in out["busy"].reason
    assert out["busy"].decision.unknown is None
    assert "sagemaker:CreatePresignedNotebookInstanceUrl" in calls.actions
    assert calls.ungranted("NotebookFunction", {"JupyterReadsOn"}) == []
    assert "sagemaker:CreatePresignedNotebookInstanceUrl" in {r.action for r in calls.requests}
    assert calls.ungranted("NotebookFunction", set()) != []  # off, the role may not


def test_an_idle_kernel_is_kept_inside_the_window_and_idle_on_evidence_after_it(aws, sm, hop, jupyter, app):
    # Given a notebook whose kernel has been started and sits idle
    notebook(sm, hop, jupyter, "idle-kernel")
    start_kernel(jupyter)
    # When swept now: active moments ago, kept
    now = run(app, datetime.now(UTC))["idle-kernel"]
    assert now.verdict.value == "keep" and "active" in now.reason
    # and 20 minutes later (window 5 min): idle on the kernel's own last activity, would stop (dry-run)
    later = run(app, datetime.now(UTC) + timedelta(minutes=20))["idle-kernel"]
    assert later.verdict.value == "act" and later.decision.action == "stop" and not later.executed
    assert "no kernel or terminal activity for" in later.reason and "1 idle kernel(s)" in later.reason
    assert later.decision.evidence["source"] == "jupyter" and later.decision.evidence["kernels"] == 1


def test_an_open_terminal_with_recent_activity_keeps_it(aws, sm, hop, jupyter, app):
    # Given a notebook with a terminal just opened and no kernel
    notebook(sm, hop, jupyter, "terminal")
    jupyter.api("POST", "/api/terminals")
    # When swept 2 minutes later (window 5 min)
    out = run(app, datetime.now(UTC) + timedelta(minutes=2))["terminal"]
    # Then it is kept on the terminal's activity
    assert out.verdict.value == "keep" and "terminal active" in out.reason
    assert out.decision.evidence["terminals"] == 1 and out.decision.evidence["kernels"] == 0


def test_no_kernels_and_no_terminals_is_idle_since_the_server_started(aws, sm, hop, jupyter, app, lambda_context):
    # Given a notebook whose Jupyter server runs nothing
    notebook(sm, hop, jupyter, "empty")
    # When the schedule fires (the handler, dry-run) and a sweep judges it an hour later
    result = app.handler(event("notebook-schedule.json"), lambda_context)
    assert result["resources"] == 1
    out = run(app, datetime.now(UTC) + timedelta(hours=1))["empty"]
    # Then it would be stopped on evidence, and nothing changed
    assert out.verdict.value == "act" and "0 idle kernel(s), 0 terminal(s)" in out.reason
    assert sm.describe_notebook_instance(NotebookInstanceName="empty")["NotebookInstanceStatus"] == "InService"


def test_a_refused_url_is_unknown_with_its_reason_and_fix(aws, sm, hop, jupyter, app):
    # Given an account that denies the reaper one notebook's presigned URL (AccessDeniedException) and
    # another's hop (HTTP 403), as an aws:SourceIp or aws:sourceVpce Deny does
    notebook(sm, hop, jupyter, "api-denied")
    hop.refuse_presign("api-denied")
    notebook(sm, hop, jupyter, "hop-denied")
    hop.refuse("hop-denied")
    # When swept a day later
    out = run(app, datetime.now(UTC) + timedelta(days=1))
    # Then both are kept as unknown, with the stable code and the fix
    for name in ("api-denied", "hop-denied"):
        assert out[name].verdict.value == "keep", name
        assert out[name].decision.unknown == "url-refused"
        assert "aws:SourceIp" in out[name].reason and "aws:PrincipalArn" in out[name].reason
    assert "AccessDeniedException" in out["api-denied"].reason and "HTTP 403" in out["hop-denied"].reason
    assert "hop-denied" in hop.hits and "api-denied" not in hop.hits


def test_an_expired_or_foreign_token_lands_on_the_sign_in_page_and_is_unknown(aws, sm, hop, jupyter, app):
    # Given a notebook whose hop answers every token with the console's sign-in page
    notebook(sm, hop, jupyter, "signin")
    hop.servers.pop("signin")
    out = run(app, datetime.now(UTC) + timedelta(days=1))["signin"]
    # Then the sign-in page, on another host (the console's, as on AWS), is not requested: unknown, never idle
    assert out.verdict.value == "keep" and out.decision.unknown == "jupyter-off-host"
    assert "sign-in page" in out.reason and hop.signins == []


def test_a_notebook_whose_server_redirects_to_another_host_is_unknown_and_nothing_is_read_there(aws, sm, hop, app):
    # Given a notebook whose own Jupyter server (the user's to change) answers the reaper's status read with a
    # redirect to another server, one that reports an idle Jupyter (issue 33: a busy notebook judged idle)
    user, elsewhere = FakeJupyter(), FakeJupyter()
    try:
        user.redirects["/api/status"] = f"{elsewhere.origin}/api/status"
        seed.notebook(sm, "diverted", OWNER, agent=False)
        hop.serve("diverted", user)  # type: ignore[arg-type]  # the hop serves any server with a base, a token and an origin
        # When a sweep reads it a day later
        out = run(app, datetime.now(UTC) + timedelta(days=1))["diverted"]
    finally:
        user.close()
        elsewhere.close()
    # Then the redirect was not followed: nothing was asked of the other server, and the notebook is unknown,
    # with a reason that names neither the other host nor anything it answered
    assert "/api/status" in [path for _, path in user.requests] and elsewhere.requests == []
    assert out.verdict.value == "keep" and out.decision.unknown == "jupyter-off-host"
    assert str(elsewhere.port) not in out.reason and "HTTP" not in out.reason


def test_the_url_its_token_and_jupyters_token_are_never_logged_posted_or_recorded(aws, sm, hop, jupyter, app, deployed_env, caplog, capsys):
    # Given notebooks read through the hop, one idle (posted), one refused
    notebook(sm, hop, jupyter, "quiet")
    notebook(sm, hop, jupyter, "walled")
    hop.refuse("walled")
    caplog.set_level(logging.DEBUG)
    # When swept (records, queue, logs) and printed as the CLI prints
    out = run(app, datetime.now(UTC) + timedelta(hours=1))
    seen = everything_seen(aws, deployed_env, out.values(), caplog, capsys)
    # Then the tokens were issued and used, and none of them, nor the hop's address, appears anywhere
    tokens = store(hop._backend()).issued
    assert len(tokens) == 2 and out["quiet"].verdict.value == "act"
    for secret in [*tokens, jupyter.token, "authToken", hop.origin]:
        assert secret not in seen


def test_with_jupyter_reads_off_or_a_protected_notebook_nothing_is_opened(aws, sm, hop, jupyter, deployed_env, monkeypatch):
    # Given notebooks without the agent: a plain one, an exempt one and a production one
    notebook(sm, hop, jupyter, "plain")
    notebook(sm, hop, jupyter, "exempt", {**OWNER, "reaper:exempt": "true"})
    notebook(sm, hop, jupyter, "prod", {**OWNER, "ml:stage": "prod"})
    later = datetime.now(UTC) + timedelta(hours=1)
    # When JupyterReads is off (the default)
    off = run(load_function("notebook"), later)
    # Then no URL is asked for and the plain one is unknown: no agent
    assert store(hop._backend()).calls == []
    assert off["plain"].verdict.value == "keep" and off["plain"].decision.unknown == "no-agent"
    # and on, only the plain one's URL is asked for: exempt and production ones are never opened
    monkeypatch.setenv("REAPER_JUPYTER_READS", "on")
    on = run(load_function("notebook"), later)
    assert store(hop._backend()).calls == ["plain"]
    assert on["plain"].verdict.value == "act" and on["exempt"].verdict.value == "exempt" and on["prod"].verdict.value == "exempt"

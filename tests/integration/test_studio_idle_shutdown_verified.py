"""Trust, then verify AWS's idle shutdown (issue 37, item 2): a JupyterLab app SageMaker's built-in idle shutdown
should stop, still InService past its timeout plus the margin, is read through its own Jupyter server (JupyterReads,
a real jupyter_server behind the kit's stand-in for the Studio hop) by the studio-app function; idle past that
means the shutdown did not fire (an open, idle kernel session keeps the app alive): the app is deleted, its space
and storage kept. Without the reading it is listed by `reaper coverage` as covered by AWS, unverified, with its cost.
Apps AWS did stop are never flagged."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main as cli
from reaper_devkit import seed_studio as studio
from reaper_devkit.jupyter_hop import JupyterServer
from reaper_devkit.moto_ext.sagemaker_presigned import store
from tests.conftest import REGION, event, load_function
from tests.helpers.jupyter import space_app, start_kernel
from tests.helpers.studio_fleet import studio_outcomes

TIMEOUT = 120  # the kit's domains: IdleTimeoutInMinutes 120 (seed_studio.idle_block)
MARGIN = 30  # reaper.kinds.studio_app.model.IDLE_SHUTDOWN_MARGIN


@pytest.fixture
def jupyter(lab: JupyterServer) -> JupyterServer:
    """The hop (tests/integration/conftest.py) serves the server under a JupyterLab app's path here."""
    return lab


@pytest.fixture
def covered(sm: Any) -> str:
    """A domain whose built-in idle shutdown is on (120 min) for JupyterLab and Code Editor; ana signs in through IAM."""
    domain = studio.domain(sm, "lab")
    studio.user(sm, domain, "ana", {"ml:owner": "ana@example.com"})
    return domain


@pytest.fixture
def reads_on(deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("REAPER_JUPYTER_READS", "on")
    return load_function("studio_app")


def test_an_idle_kernel_session_the_shutdown_missed_is_caught_in_the_first_sweep_past_the_timeout_and_margin(
    aws, sm, hop, lab, covered, reads_on
):
    # Given a JupyterLab app, just started, in a domain with idle shutdown on, whose kernel ran a cell and stays open, idle
    start = datetime.now(UTC)
    key = space_app(sm, hop, lab, covered, "ana-open-kernel", created=start)
    start_kernel(lab)
    # When a sweep runs a minute before its timeout plus the margin: covered by AWS, not read
    early = studio_outcomes(reads_on, start + timedelta(minutes=TIMEOUT + MARGIN - 1))[key]
    assert early.verdict.value == "keep" and early.decision.unknown == "idle-shutdown-on"
    assert store(hop._backend()).studio_calls == []
    # When the first sweep after it runs: read through its Jupyter server, and idle past the timeout
    caught = studio_outcomes(reads_on, start + timedelta(minutes=TIMEOUT + MARGIN + 5))[key]
    # Then it would be deleted (dry-run) saying why, its space and storage kept
    assert caught.verdict.value == "act" and caught.decision.action == "delete" and not caught.executed
    assert "SageMaker's built-in idle shutdown (120 min) did not fire" in caught.reason and "1 idle kernel(s)" in caught.reason
    assert "storage volume stay" in caught.reason and caught.decision.evidence["idle_shutdown_missed"] is True
    assert len(store(hop._backend()).studio_calls) == 1
    # and twelve hours on, still open and idle, the same
    later = studio_outcomes(reads_on, start + timedelta(hours=12))[key]
    assert later.verdict.value == "act" and "did not fire" in later.reason


def test_an_app_in_use_past_its_timeout_is_covered_and_verified(aws, sm, hop, lab, covered, reads_on):
    # Given an app running for two days whose kernel ran a cell just now
    key = space_app(sm, hop, lab, covered, "ana-working")
    start_kernel(lab)
    # When swept an hour later (idle 1 h: under the 120-minute timeout plus 30)
    out = studio_outcomes(reads_on, datetime.now(UTC) + timedelta(hours=1))[key]
    # Then it is kept on evidence, said covered and verified, never flagged
    assert out.verdict.value == "keep" and out.decision.unknown is None
    assert "covers it (verified through its Jupyter server)" in out.reason


def test_enforce_warns_then_deletes_the_app_and_keeps_its_space(aws, sm, hop, lab, covered, reads_on, monkeypatch, lambda_context):
    # Given enforce mode with the grace, and an app whose idle kernel the shutdown missed
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    app = load_function("studio_app")
    start = datetime.now(UTC)
    key = space_app(sm, hop, lab, covered, "ana-missed", created=start - timedelta(hours=12))
    start_kernel(lab)
    arn = f"arn:aws:sagemaker:{REGION}:123456789012:app/{key}"
    # When the sweep past its timeout plus the margin runs, then one after the grace
    first = studio_outcomes(app, start + timedelta(hours=3))[key]
    assert first.verdict.value == "warn" and studio.status(sm, arn) == "InService"
    second = studio_outcomes(app, start + timedelta(hours=4, minutes=5))[key]
    # Then the app is deleted, its space is kept
    assert second.verdict.value == "act" and second.executed, second.reason
    assert studio.status(sm, arn) in ("Deleting", "Deleted")
    assert sm.describe_space(DomainId=covered, SpaceName="ana-missed")["Status"] == "InService"


def test_apps_aws_did_stop_are_never_flagged(aws, sm, hop, lab, covered, reads_on, lambda_context):
    # Given an app the idle shutdown did stop (SageMaker deleted it), and a young covered one
    gone = space_app(sm, hop, lab, covered, "ana-stopped", created=datetime.now(UTC) - timedelta(hours=12))
    sm.delete_app(DomainId=covered, SpaceName="ana-stopped", AppType="JupyterLab", AppName="default")
    young = space_app(sm, hop, lab, covered, "ana-young", created=datetime.now(UTC))
    # When the handler sweeps, and a sweep runs past both their timeouts
    reads_on.handler(event("studio-app-schedule.json"), lambda_context)
    out = studio_outcomes(reads_on, datetime.now(UTC) + timedelta(minutes=10))
    # Then neither is read nor acted on: the stopped one is not listed, the young one is covered
    assert gone not in out or out[gone].verdict.value == "keep"
    assert out[young].decision.unknown == "idle-shutdown-on" and store(hop._backend()).studio_calls == []


def test_without_jupyter_reads_coverage_lists_them_as_covered_by_aws_unverified_with_their_cost(
    aws, sm, hop, covered, deployed_env, capsys
):
    # Given a JupyterLab and a Code Editor app past their 120-minute timeout plus the margin, in a domain with idle
    # shutdown on, and JupyterReads off
    created = datetime.now(UTC) - timedelta(hours=12)
    space_app(sm, hop, None, covered, "ana-lab", created=created)
    studio.space(sm, covered, "ana-code", owner="ana", app_type="CodeEditor")
    studio.app(sm, covered, space_name="ana-code", app_type="CodeEditor", created=created, instance_type="ml.g5.xlarge")
    # When the admin asks for coverage
    capsys.readouterr()
    assert cli(["coverage", "--kind", "studio-app", "--region", REGION, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    [line] = [r for r in rows if r.get("type") == "coverage"]
    reasons = {r["code"]: r for r in line["reasons"]}
    # Then each is listed as covered by AWS, unverified since its timeout plus the margin, with its cost from the Pricer
    lab_row, code_row = reasons["jupyterlab-idle-shutdown-unverified"], reasons["idle-shutdown-unverified"]
    assert lab_row["resources"] == 1 and lab_row["hourly_usd"] > 0 and lab_row["opt_in"] == "JupyterReads"
    assert code_row["resources"] == 1 and code_row["hourly_usd"] > lab_row["hourly_usd"]  # ml.g5.xlarge over ml.t3.medium
    since = (created + timedelta(minutes=TIMEOUT + MARGIN)).strftime("%Y-%m-%dT%H:%M")
    assert lab_row["unverified_since"].startswith(since) and line["price_sources"]
    # and the table says so
    assert cli(["coverage", "--kind", "studio-app", "--region", REGION]) == 0
    assert "covered by AWS, unverified" in capsys.readouterr().out

"""Kill dates (`reaper:kill-after`) through the notebook and endpoint functions, against moto.

After its kill date a resource is reaped whatever its activity, by its kind's own action, after
the usual warning and grace; exempt, snooze and production stages still win.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.handlers import handle_kind_event
from reaper_devkit import seed
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function
from tests.helpers import notebooks as nb
from tests.helpers.modes import enforce_mode

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
BUSY = [1] * 36  # active in every 5-minute period
PAST = "2026-01-01"


@pytest.fixture
def notebooks(sm: Any, cw: Any) -> datetime:
    now = datetime.now(UTC)
    future = (now + timedelta(days=30)).strftime("%Y-%m-%d")
    for name, tags in {
        "past-busy": {**DEV, "reaper:kill-after": PAST},
        "past-datetime": {**DEV, "reaper:kill-after": (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")},
        "future-busy": {**DEV, "reaper:kill-after": future},
        "past-exempt": {**DEV, "reaper:kill-after": PAST, "reaper:exempt": "true"},
        "past-snoozed": {**DEV, "reaper:kill-after": PAST, "reaper:snooze-until": future},
        "past-prod": {"ml:owner": "ops@example.com", "ml:stage": "prod", "reaper:kill-after": PAST},
        "bad-date": {**DEV, "reaper:kill-after": "next friday"},
    }.items():
        seed.notebook(sm, name, tags)
        seed.activity(cw, name, now, BUSY)
    return now


def test_notebook_past_its_kill_date_is_warned_then_stopped_whatever_its_activity(
    aws, sm, notebooks, deployed_env, lambda_context, monkeypatch
):
    # Given enforce with a 60-minute grace, and notebooks busy in every period
    enforce_mode(monkeypatch, grace=60)
    app = load_function("notebook")
    # When the first sweep runs
    first = app.handler(event("notebook-schedule.json"), lambda_context)
    # Then only the two past their kill date are warned; nothing is stopped yet
    assert first["acted"] == []
    assert {n for n in ("past-busy", "past-datetime") if "reaper:warned-at" in nb.tags(sm, n)} == {"past-busy", "past-datetime"}
    for name in ("future-busy", "past-exempt", "past-snoozed", "past-prod", "bad-date"):
        assert "reaper:warned-at" not in nb.tags(sm, name), name
    warned = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert warned["past-busy"]["verdict"] == "warn" and "past its kill date 2026-01-01" in warned["past-busy"]["reason"]
    assert warned["past-busy"]["evidence"]["policy"] == "kill-date"
    assert warned["past-prod"]["verdict"] == "exempt" and "production stage" in warned["past-prod"]["reason"]
    assert warned["bad-date"]["verdict"] == "exempt" and "reaper:kill-after" in warned["bad-date"]["reason"]  # unreadable: fail safe
    # When a sweep runs after the grace period, still busy
    later = notebooks + timedelta(minutes=61)
    with recording() as calls:
        done = handle_kind_event(event("notebook-schedule.json", id="after-grace"), "notebook", app.RUNTIME, now=later)
    # Then exactly those two are stopped, and the protected ones are untouched
    assert sorted(done["acted"]) == ["past-busy", "past-datetime"] and done["errors"] == []
    assert {n: nb.status(sm, n) for n in ("past-busy", "past-datetime")} == {"past-busy": "Stopped", "past-datetime": "Stopped"}
    for name in ("future-busy", "past-exempt", "past-snoozed", "past-prod", "bad-date"):
        assert nb.status(sm, name) == "InService", name
    assert calls.ungranted("NotebookFunction") == []
    acted = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act"}
    assert set(acted) == {"past-busy", "past-datetime"} and all(m["executed"] for m in acted.values())


def test_exempt_tag_added_after_discovery_still_wins_over_a_kill_date(aws, sm, notebooks, deployed_env, lambda_context, monkeypatch):
    # Given no grace, and an exempt tag that appears between discovery and the stop
    enforce_mode(monkeypatch, grace=0)
    app = load_function("notebook")
    from reaper.aws import tagging

    original = tagging.current_tags

    def exempted_meanwhile(clients: Any, arn: str) -> dict[str, str]:
        return {**original(clients, arn), "reaper:exempt": "true"} if arn.endswith("/past-busy") else original(clients, arn)

    monkeypatch.setattr("reaper.kinds.base.current_tags", exempted_meanwhile)
    done = app.handler(event("notebook-schedule.json"), lambda_context)
    # Then the re-read protection wins, and the other one past its date is stopped
    assert done["acted"] == ["past-datetime"]
    assert nb.status(sm, "past-busy") == "InService"


def test_a_stopped_notebook_past_its_kill_date_is_left_as_it_is(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given a stopped notebook with the agent, past its kill date
    enforce_mode(monkeypatch, grace=0)
    seed.notebook(sm, "stopped-old", {**DEV, "reaper:kill-after": PAST})
    sm.stop_notebook_instance(NotebookInstanceName="stopped-old")
    # When the sweep runs, Then there is nothing to stop: keep, with the kill date said
    done = load_function("notebook").handler(event("notebook-schedule.json"), lambda_context)
    assert done["acted"] == [] and done["errors"] == []
    kept = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["id"] == "stopped-old"]
    assert kept == []  # a keep is not posted


@pytest.fixture
def endpoints(sm: Any, cw: Any) -> datetime:
    now = datetime.now(UTC)
    for name, tags in {
        "busy-classic": {**DEV, "reaper:kill-after": PAST},
        "busy-staging": {"ml:owner": "ana@example.com", "ml:stage": "staging", "reaper:kill-after": PAST},
        "busy-prod": {"ml:owner": "ops@example.com", "ml:stage": "prod", "reaper:kill-after": PAST},
        "busy-exempt": {**DEV, "reaper:kill-after": PAST, "reaper:exempt": "true"},
        "busy-no-date": DEV,
    }.items():
        se.classic(sm, name, tags)
        se.age(name, now, 300)
        se.invocations(cw, name, now, [4, 9, 2])
    se.components(sm, "ic-busy", {"ic-k": 2}, {**DEV, "reaper:kill-after": PAST})
    se.age("ic-busy", now, 300)
    se.component_invocations(cw, "ic-k", now, [5, 5])
    return now


def test_endpoints_past_their_kill_date_go_to_zero_after_the_warning(aws, sm, endpoints, deployed_env, lambda_context, monkeypatch):
    # Given enforce with a 60-minute grace and endpoints serving traffic
    enforce_mode(monkeypatch, grace=60)
    app = load_function("endpoint")
    first = app.handler(event("endpoint-schedule.json"), lambda_context)
    # Then the first sweep warns the three past their date (a staging one too: the owner set the date)
    assert first["acted"] == [] and first["verdicts"]["warn"] == 3
    msgs = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert {i for i, m in msgs.items() if m["verdict"] == "warn"} == {"busy-classic", "busy-staging", "ic-busy"}
    assert msgs["busy-prod"]["verdict"] == "exempt" and "would delete" in msgs["busy-prod"]["reason"]
    # When the sweep after the grace period runs, traffic still flowing
    later = endpoints + timedelta(minutes=61)
    for name in ("busy-classic", "busy-staging", "busy-prod", "busy-exempt", "busy-no-date"):
        se.invocations(aws.client("cloudwatch"), name, later, [7])
    with recording() as calls:
        done = handle_kind_event(event("endpoint-schedule.json", id="after-grace"), "endpoint", app.RUNTIME, now=later)
    # Then each goes to zero its own way: classic deleted (restorable), components to 0 copies
    assert sorted(done["acted"]) == ["busy-classic", "busy-staging", "ic-busy"] and done["errors"] == []
    left = {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    assert left == {"busy-prod", "busy-exempt", "busy-no-date", "ic-busy"}
    assert sm.describe_inference_component(InferenceComponentName="ic-k")["RuntimeConfig"]["DesiredCopyCount"] == 0
    assert calls.actions <= function_actions("EndpointFunction") and calls.ungranted("EndpointFunction") == []
    acted = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "act"}
    assert "reaper restore busy-classic" in acted["busy-classic"]["undo"]
    assert "past its kill date" in acted["busy-classic"]["reason"]

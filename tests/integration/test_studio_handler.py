"""The studio-app function, called with events/studio-app-schedule.json against moto."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from reaper_devkit import seed_studio as studio
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function, throttle
from tests.helpers import studio_fleet as fleet


@pytest.fixture
def seeded(aws) -> dict[str, Any]:
    return fleet.seed(aws, datetime.now(UTC))


def idle_ids(seeded: dict[str, Any]) -> list[str]:
    return sorted(fleet.app_id(seeded["apps"][c]) for c in ("idle-canvas", "idle-canvas-big"))


def test_same_event_three_times_deletes_and_posts_once(aws, sm, seeded, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("studio_app")
    with recording() as calls:
        results = [app.handler(event("studio-app-schedule.json"), lambda_context) for _ in range(3)]
    assert sorted(results[0]["acted"]) == idle_ids(seeded)
    assert results[1]["acted"] == [] and results[2]["acted"] == []
    assert calls.by_operation().get("sagemaker:DeleteApp") == 2
    messages = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert sorted(m["id"] for m in messages if m["verdict"] == "act") == idle_ids(seeded)
    # the domain whose idle shutdown is off is reported once (notify-only), not per delivery
    off = [m for m in messages if m["id"] == seeded["off_domain"]]
    assert len(off) == 1 and "idle shutdown is off" in off[0]["reason"]
    assert calls.actions <= function_actions("StudioAppFunction")


def test_throttled_delete_is_an_error_and_the_sweep_goes_on(aws, sm, seeded, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("studio_app")
    real = app.RUNTIME.clients()("sagemaker")
    throttle(monkeypatch, real, "delete_app", {"UserProfileName": "cy"})
    result = app.handler(event("studio-app-schedule.json"), lambda_context)
    assert result["acted"] == [fleet.app_id(seeded["apps"]["idle-canvas-big"])]
    assert result["errors"] and "ThrottlingException" in result["errors"][0]
    assert studio.status(sm, seeded["apps"]["idle-canvas"]) == "InService"
    errors = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "error"]
    assert [m["id"] for m in errors] == [fleet.app_id(seeded["apps"]["idle-canvas"])]


def test_throttled_listing_is_one_error_for_the_kind_and_nothing_changes(aws, sm, seeded, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("studio_app")
    real = app.RUNTIME.clients()("sagemaker")
    throttle(monkeypatch, real, "list_apps")
    result = app.handler(event("studio-app-schedule.json"), lambda_context)
    assert result["acted"] == [] and result["errors"]
    assert all(studio.status(sm, a) == "InService" for a in seeded["apps"].values())
    errors = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "error"]
    assert len(errors) == 1 and "ThrottlingException" in errors[0]["reason"]

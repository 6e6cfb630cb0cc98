"""An MLflow tracking server taken through the reaper's two steps: warned at one sweep, stopped after the grace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

import pytest

from reaper.handlers import handle_kind_event
from reaper_devkit import seed_mlflow
from reaper_devkit.calls import CallRecorder, recording
from tests.conftest import event, load_function
from tests.helpers.modes import enforce_mode


def warned_then_stopped(
    sm: Any, fleet: dict[str, str], name: str, lambda_context: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[ModuleType, datetime, CallRecorder]:
    """Enforce with a 60-minute grace: the first sweep warns `name` and stops nothing; the sweep 65 minutes later
    (recorded) stops it. The function, the later sweep's time and its calls, for the test to judge."""
    enforce_mode(monkeypatch, grace=60)
    app = load_function("mlflow")
    first = app.handler(event("mlflow-schedule.json"), lambda_context)
    assert first["acted"] == [] and seed_mlflow.status(sm, name) == "Created"
    tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=fleet[name])["Tags"]}
    assert "reaper:warned-at" in tags
    later = datetime.now(UTC) + timedelta(minutes=65)
    with recording() as calls:
        done = handle_kind_event(event("mlflow-schedule.json", id="later"), "mlflow", app.RUNTIME, now=later)
    assert done["acted"] == [name]
    return app, later, calls

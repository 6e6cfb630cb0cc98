"""reaper:kill-after for the kinds tests/integration/test_kill_date.py does not drive (Studio apps, training
jobs), through their real functions against moto: past the date the resource is reaped whatever its
activity or limits, after the usual warning and grace; before it, nothing changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.handlers import handle_kind_event
from tests.conftest import drain, event, load_function
from tests.helpers.contract_kits import KITS, add_tags, canvas_used, enforcing


def busy(aws: Any, kind: str, arn: str, now: datetime) -> None:
    """In use, or within its limits: its own rule keeps it."""
    if kind == "studio-app":
        add_tags(aws, arn, {"reaper:idle-minutes": "600"})
        canvas_used(aws, arn, now - timedelta(minutes=1), now)
    else:
        add_tags(aws, arn, {"reaper:max-hours": "100"})  # three hours into a hundred-hour ceiling


@pytest.mark.parametrize("kind", ["studio-app", "training-job"])
def test_past_its_kill_date_a_busy_resource_is_warned_then_reaped_and_before_it_kept(aws, deployed_env, lambda_context, monkeypatch, kind):
    # Given two resources the kind's rule keeps; one is past its kill date, the other's is tomorrow
    enforcing(monkeypatch, kind, 60)
    kit = KITS[kind]
    now = datetime.now(UTC)
    arns = kit.seed(aws, now)
    for arn in arns.values():
        busy(aws, kind, arn, now)
    add_tags(aws, arns["late-tag"], {"reaper:kill-after": (now - timedelta(days=1)).strftime("%Y-%m-%d")})
    add_tags(aws, arns["plain"], {"reaper:kill-after": (now + timedelta(days=1)).strftime("%Y-%m-%d")})
    app = load_function(kit.function)
    # When the first sweep runs: a warning for the one past its date, nothing changed
    first = handle_kind_event(event(f"{kind}-schedule.json", id="first"), kind, app.RUNTIME, now=now)
    warned = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") in ("act", "warn")]
    assert first["acted"] == [] and [(m["id"], m["verdict"]) for m in warned] == [(kit.id_of(arns["late-tag"]), "warn")], warned
    assert "kill date" in warned[0]["reason"]
    # and when a sweep runs past the grace, still busy
    later = now + timedelta(minutes=61)
    if kind == "studio-app":
        for arn in arns.values():
            canvas_used(aws, arn, later - timedelta(minutes=1), later)
    second = handle_kind_event(event(f"{kind}-schedule.json", id="second"), kind, app.RUNTIME, now=later)
    # Then only the one past its kill date was reaped, once, saying why
    assert second["acted"] == [kit.id_of(arns["late-tag"])], second
    assert kit.changed(aws, arns, "late-tag") and not kit.changed(aws, arns, "plain")
    acted = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("verdict") in ("act", "warn")]
    assert [(m["id"], m["executed"]) for m in acted] == [(kit.id_of(arns["late-tag"]), True)] and "kill date" in acted[0]["reason"], acted

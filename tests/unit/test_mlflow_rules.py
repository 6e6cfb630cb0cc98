"""The mlflow decision, pure: every TrackingServerStatus of the reference gets a verdict that never acts on its own
(AWS documents no usage evidence); a running one is unknown with its coverage code; the kill date stops only a
running one; unpriced is never $0."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reaper import kinds
from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.mlflow import RUNNING
from reaper.kinds.mlflow.discover import to_resource
from reaper.kinds.mlflow.model import NO_USAGE_SIGNAL, ServerSignal
from reaper.kinds.mlflow.rules import decide
from reaper_devkit.moto_ext.mlflow import STATUSES

NOW = datetime(2026, 12, 5, 12, tzinfo=UTC)
SETTINGS = Settings()


def server(status: str, size: str | None = "Small") -> Resource:
    summary = {
        "TrackingServerName": "ts",
        "TrackingServerArn": "arn:aws:sagemaker:us-east-1:123456789012:mlflow-tracking-server/ts",
        "TrackingServerStatus": status,
        "TrackingServerSize": size,
        "CreationTime": NOW,
    }
    return to_resource("us-east-1", summary, {"ml:owner": "ana@example.com"})


@pytest.mark.parametrize("status", STATUSES)
def test_no_status_is_acted_on_by_the_rule_alone(status):
    d = decide(server(status), ServerSignal(), read_tags({}, SETTINGS), SETTINGS, NOW)
    assert d.verdict is Verdict.KEEP and d.action is None
    if status in RUNNING:
        assert d.unknown == NO_USAGE_SIGNAL and d.notify and "unpriced" in d.reason
    else:
        assert d.unknown is None


def test_unpriced_is_none_never_zero():
    r = server("Created", "Large")
    assert r.hourly_usd is None and r.price is None


@pytest.mark.parametrize("status", STATUSES)
def test_a_kill_date_stops_only_a_running_server(status):
    kind = kinds.get("mlflow")
    d = kind.kill_decision(server(status), ServerSignal(), read_tags({}, SETTINGS), SETTINGS, NOW, "past its kill date")
    assert (d is not None and d.verdict is Verdict.ACT and d.action == "stop") == (status in RUNNING)

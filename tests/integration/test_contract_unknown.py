"""Safety invariant 4 per kind, through each kind's real function against moto: a signal that is missing
because nothing reports it, or because it could not be read, never counts as idle; endpoints' no-data
counts as no traffic only when the endpoint was in service for the whole window.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from reaper_devkit import seed_endpoint as se
from tests.conftest import drain, event, load_function, throttle
from tests.helpers.contract_kits import KITS, NAMES, OWNER

# kinds whose idleness is read from CloudWatch (training jobs are stopped on ceilings, not idleness;
# Studio apps on the activity SageMaker records, below)
METRIC_KINDS = ("ec2", "fsx", "notebook")


def no_datapoints(monkeypatch: pytest.MonkeyPatch, client: Any) -> None:
    """GetMetricData answers every query, complete, with no datapoints: nothing reports the metric."""

    def empty(**kwargs: Any) -> dict[str, Any]:
        results = [
            {"Id": q["Id"], "Label": q["Id"], "Timestamps": [], "Values": [], "StatusCode": "Complete"} for q in kwargs["MetricDataQueries"]
        ]
        return {"MetricDataResults": results, "Messages": []}

    monkeypatch.setattr(client, "get_metric_data", empty)


@pytest.mark.parametrize("kind", METRIC_KINDS)
def test_no_datapoints_at_all_never_counts_as_idle(aws, enforce, lambda_context, monkeypatch, kind):
    # Given resources of the kind whose metrics nobody publishes (no agent, no data), in enforce with no grace
    kit = KITS[kind]
    arns = kit.seed(aws, datetime.now(UTC))
    app = load_function(kit.function)
    no_datapoints(monkeypatch, app.RUNTIME.clients()("cloudwatch"))
    # When its function sweeps
    result = app.handler(event(f"{kind}-schedule.json"), lambda_context)
    # Then nothing was acted on or warned, and no message says it would be
    assert result["acted"] == [] and result["verdicts"]["act"] == 0 and result["verdicts"]["warn"] == 0, result
    assert not any(kit.changed(aws, arns, name) for name in NAMES)
    assert not [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("verdict") in ("act", "warn")]


@pytest.mark.parametrize("kind", (*METRIC_KINDS, "endpoint"))
def test_metrics_that_cannot_be_read_never_count_as_idle(aws, enforce, lambda_context, monkeypatch, kind):
    # Given idle resources whose metrics are throttled on every call (past botocore's retries)
    kit = KITS[kind]
    arns = kit.seed(aws, datetime.now(UTC))
    app = load_function(kit.function)
    throttle(monkeypatch, app.RUNTIME.clients()("cloudwatch"), "get_metric_data")
    # When its function sweeps
    result = app.handler(event(f"{kind}-schedule.json"), lambda_context)
    # Then nothing changed, and the failure is said (an error), not taken for idleness
    assert result["acted"] == [] and result["verdicts"]["act"] == 0, result
    assert not any(kit.changed(aws, arns, name) for name in NAMES)
    assert result["verdicts"]["error"] >= 1 and any("ThrottlingException" in e for e in result["errors"]), result


def test_studio_activity_that_cannot_be_read_never_counts_as_idle(aws, enforce, lambda_context, monkeypatch):
    # Given idle Canvas apps whose published activity (TimeSinceLastActive) cannot be read
    kit = KITS["studio-app"]
    arns = kit.seed(aws, datetime.now(UTC))
    app = load_function(kit.function)
    throttle(monkeypatch, app.RUNTIME.clients()("cloudwatch"), "get_metric_data")
    # When the sweep runs
    result = app.handler(event("studio-app-schedule.json"), lambda_context)
    # Then no app was deleted, and the failure is said
    assert result["acted"] == [] and not any(kit.changed(aws, arns, name) for name in NAMES), result
    assert result["verdicts"]["error"] >= 1, result


@pytest.mark.parametrize("minutes,verdict", [(30, "keep"), (300, "act")], ids=["part-of-the-window", "whole-window"])
def test_an_endpoint_with_no_invocation_data_is_idle_only_if_in_service_for_the_whole_window(
    aws, sm, enforce, lambda_context, minutes, verdict
):
    # Given a dev endpoint with no Invocations datapoints (AWS publishes none without traffic), in service for `minutes`
    now = datetime.now(UTC)
    se.classic(sm, "quiet", OWNER)
    se.age("quiet", now, minutes)
    # When the endpoint function sweeps in enforce with no grace (default window: 60 minutes)
    result = load_function("endpoint").handler(event("endpoint-schedule.json"), lambda_context)
    # Then it is taken to zero only when the whole window was in service
    assert result["verdicts"][verdict] == 1, result
    still_there = "quiet" in {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    assert still_there is (verdict == "keep")

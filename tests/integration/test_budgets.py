"""Budgets per experiment (issue 17) against moto: the training-job function creates or adopts one AWS
Budget per budgeted ml:project, and a Budgets notification (SNS) makes the budgeted kinds act at 100 %
(with BudgetEnforce) or only tell the owners."""

from __future__ import annotations

import copy
import logging
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.client import BaseClient

from reaper.core.errors import BadEventError
from reaper_devkit import seed
from reaper_devkit import seed_training as st
from reaper_devkit.calls import recording
from tests.conftest import drain, event, load_function

ACCOUNT = "123456789012"
VISION = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
OTHER = {"ml:owner": "bo@example.com", "ml:stage": "dev", "ml:project": "speech"}


@pytest.fixture
def topic(aws: Any, deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    arn: str = aws.client("sns").create_topic(Name="mlreaper-BudgetTopic")["TopicArn"]
    monkeypatch.setenv("REAPER_BUDGET_TOPIC_ARN", arn)
    return arn


def budget(aws: Any, name: str, project: str, limit: float, actual: float) -> None:
    """A budget as an admin made it, with the spend Budgets calculated."""
    aws.client("budgets").create_budget(
        AccountId=ACCOUNT,
        Budget={
            "BudgetName": name,
            "BudgetLimit": {"Amount": str(limit), "Unit": "USD"},
            "CostFilters": {"TagKeyValue": [f"user:ml:project${project}"]},
            "TimeUnit": "MONTHLY",
            "BudgetType": "COST",
            "CalculatedSpend": {"ActualSpend": {"Amount": str(actual), "Unit": "USD"}},
        },
    )


def notification(topic_arn: str) -> dict[str, Any]:
    ev = copy.deepcopy(event("budget-notification.json"))
    ev["Records"][0]["Sns"]["TopicArn"] = topic_arn
    return ev


def status(sm: Any, name: str) -> str:
    return str(sm.describe_training_job(TrainingJobName=name)["TrainingJobStatus"])


def test_the_sweep_creates_the_missing_budgets_and_adopts_the_existing(aws, sm, topic, lambda_context, monkeypatch):
    # Given an enforcing stack, a parameter budget, a tagged budget (on a notebook), and one the admin made already
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=500,ops team=1500")
    seed.notebook(sm, "nlp-box", {**OTHER, "ml:project": "nlp", "reaper:budget-usd": "300"})
    seed.notebook(sm, "nlp-box-2", {**OTHER, "ml:project": "nlp", "reaper:budget-usd": "250"})
    budget(aws, "mlreaper-ops team", "ops team", 1000, 10)
    app = load_function("training_job")
    created: dict[str, dict[str, Any]] = {}
    original = BaseClient._make_api_call

    def spy(self: BaseClient, operation: str, params: Any) -> Any:
        if operation == "CreateBudget":
            created[params["Budget"]["BudgetName"]] = params
        return original(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", spy)
    # When two sweeps run
    with recording() as calls:
        first = app.handler(event("training-job-schedule.json"), lambda_context)
    app.handler(event("training-job-schedule.json", id="again"), lambda_context)
    # Then vision and nlp have their budgets, filtered on the cost-allocation tag, notifying the topic at 80 and 100 %
    assert first["errors"] == []
    bud = aws.client("budgets")
    made = {b["BudgetName"]: b for b in bud.describe_budgets(AccountId=ACCOUNT)["Budgets"]}
    assert set(made) == {"mlreaper-vision", "mlreaper-nlp", "mlreaper-ops team"}
    assert float(made["mlreaper-vision"]["BudgetLimit"]["Amount"]) == 500.0
    assert float(made["mlreaper-nlp"]["BudgetLimit"]["Amount"]) == 300.0  # the highest tag
    assert made["mlreaper-nlp"]["CostFilters"] == {"TagKeyValue": ["user:ml:project$nlp"]}
    assert float(made["mlreaper-ops team"]["BudgetLimit"]["Amount"]) == 1000.0  # adopted as it is
    notes = bud.describe_notifications_for_budget(AccountId=ACCOUNT, BudgetName="mlreaper-vision")["Notifications"]
    assert sorted(n["Threshold"] for n in notes) == [80.0, 100.0] and {n["NotificationType"] for n in notes} == {"ACTUAL"}
    # (moto has no DescribeSubscribersForNotification: the subscribers are read from the request made)
    subscribers = {s["Address"] for n in created["mlreaper-vision"]["NotificationsWithSubscribers"] for s in n["Subscribers"]}
    assert subscribers == {topic} and len(created) == 2  # the second sweep created nothing
    assert calls.ungranted("TrainingJobFunction") == []


def test_in_dry_run_no_budget_is_created_and_the_log_says_which_would_be(aws, sm, topic, lambda_context, monkeypatch, caplog):
    # Given the default dry-run (and a stack enforcing every kind but training jobs), a parameter and a tagged budget
    for mode in ({}, {"REAPER_MODE": "enforce", "REAPER_KIND_MODES": "training-job=dry-run"}):
        for key, value in mode.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=500")
        seed.notebook(sm, f"nlp-box-{len(mode)}", {**OTHER, "ml:project": "nlp", "reaper:budget-usd": "300"})
        caplog.clear()
        caplog.set_level(logging.INFO, logger="reaper")
        # When the training-job function sweeps
        with recording() as calls:
            result = load_function("training_job").handler(event("training-job-schedule.json", id=f"dry-{len(mode)}"), lambda_context)
        # Then nothing in AWS changed (contract: dry-run changes nothing), and the log names what would be made
        assert result["errors"] == []
        assert "budgets:CreateBudget" not in calls.by_operation()
        assert aws.client("budgets").describe_budgets(AccountId=ACCOUNT).get("Budgets", []) == []
        said = [r.getMessage() for r in caplog.records if "would create" in r.getMessage()]
        assert any("mlreaper-vision" in line for line in said) and any("mlreaper-nlp" in line for line in said), said


def test_at_100_percent_without_the_opt_in_the_owner_is_told_once_and_nothing_stops(aws, sm, topic, lambda_context, monkeypatch):
    # Given enforce mode but BudgetEnforce off, vision over its budget, and jobs in two projects
    monkeypatch.setenv("REAPER_MODE", "enforce")
    budget(aws, "mlreaper-vision", "vision", 500, 520)
    now = datetime.now(UTC)
    st.training_job(sm, "vision-run", now, hours_ago=1, tags=VISION, spot=True)
    st.training_job(sm, "speech-run", now, hours_ago=1, tags=OTHER, spot=True)
    app = load_function("training_job")
    # When the Budgets notification arrives, and again
    result = app.handler(notification(topic), lambda_context)
    app.handler(notification(topic), lambda_context)
    # Then nothing is stopped, and vision's owner is told once what would be done
    assert result["acted"] == [] and result["errors"] == []
    assert (status(sm, "vision-run"), status(sm, "speech-run")) == ("InProgress", "InProgress")
    messages = drain(aws, deployed_queue(monkeypatch))
    assert [m["id"] for m in messages] == ["vision-run"]
    assert "$520.00 of its $500.00 monthly AWS Budget mlreaper-vision (104 %" in messages[0]["reason"]
    assert "would stop it, but budgets are notify-only" in messages[0]["reason"]


def deployed_queue(monkeypatch: pytest.MonkeyPatch) -> str:
    import os

    return os.environ["REAPER_QUEUE_URL"]


def test_at_100_percent_with_the_opt_in_the_projects_running_job_is_stopped_after_the_warning(aws, sm, topic, lambda_context, monkeypatch):
    # Given BudgetEnforce, a 60-minute grace, vision over budget; one vision job exempt
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_BUDGET_ENFORCE", "true")
    monkeypatch.setenv("REAPER_KIND_GRACE_MINUTES", "training-job=60")
    budget(aws, "mlreaper-vision", "vision", 500, 520)
    now = datetime.now(UTC)
    st.training_job(sm, "vision-run", now, hours_ago=1, tags=VISION, spot=True)
    st.training_job(sm, "vision-exempt", now, hours_ago=1, tags={**VISION, "reaper:exempt": "true"}, spot=True)
    st.training_job(sm, "speech-run", now, hours_ago=1, tags=OTHER, spot=True)
    app = load_function("training_job")
    # When the notification arrives: Then the vision job is warned first
    first = app.handler(notification(topic), lambda_context)
    assert first["acted"] == [] and first["verdicts"]["warn"] == 1
    # When a sweep runs after the grace period: Then it is stopped, and only it
    from datetime import timedelta

    from reaper.handlers import handle_kind_event

    later = handle_kind_event(event("training-job-schedule.json", id="later"), "training-job", app.RUNTIME, now=now + timedelta(minutes=61))
    assert later["acted"] == ["vision-run"] and later["errors"] == []
    assert (status(sm, "vision-exempt"), status(sm, "speech-run")) == ("InProgress", "InProgress")
    acted = [m for m in drain(aws, deployed_queue(monkeypatch)) if m["verdict"] == "act"]
    assert [m["id"] for m in acted] == ["vision-run"] and "over budget" in acted[0]["reason"]


def test_at_80_percent_the_owner_is_told_once_and_nothing_is_stopped_even_with_the_opt_in(aws, sm, topic, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_BUDGET_ENFORCE", "true")
    budget(aws, "mlreaper-vision", "vision", 500, 410)
    st.training_job(sm, "vision-run", datetime.now(UTC), hours_ago=1, tags=VISION, spot=True)
    app = load_function("training_job")
    app.handler(notification(topic), lambda_context)
    app.handler(event("training-job-schedule.json"), lambda_context)
    messages = drain(aws, deployed_queue(monkeypatch))
    assert [m["id"] for m in messages] == ["vision-run"] and "(82 %" in messages[0]["reason"]
    assert status(sm, "vision-run") == "InProgress"


def test_a_notebook_of_a_project_over_budget_is_stopped_by_its_own_function(aws, sm, cw, topic, lambda_context, monkeypatch):
    # Given BudgetEnforce, no grace, and a busy notebook in the project over budget
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setenv("REAPER_BUDGET_ENFORCE", "true")
    budget(aws, "mlreaper-vision", "vision", 500, 700)
    now = datetime.now(UTC)
    seed.notebook(sm, "vision-nb", VISION)
    seed.activity(cw, "vision-nb", now, [1] * 36)
    seed.notebook(sm, "speech-nb", OTHER)
    seed.activity(cw, "speech-nb", now, [1] * 36)
    with recording() as calls:
        result = load_function("notebook").handler(notification(topic), lambda_context)
    assert result["acted"] == ["vision-nb"]
    assert sm.describe_notebook_instance(NotebookInstanceName="speech-nb")["NotebookInstanceStatus"] == "InService"
    assert calls.ungranted("NotebookFunction") == []


def test_a_message_from_another_topic_or_without_a_topic_configured_is_refused(aws, sm, topic, lambda_context, monkeypatch):
    app = load_function("training_job")
    with pytest.raises(BadEventError, match="not the budget topic"):
        app.handler(notification("arn:aws:sns:us-east-1:123456789012:someone-elses"), lambda_context)
    bad = notification(topic)
    bad["Records"][0]["EventSource"] = "aws:sqs"
    with pytest.raises(BadEventError):
        app.handler(bad, lambda_context)
    with pytest.raises(BadEventError, match="does not take budget notifications"):
        load_function("fsx").handler(notification(topic), lambda_context)


def test_budgets_unreadable_means_not_judged_and_the_sweep_goes_on(aws, sm, topic, lambda_context, monkeypatch):
    from tests.conftest import throttle

    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_BUDGET_ENFORCE", "true")
    budget(aws, "mlreaper-vision", "vision", 500, 900)
    st.training_job(sm, "vision-run", datetime.now(UTC), hours_ago=1, tags=VISION, spot=True)
    app = load_function("training_job")
    throttle(monkeypatch, app.RUNTIME.clients("us-east-1")("budgets"), "describe_budgets")
    result = app.handler(event("training-job-schedule.json"), lambda_context)
    assert result["acted"] == [] and result["errors"] == [] and status(sm, "vision-run") == "InProgress"

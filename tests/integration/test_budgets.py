"""Budgets per experiment (issue 17) against moto: the training-job function creates or adopts one AWS
Budget per budgeted ml:project, and a Budgets notification (SNS) makes the budgeted kinds act at 100 %
(with BudgetEnforce) or only tell the owners."""

from __future__ import annotations

import copy
import json
import logging
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import pytest
from botocore.client import BaseClient

from reaper.core.errors import BadEventError
from reaper_devkit import seed
from reaper_devkit import seed_training as st
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import budgets as budgets_ext
from tests.conftest import drain, event, load_function
from tests.helpers.faults import refuse

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


def test_the_sweep_creates_the_missing_budgets_and_sets_the_admins_amount(aws, sm, topic, lambda_context, monkeypatch):
    # Given an enforcing stack, a parameter budget, a tagged budget (on a notebook), and one made already at another amount
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
    assert made["mlreaper-nlp"]["FilterExpression"] == {"Tags": {"Key": "user:ml:project", "Values": ["nlp"], "MatchOptions": ["EQUALS"]}}
    assert "CostFilters" not in made["mlreaper-nlp"]  # deprecated for FilterExpression
    assert float(made["mlreaper-ops team"]["BudgetLimit"]["Amount"]) == 1500.0  # the admin's amount wins
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
    monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=500")  # the admin's budget
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


def test_a_notebook_of_a_project_over_budget_is_stopped_by_its_own_function(aws, sm, cw, topic, enforcing, lambda_context, monkeypatch):
    # Given BudgetEnforce, no grace (enforcing), and a busy notebook in the project over budget
    monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=500")  # the admin's budget
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


# -- budgets are the admin's --------------------------------------------------------------------
def budget_changes(aws: Any) -> list[dict[str, Any]]:
    return [m for m in drain(aws, deployed_queue_url()) if m.get("type") == "budget-change"]


def deployed_queue_url() -> str:
    import os

    return os.environ["REAPER_QUEUE_URL"]


def limits(aws: Any) -> dict[str, float]:
    return {
        b["BudgetName"]: float(b["BudgetLimit"]["Amount"]) for b in aws.client("budgets").describe_budgets(AccountId=ACCOUNT)["Budgets"]
    }


@pytest.fixture
def enforcing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setenv("REAPER_BUDGET_ENFORCE", "true")


def test_a_one_cent_tag_creates_a_budget_that_only_notifies_and_is_posted_for_confirmation(aws, sm, topic, enforcing, lambda_context):
    # Given BudgetEnforce and a notebook of project vision tagged reaper:budget-usd=0.01, and vision's running job
    seed.notebook(sm, "cheap-tag", {**VISION, "reaper:budget-usd": "0.01"})
    st.training_job(sm, "vision-run", datetime.now(UTC), hours_ago=1, tags=VISION, spot=True)
    app = load_function("training_job")
    # When a sweep creates the budget, Budgets counts $5 on it, and its notification arrives
    app.handler(event("training-job-schedule.json"), lambda_context)
    assert limits(aws) == {"mlreaper-vision": 0.01}
    budgets_ext.set_spend(ACCOUNT, "mlreaper-vision", 5.0)
    result = app.handler(notification(topic), lambda_context)
    # Then nothing is stopped: a budget a tag proposed only notifies
    assert result["acted"] == [] and status(sm, "vision-run") == "InProgress"
    messages = drain(aws, deployed_queue_url())
    [created] = [m for m in messages if m.get("type") == "budget-change"]
    assert created["what"] == "created" and created["origin"] == "tag" and created["confirmable"] is True
    told = [m for m in messages if m.get("id") == "vision-run"]
    assert told and "only notifies until an admin confirms it" in told[0]["reason"]


def test_a_tag_never_lowers_nor_adopts_a_budget_that_exists(aws, sm, topic, enforcing, lambda_context):
    # Given a budget someone made at $5,000 (not the stack's, not confirmed), now over, and a $0.01 tag
    budget(aws, "mlreaper-vision", "vision", 5000, 5200)
    seed.notebook(sm, "cheap-tag", {**VISION, "reaper:budget-usd": "0.01"})
    st.training_job(sm, "vision-run", datetime.now(UTC), hours_ago=1, tags=VISION, spot=True)
    app = load_function("training_job")
    app.handler(event("training-job-schedule.json"), lambda_context)
    result = app.handler(notification(topic), lambda_context)
    # Then the budget keeps its amount, and is not enforced: the job runs on, its owner is told
    assert limits(aws) == {"mlreaper-vision": 5000.0}
    assert result["acted"] == [] and status(sm, "vision-run") == "InProgress"
    assert budget_changes(aws) == []


def test_the_admins_amount_wins_over_a_tag_and_every_change_is_posted_to_the_admin_channel(
    aws, sm, topic, enforcing, lambda_context, monkeypatch
):
    monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=500")
    budget(aws, "mlreaper-vision", "vision", 20, 0)
    seed.notebook(sm, "cheap-tag", {**VISION, "reaper:budget-usd": "0.01"})
    app = load_function("training_job")
    app.handler(event("training-job-schedule.json"), lambda_context)
    app.handler(event("training-job-schedule.json", id="again"), lambda_context)
    assert limits(aws) == {"mlreaper-vision": 500.0}
    [change] = budget_changes(aws)  # posted once, however many sweeps
    assert change["what"] == "set" and change["previous_usd"] == 20.0 and change["usd"] == 500.0 and change["origin"] == "admin"
    assert change["confirmable"] is False


def test_an_admin_made_budget_in_the_filter_expression_form_is_read_and_enforced(aws, sm, topic, enforcing, lambda_context, monkeypatch):
    # Given the admin's budget made the 2025 way (FilterExpression, no CostFilters), over its amount
    monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=500")
    aws.client("budgets").create_budget(
        AccountId=ACCOUNT,
        Budget={
            "BudgetName": "mlreaper-vision",
            "BudgetLimit": {"Amount": "500", "Unit": "USD"},
            "FilterExpression": {"Tags": {"Key": "user:ml:project", "Values": ["vision"], "MatchOptions": ["EQUALS"]}},
            "TimeUnit": "MONTHLY",
            "BudgetType": "COST",
            "CalculatedSpend": {"ActualSpend": {"Amount": "520", "Unit": "USD"}},
        },
    )
    st.training_job(sm, "vision-run", datetime.now(UTC), hours_ago=1, tags=VISION, spot=True)
    result = load_function("training_job").handler(notification(topic), lambda_context)
    # Then it is read (no second create, no failure) and the job is stopped
    assert result["acted"] == ["vision-run"]
    assert budget_changes(aws) == []


def test_a_create_that_fails_is_posted_once_a_day_never_silent(aws, sm, topic, enforcing, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_PROJECT_BUDGETS", "vision=500")
    refuse(monkeypatch, "CreateBudget")
    app = load_function("training_job")
    app.handler(event("training-job-schedule.json"), lambda_context)
    app.handler(event("training-job-schedule.json", id="again"), lambda_context)
    [failed] = budget_changes(aws)
    assert failed["what"] == "failed" and "AccessDeniedException" in failed["reason"]


def test_an_admin_confirms_a_tag_made_budget_in_slack_and_then_it_acts(aws, sm, topic, enforcing, lambda_context, table):
    from reaper.core.settings import Settings
    from reaper.slack.bot import BotConfig, SlackBot
    from reaper.slack.interactions import handle_request
    from reaper.wiring import build_runtime
    from reaper_devkit.slack_api import SlackApi
    from tests.helpers.slack import ADMIN, OWNER, SECRET, signed

    # Given a budget a tag made (posted with a Confirm button), over its amount
    seed.notebook(sm, "tagged", {**VISION, "reaper:budget-usd": "100"})
    st.training_job(sm, "vision-run", datetime.now(UTC), hours_ago=1, tags=VISION, spot=True)
    app = load_function("training_job")
    app.handler(event("training-job-schedule.json"), lambda_context)
    [change] = budget_changes(aws)
    budgets_ext.set_spend(ACCOUNT, "mlreaper-vision", 120.0)
    rt = build_runtime(Settings.validated({"mode": "enforce", "table": app.RUNTIME.settings.table}), session=aws, region="us-east-1")
    value = json.dumps({"arn": change["arn"], "kind": "budget", "project": "vision", "usd": 100.0})
    with SlackApi({}) as api:
        bot = SlackBot.build(
            BotConfig(bot_token="xoxb-t", admin_channel="C0ADMIN", signing_secret=SECRET, admins=frozenset({ADMIN}), base_url=api.url)
        )

        def click(user: str, n: int) -> dict[str, Any]:
            payload = {
                "user": {"id": user},
                "response_url": api.response_url(f"c{n}"),
                "actions": [{"action_id": "reaper:confirm-budget", "value": value}],
            }
            now = datetime.now(UTC)
            return handle_request(signed(urlencode({"payload": json.dumps(payload)}), now), rt, bot, now, lambda t, e: None)

        # When the owner clicks Confirm: refused; when an admin does: confirmed
        click(OWNER, 1)
        assert load_function("training_job").handler(notification(topic), lambda_context)["acted"] == []
        click(ADMIN, 2)
        said = [r["text"] for r in api.responses]
    assert "not an mlreaper admin" in said[0] and "is confirmed by" in said[1]
    # Then the next notification stops the project's job
    assert app.handler(notification(topic), lambda_context)["acted"] == ["vision-run"]

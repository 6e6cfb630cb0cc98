"""The notebook function, called with the JSON in events/ against moto."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.errors import BadEventError
from reaper_devkit import seed
from reaper_devkit.calls import recording
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function, throttle
from tests.helpers.events import MALFORMED_ANY_KIND
from tests.helpers.notebooks import status, tags

IDLE = [0] * 36
ACTIVE = [1, 0, 0] + [0] * 33


@pytest.fixture
def fleet(sm: Any, cw: Any) -> dict[str, str]:
    """One notebook per interesting state; values say what a correct sweep does."""
    now = datetime.now(UTC)
    owner = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
    seed.notebook(sm, "idle", owner)
    seed.activity(cw, "idle", now, IDLE)
    seed.notebook(sm, "active", owner)
    seed.activity(cw, "active", now, ACTIVE)
    seed.notebook(sm, "no-agent", owner, agent=False)
    seed.notebook(sm, "gap", owner)
    seed.activity(cw, "gap", now, [0, 0, None, 0] + [0] * 32)
    seed.notebook(sm, "exempt", {**owner, "reaper:exempt": "true"})
    seed.activity(cw, "exempt", now, IDLE)
    later = (now + timedelta(days=2)).strftime("%Y-%m-%d")
    seed.notebook(sm, "snoozed", {**owner, "reaper:snooze-until": later})
    seed.activity(cw, "snoozed", now, IDLE)
    seed.notebook(sm, "snooze-over", {**owner, "reaper:snooze-until": "2020-01-01"})
    seed.activity(cw, "snooze-over", now, IDLE)
    seed.notebook(sm, "prod", {"ml:owner": "ops@example.com", "ml:stage": "Prod "})
    seed.activity(cw, "prod", now, IDLE)
    seed.notebook(sm, "bad-tag", {**owner, "reaper:idle-minutes": "soon"})
    seed.activity(cw, "bad-tag", now, IDLE)
    return {
        "idle": "act",
        "active": "keep",
        "no-agent": "keep",
        "gap": "keep",
        "exempt": "exempt",
        "snoozed": "exempt",
        "snooze-over": "act",
        "prod": "exempt",
        "bad-tag": "exempt",
    }


def test_dry_run_decides_everything_and_changes_nothing(aws, sm, fleet, deployed_env, lambda_context):
    # Given the deployed defaults (dry-run)
    app = load_function("notebook")
    # When the schedule fires
    with recording() as calls:
        result = app.handler(event("notebook-schedule.json"), lambda_context)
    # Then every notebook got its verdict and none was stopped or tagged
    assert result["resources"] == len(fleet)
    assert result["acted"] == []
    for name in fleet:
        assert status(sm, name) == "InService"
        assert "reaper:warned-at" not in tags(sm, name)
    messages = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    by_id = {m["id"]: m for m in messages}
    assert set(by_id) == {"idle", "snooze-over", "prod", "bad-tag"}  # would-act, notify-only, bad tag
    assert by_id["idle"]["verdict"] == "act" and by_id["idle"]["executed"] is False
    assert "production stage" in by_id["prod"]["reason"]
    assert "reaper:idle-minutes" in by_id["bad-tag"]["reason"]
    assert calls.actions <= function_actions("NotebookFunction")
    assert calls.ungranted("NotebookFunction") == []  # on the resource it names, conditions included
    assert not {a for a in calls.actions if a.startswith("sagemaker:") and not a.startswith(("sagemaker:List", "sagemaker:Describe"))}


def test_enforce_warns_first_then_stops_only_the_idle_after_grace(aws, sm, fleet, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    app = load_function("notebook")
    first = app.handler(event("notebook-schedule.json"), lambda_context)
    assert first["verdicts"]["warn"] == 2 and first["acted"] == []
    assert "reaper:warned-at" in tags(sm, "idle")
    assert status(sm, "idle") == "InService"
    warned = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert sorted(m["id"] for m in warned if m["verdict"] == "warn") == ["idle", "snooze-over"]

    # A second sweep inside the grace period says nothing new and changes nothing
    again = app.handler(event("notebook-schedule.json", id="second"), lambda_context)
    assert again["acted"] == []
    assert [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "warn"] == []

    # After the grace period, only the idle dev notebooks are stopped
    later = datetime.now(UTC) + timedelta(minutes=61)
    from reaper.handlers import handle_kind_event

    seed.activity(aws.client("cloudwatch"), "idle", later, IDLE)
    seed.activity(aws.client("cloudwatch"), "snooze-over", later, IDLE)
    seed.activity(aws.client("cloudwatch"), "active", later, ACTIVE)
    seed.activity(aws.client("cloudwatch"), "gap", later, [0, None] + [0] * 20)
    with recording() as calls:
        done = handle_kind_event(event("notebook-schedule.json", id="third"), "notebook", app.RUNTIME, now=later)
    assert sorted(done["acted"]) == ["idle", "snooze-over"]
    for name, expected in fleet.items():
        assert status(sm, name) == ("Stopped" if expected == "act" else "InService"), name
    assert "reaper:warned-at" not in tags(sm, "idle")
    acted = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    stop = next(m for m in acted if m["id"] == "idle")
    assert stop["executed"] is True and "start-notebook-instance" in stop["undo"]
    assert calls.actions <= function_actions("NotebookFunction")
    assert calls.ungranted("NotebookFunction") == []  # on the resource it names, conditions included


def test_same_event_three_times_acts_and_posts_once(aws, sm, fleet, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("notebook")
    results = [app.handler(event("notebook-schedule.json"), lambda_context) for _ in range(3)]
    assert sorted(results[0]["acted"]) == ["idle", "snooze-over"]
    assert results[1]["acted"] == [] and results[2]["acted"] == []
    messages = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    acts = [m for m in messages if m["verdict"] == "act"]
    assert sorted(m["id"] for m in acts) == ["idle", "snooze-over"]


def test_activity_clears_a_warning(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    seed.notebook(sm, "nb", {"ml:owner": "ana@example.com", "reaper:warned-at": (now - timedelta(minutes=30)).isoformat()})
    seed.activity(cw, "nb", now, ACTIVE)
    app = load_function("notebook")
    result = app.handler(event("notebook-schedule.json"), lambda_context)
    assert result["verdicts"]["keep"] == 1
    assert "reaper:warned-at" not in tags(sm, "nb")


def test_throttled_stop_is_an_error_and_the_sweep_goes_on(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    for name in ("a", "b"):
        seed.notebook(sm, name, {"ml:owner": "ana@example.com"})
        seed.activity(cw, name, now, IDLE)
    app = load_function("notebook")
    real = app.RUNTIME.clients()("sagemaker")
    throttle(monkeypatch, real, "stop_notebook_instance", {"NotebookInstanceName": "a"})
    result = app.handler(event("notebook-schedule.json"), lambda_context)
    assert result["acted"] == ["b"]
    assert result["errors"] and "ThrottlingException" in result["errors"][0]
    assert status(sm, "a") == "InService" and status(sm, "b") == "Stopped"
    errors = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "error"]
    assert [m["id"] for m in errors] == ["a"]


@pytest.mark.parametrize(
    "bad",
    [
        *MALFORMED_ANY_KIND,
        {
            "id": "x",
            "detail-type": "AWS API Call via CloudTrail",
            "source": "aws.sagemaker",
            "detail": {"eventName": "DeleteNotebookInstance"},
        },
        {
            "id": "x",
            "detail-type": "AWS API Call via CloudTrail",
            "source": "aws.sagemaker",
            "detail": {"eventName": "StartNotebookInstance", "requestParameters": {}},
        },
    ],
)
def test_malformed_events_are_refused_and_change_nothing(aws, sm, fleet, deployed_env, lambda_context, monkeypatch, bad):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("notebook")
    with pytest.raises(BadEventError):
        app.handler(bad, lambda_context)
    assert all(status(sm, n) == "InService" for n in fleet)
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_started_notebook_without_agent_or_tags_tells_once(aws, sm, deployed_env, lambda_context):
    seed.notebook(sm, "untagged-nb", agent=False)
    app = load_function("notebook")
    results = [app.handler(event("notebook-cloudtrail-start.json"), lambda_context) for _ in range(2)]
    assert results[0]["posted"] is True and results[1]["posted"] is False
    assert len(results[0]["problems"]) == 3  # agent, ml:owner, ml:stage
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert len(notices) == 1 and notices[0]["type"] == "notice"
    assert "update-notebook-instance" in notices[0]["text"]


def test_created_notebook_with_everything_says_nothing(aws, sm, deployed_env, lambda_context):
    seed.notebook(sm, "untagged-nb", {"ml:owner": "U024BE7LH", "ml:stage": "dev", "reaper:kill-after": "2099-01-01"})
    app = load_function("notebook")
    result = app.handler(event("notebook-cloudtrail-create.json"), lambda_context)
    assert result["problems"] == [] and result["posted"] is False
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


# -- issue 10: forged activity and a silent agent, through the deployed handler ---------------------


def test_forged_zeros_for_notebooks_without_the_agent_keep_them(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given enforce, no grace, and 3 h of 0s that someone published for two notebooks without the agent
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    owner = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
    seed.notebook(sm, "no-agent", owner, agent=False)
    sm.create_notebook_instance_lifecycle_config(NotebookInstanceLifecycleConfigName="team-config")
    seed.notebook(sm, "other-config", owner, agent_config="team-config")
    seed.notebook(sm, "with-agent", owner)  # the control: the same zeros, the agent attached
    for name in ("no-agent", "other-config", "with-agent"):
        seed.activity(cw, name, now, IDLE)
    from reaper.handlers import handle_kind_event

    # When the schedule fires
    app = load_function("notebook")
    done = handle_kind_event(event("notebook-schedule.json"), "notebook", app.RUNTIME, now=now)
    # Then only the notebook with the agent is stopped; the forged zeros are ignored, and the reason says so
    assert done["acted"] == ["with-agent"]
    assert status(sm, "no-agent") == "InService" and status(sm, "other-config") == "InService"
    assert status(sm, "with-agent") == "Stopped"
    assert done["verdicts"]["keep"] == 2 and done["verdicts"]["act"] == 1
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert set(messages) == {"with-agent"}  # nothing to say about the kept ones: their plan rows say why


def _silent_fleet(sm: Any) -> None:
    owner = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
    seed.notebook(sm, "silent", owner)  # the agent attached, never a datapoint
    seed.notebook(sm, "publishing", owner)
    seed.notebook(sm, "no-agent", owner, agent=False)


def test_a_silent_agent_is_told_once_across_three_sweeps(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given notebooks created now (moto: InService at once, LastModifiedTime = now)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_AGENT_PUBLISH_POLICY_ARN", "arn:aws:iam::123456789012:policy/mlreaper-publish")
    start = datetime.now(UTC)
    _silent_fleet(sm)
    from reaper.handlers import handle_kind_event

    app = load_function("notebook")
    queue = deployed_env["REAPER_QUEUE_URL"]
    # When swept 20 minutes in: too early to call the agent silent
    seed.activity(cw, "publishing", start + timedelta(minutes=20), [1] * 4)
    early = handle_kind_event(event("notebook-schedule.json", id="t+20"), "notebook", app.RUNTIME, now=start + timedelta(minutes=20))
    assert early["verdicts"]["keep"] == 3 and early["acted"] == []
    assert drain(aws, queue) == []
    # Then three sweeps after 30 minutes: one message, for the silent one only
    posted: list[dict[str, Any]] = []
    for k, minutes in enumerate((35, 50, 65)):
        at = start + timedelta(minutes=minutes)
        seed.activity(cw, "publishing", at, [1] * 4)
        done = handle_kind_event(event("notebook-schedule.json", id=f"t+{minutes}"), "notebook", app.RUNTIME, now=at)
        assert done["acted"] == [] and done["verdicts"]["keep"] == 3, k
        posted += drain(aws, queue)
    assert [m["id"] for m in posted] == ["silent"]
    message = posted[0]
    assert message["verdict"] == "keep" and message["owner"] == "ana@example.com" and message["executed"] is False
    assert "activity agent silent" in message["reason"]
    assert "attach-role-policy --policy-arn arn:aws:iam::123456789012:policy/mlreaper-publish" in message["reason"]
    assert "com.amazonaws.us-east-1.monitoring" in message["reason"]
    for name in ("silent", "publishing", "no-agent"):
        assert status(sm, name) == "InService"
        assert "reaper:warned-at" not in tags(sm, name)


def test_a_publishing_agent_is_never_reported_silent(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    start = datetime.now(UTC)
    seed.notebook(sm, "busy", {"ml:owner": "ana@example.com"})
    from reaper.handlers import handle_kind_event

    app = load_function("notebook")
    at = start + timedelta(hours=2)
    # a datapoint only 25 minutes back, none since: still publishing as far as 30 minutes go
    seed.activity(cw, "busy", at, [None] * 4 + [1])
    done = handle_kind_event(event("notebook-schedule.json"), "notebook", app.RUNTIME, now=at)
    assert done["verdicts"]["keep"] == 1


def _matches(pattern: dict[str, Any], ev: dict[str, Any]) -> bool:
    """EventBridge matching for the plain value lists the stack's rules use."""
    for key, want in pattern.items():
        got = ev.get(key)
        if isinstance(want, dict):
            if not isinstance(got, dict) or not _matches(want, got):
                return False
        elif got not in want:
            return False
    return True


def test_the_stack_listens_to_the_event_sagemaker_sends_itself_no_trail_needed():
    from reaper_devkit.template import load

    rule = load()["Resources"]["NotebookFunction"]["Properties"]["Events"]["NotebookStarted"]["Properties"]["Pattern"]
    assert rule["detail-type"] == ["SageMaker Notebook Instance State Change"]
    assert _matches(rule, event("notebook-state-inservice.json"))
    assert not _matches(rule, {**event("notebook-state-inservice.json"), "detail": {"NotebookInstanceStatus": "Stopping"}})


def test_notebook_in_service_without_agent_or_tags_tells_once_as_created(aws, sm, deployed_env, lambda_context):
    # Given a notebook just created without the agent or tags
    seed.notebook(sm, "untagged-nb", agent=False)
    app = load_function("notebook")
    # When SageMaker says it is InService (delivered twice)
    results = [app.handler(event("notebook-state-inservice.json"), lambda_context) for _ in range(2)]
    # Then the owner hears once, with the three problems and the creation notice (no kill date or budget)
    assert results[0]["checked"] == "untagged-nb" and results[0]["posted"] is True and results[1]["posted"] is False
    assert len(results[0]["problems"]) == 4 and results[0]["problems"][-1].startswith("neither a kill date nor a budgeted project")
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert [n["title"] for n in notices] == ["Notebook untagged-nb was created without what the reaper needs"]


def test_a_notebook_created_long_ago_and_in_service_again_was_started(aws, sm, deployed_env, lambda_context):
    from moto.sagemaker.models import sagemaker_backends

    seed.notebook(sm, "untagged-nb", {"ml:owner": "ana@example.com"})
    nb = sagemaker_backends["123456789012"]["us-east-1"].notebook_instances["untagged-nb"]
    nb.creation_time = datetime.now(UTC) - timedelta(days=3)
    result = load_function("notebook").handler(event("notebook-state-inservice.json"), lambda_context)
    assert result["problems"] == ["no `ml:stage` tag: `aws sagemaker add-tags --resource-arn " + nb.arn + " --tags Key=ml:stage,Value=...`"]
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert [n["title"] for n in notices] == ["Notebook untagged-nb was started without what the reaper needs"]
    assert notices[0]["owner"] == "ana@example.com"


@pytest.mark.parametrize("status_value", ["Pending", "Stopping", "Stopped", "Updating", "Failed", "Deleting"])
def test_other_notebook_states_are_not_checked(aws, sm, deployed_env, lambda_context, status_value):
    seed.notebook(sm, "untagged-nb", agent=False)
    ev = event("notebook-state-inservice.json")
    ev["detail"]["NotebookInstanceStatus"] = status_value
    with recording() as calls:
        result = load_function("notebook").handler(ev, lambda_context)
    assert result["checked"] is None and status_value in result["skipped"]
    assert "sagemaker:DescribeNotebookInstance" not in calls.actions
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


@pytest.mark.parametrize(
    "detail",
    [
        {},
        {"NotebookInstanceName": "x"},
        {"NotebookInstanceStatus": "InService"},
        {"NotebookInstanceName": "", "NotebookInstanceStatus": "InService"},
    ],
)
def test_malformed_state_changes_are_refused(aws, sm, deployed_env, lambda_context, detail):
    ev = {**event("notebook-state-inservice.json"), "detail": detail}
    with pytest.raises(BadEventError):
        load_function("notebook").handler(ev, lambda_context)


def test_a_state_change_for_a_notebook_deleted_since_says_nothing(aws, sm, deployed_env, lambda_context):
    result = load_function("notebook").handler(event("notebook-state-inservice.json"), lambda_context)
    assert result["problems"] == [] and result["posted"] is False
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_created_notebook_without_kill_date_or_budget_is_told_at_creation_only(aws, sm, deployed_env, lambda_context):
    # Given a notebook with owner and stage but neither a kill date nor a budgeted project
    seed.notebook(sm, "untagged-nb", {"ml:owner": "U024BE7LH", "ml:stage": "dev"})
    app = load_function("notebook")
    created = app.handler(event("notebook-cloudtrail-create.json"), lambda_context)
    started = app.handler(event("notebook-cloudtrail-start.json"), lambda_context)
    # Then its creation tells it, and a later start does not repeat it
    assert [p.split(":")[0] for p in created["problems"]] == ["neither a kill date nor a budgeted project"] and created["posted"] is True
    assert started["problems"] == []


def _in_service(event_id: str) -> dict[str, Any]:
    return {**event("notebook-state-inservice.json"), "id": event_id}


def test_a_notebook_in_service_after_creation_gets_the_kill_date_notice_once(aws, sm, deployed_env, lambda_context):
    # Given a notebook just created with owner and stage, but neither a kill date nor a budgeted project
    seed.notebook(sm, "untagged-nb", {"ml:owner": "U024BE7LH", "ml:stage": "dev"})
    app = load_function("notebook")
    # When SageMaker says it is InService, the event is delivered again, and it is stopped and started
    # again within the half hour (a second InService, another event id)
    results = [app.handler(_in_service(i), lambda_context) for i in ("ev-1", "ev-1", "ev-2")]
    # Then the owner is told once, as the other kinds' creation checks tell it
    assert [p.split(":")[0] for p in results[0]["problems"]] == ["neither a kill date nor a budgeted project"]
    assert [r["posted"] for r in results] == [True, False, False] and results[2]["problems"] == []
    notices = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert len(notices) == 1 and "reaper:kill-after=YYYY-MM-DD" in notices[0]["text"]
    assert notices[0]["title"] == "Notebook untagged-nb was created without what the reaper needs"


def test_a_notebook_created_with_a_kill_date_or_a_budget_is_not_told(aws, sm, deployed_env, lambda_context):
    # Given a notebook created with a kill date
    seed.notebook(sm, "untagged-nb", {"ml:owner": "U024BE7LH", "ml:stage": "dev", "reaper:kill-after": "2099-01-01"})
    # When it comes InService
    result = load_function("notebook").handler(_in_service("ev-1"), lambda_context)
    # Then there is nothing to tell
    assert result["problems"] == [] and result["posted"] is False
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_the_cloudtrail_create_and_the_state_change_tell_one_creation_once(aws, sm, deployed_env, lambda_context):
    # Given a notebook without a kill date, whose account routes CloudTrail calls too
    seed.notebook(sm, "untagged-nb", {"ml:owner": "U024BE7LH", "ml:stage": "dev"})
    app = load_function("notebook")
    # When CreateNotebookInstance arrives, then its InService state change
    created = app.handler(event("notebook-cloudtrail-create.json"), lambda_context)
    in_service = app.handler(_in_service("ev-1"), lambda_context)
    # Then one notice tells the creation
    assert created["posted"] is True and in_service["problems"] == [] and in_service["posted"] is False
    assert len(drain(aws, deployed_env["REAPER_QUEUE_URL"])) == 1


def test_a_log_that_cannot_be_claimed_loses_no_creation_notice(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given a notebook without a kill date, and the action log's writes throttled
    seed.notebook(sm, "untagged-nb", {"ml:owner": "U024BE7LH", "ml:stage": "dev"})
    app = load_function("notebook")
    throttle(monkeypatch, app.RUNTIME.log.client, "put_item")
    # When it comes InService
    # Then the event fails (EventBridge delivers it again), rather than dropping the notice unsaid
    with pytest.raises(Exception, match="Throttling"):
        app.handler(_in_service("ev-1"), lambda_context)
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []

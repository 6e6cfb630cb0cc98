"""The notebook kind through the real handler with AgentChannel=logs (the agent's samples in
CloudWatch Logs): idle, active, gaps, a silent agent, an agent installed before Logs (metric only),
hostile events, and a Logs read that fails. The default channel: test_notebook_channels.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from reaper_devkit import seed
from reaper_devkit.calls import recording
from reaper_devkit.seed import ACTIVITY_LOG_GROUP
from tests.conftest import drain, event, load_function
from tests.helpers.faults import refuse

IDLE = [0] * 36
ACTIVE = [1, 0, 0] + [0] * 33
OWNER = {"ml:owner": "ana@example.com", "ml:stage": "dev"}


LOGS_CHANNEL = {"UseLogsChannel"}  # the template's condition for AgentChannel=logs


@pytest.fixture(autouse=True)
def logs_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stack deployed with AgentChannel=logs."""
    monkeypatch.setenv("REAPER_AGENT_CHANNEL", "logs")


@pytest.fixture
def logs(aws: Any) -> Any:
    return aws.client("logs")


def status(sm: Any, name: str) -> str:
    return str(sm.describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceStatus"])


def counted(result: dict[str, Any]) -> dict[str, int]:
    return {k: v for k, v in result["verdicts"].items() if v}


def verdicts(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {m["id"]: m["verdict"] for m in messages}


def sweep(app: Any, now: datetime, id: str = "s1") -> dict[str, Any]:
    from reaper.handlers import handle_kind_event

    return handle_kind_event(event("notebook-schedule.json", id=id), "notebook", app.RUNTIME, now=now)


@pytest.fixture
def fleet(sm: Any, cw: Any, logs: Any) -> dict[str, str]:
    now = datetime.now(UTC)
    for name in ("idle", "active", "gap", "old-agent-idle", "old-agent-active"):
        seed.notebook(sm, name, OWNER)
    seed.activity_samples(logs, "idle", now, IDLE)
    seed.activity_samples(logs, "active", now, ACTIVE)
    seed.activity_samples(logs, "gap", now, [0, 0, None, 0] + [0] * 32)
    # an agent installed before the stack used Logs: only the metric, until the notebook restarts
    seed.activity(cw, "old-agent-idle", now, IDLE)
    seed.activity(cw, "old-agent-active", now, ACTIVE)
    return {"idle": "act", "active": "keep", "gap": "keep", "old-agent-idle": "act", "old-agent-active": "keep"}


def test_samples_in_logs_decide_and_the_metric_is_read_only_for_old_agents(aws, sm, fleet, deployed_env, lambda_context):
    app = load_function("notebook")
    # When the schedule fires (dry-run)
    with recording() as calls:
        result = app.handler(event("notebook-schedule.json"), lambda_context)
    # Then each notebook is judged from its samples, the old agents' from the metric
    assert result["resources"] == len(fleet) and result["acted"] == []
    by_id = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert verdicts(list(by_id.values())) == {"idle": "act", "old-agent-idle": "act"}
    assert "no activity for" in by_id["idle"]["reason"]
    # one FilterLogEvents scan of the stack's group; GetMetricData only for the two without samples
    seen = calls.made
    scans = [p for op, p in seen if op == "FilterLogEvents"]
    assert [p["logGroupName"] for p in scans] == [ACTIVITY_LOG_GROUP]
    queried = [
        q["MetricStat"]["Metric"]["Dimensions"][0]["Value"] for op, p in seen if op == "GetMetricData" for q in p["MetricDataQueries"]
    ]
    assert sorted(queried) == ["old-agent-active", "old-agent-idle"]
    assert calls.ungranted("NotebookFunction", LOGS_CHANNEL) == []  # logs:FilterLogEvents on the stack's group only
    assert calls.ungranted("NotebookFunction") != []  # the default deployment (metric) grants no Logs read
    for name in fleet:
        assert status(sm, name) == "InService"


def test_enforce_warns_then_stops_the_idle_after_grace(aws, sm, logs, fleet, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    app = load_function("notebook")
    now = datetime.now(UTC)
    first = sweep(app, now, "first")
    assert sorted(m["id"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["verdict"] == "warn") == ["idle", "old-agent-idle"]
    assert first["acted"] == []
    # After the grace period, the samples still say idle / active / gap
    later = now + timedelta(minutes=61)
    seed.activity_samples(logs, "idle", later, [0] * 13)
    seed.activity_samples(logs, "active", later, [1] + [0] * 12)
    seed.activity_samples(logs, "gap", later, [0, None] + [0] * 11)
    seed.activity(aws.client("cloudwatch"), "old-agent-idle", later, [0] * 13)
    seed.activity(aws.client("cloudwatch"), "old-agent-active", later, [1] + [0] * 12)
    done = sweep(app, later, "later")
    assert sorted(done["acted"]) == ["idle", "old-agent-idle"]
    for name, expected in fleet.items():
        assert status(sm, name) == ("Stopped" if expected == "act" else "InService"), name


def test_gaps_and_no_samples_are_unknown_not_idle(aws, sm, logs, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    seed.notebook(sm, "one-gap", OWNER)
    seed.activity_samples(logs, "one-gap", now, [0] * 5 + [None] + [0] * 30)  # one period missing in the hour
    seed.notebook(sm, "too-short", OWNER)
    seed.activity_samples(logs, "too-short", now, [0] * 6)  # only half the idle window
    app = load_function("notebook")
    result = sweep(app, now)
    assert result["acted"] == [] and counted(result) == {"keep": 2}
    assert status(sm, "one-gap") == status(sm, "too-short") == "InService"


def test_a_silent_agent_is_reported_once(aws, sm, logs, deployed_env, lambda_context, monkeypatch):
    # Given an agent that sends nothing (no sample, no metric), and another that samples
    monkeypatch.setenv("REAPER_MODE", "enforce")
    start = datetime.now(UTC)
    seed.notebook(sm, "silent", OWNER)
    seed.notebook(sm, "sampling", OWNER)
    app = load_function("notebook")
    posted: list[dict[str, Any]] = []
    for minutes in (35, 50, 65):
        at = start + timedelta(minutes=minutes)
        seed.activity_samples(logs, "sampling", at, [1] * 3)
        done = sweep(app, at, f"t+{minutes}")
        assert done["acted"] == [] and counted(done) == {"keep": 2}
        posted += drain(aws, deployed_env["REAPER_QUEUE_URL"])
    # Then one message, for the silent one, naming the log group and the logs VPC endpoint
    assert [m["id"] for m in posted] == ["silent"]
    assert "activity agent silent" in posted[0]["reason"] and ACTIVITY_LOG_GROUP in posted[0]["reason"]
    assert "com.amazonaws.us-east-1.logs" in posted[0]["reason"]


HOSTILE = [
    "not json {",
    json.dumps({"notebook": "someone-else", "active": 0}),  # another notebook's name in this stream
    '{"notebook": "victim", "active": 1e999}',  # huge value (infinity once parsed)
    json.dumps({"notebook": "victim", "active": 10**30}),
    json.dumps({"notebook": "victim", "active": 2}),
    json.dumps({"notebook": "victim", "active": -1}),
    json.dumps({"notebook": "victim", "active": True}),
    json.dumps({"notebook": "victim", "active": "0"}),
    json.dumps({"notebook": "victim"}),
    json.dumps([0]),
    json.dumps({"notebook": "victim", "active": 0, "pad": "x" * 400}),  # not the agent's small sample
]


@pytest.mark.parametrize(("message", "acted"), [(m, []) for m in HOSTILE] + [(json.dumps({"notebook": "victim", "active": 0}), ["victim"])])
def test_a_hostile_event_is_ignored_not_idle(aws, sm, logs, deployed_env, lambda_context, monkeypatch, message, acted):
    # Given a notebook whose samples are all 0 except one period, where a hostile event stands instead
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    seed.notebook(sm, "victim", OWNER)
    seed.activity_samples(logs, "victim", now, [0] * 4 + [None] + [0] * 31)
    hole = int((seed.aligned(now) - timedelta(minutes=25) + timedelta(seconds=9)).timestamp() * 1000)
    logs.put_log_events(logGroupName=ACTIVITY_LOG_GROUP, logStreamName="victim", logEvents=[{"timestamp": hole, "message": message}])
    # When swept
    result = sweep(load_function("notebook"), now)
    # Then the hostile event did not fill the hole: unknown, kept, never stopped (the control: the
    # agent's own sample there fills it, and the notebook is stopped)
    assert result["acted"] == acted
    assert (status(sm, "victim") == "InService") == (not acted)


def test_a_sample_in_its_own_name_written_to_another_stream_does_not_count(aws, sm, logs, deployed_env, lambda_context, monkeypatch):
    # Given 0s for "victim" written in some other stream (whoever may write the group can do this)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    seed.notebook(sm, "victim", OWNER)
    seed.activity_samples(logs, "victim", now, [None] * 36)  # its stream exists, empty
    end = seed.aligned(now)
    forged = [
        {
            "timestamp": int((end - timedelta(minutes=5 * (k + 1)) + timedelta(seconds=3)).timestamp() * 1000),
            "message": json.dumps({"notebook": "victim", "active": 0}),
        }
        for k in reversed(range(36))
    ]
    logs.create_log_stream(logGroupName=ACTIVITY_LOG_GROUP, logStreamName="attacker")
    logs.put_log_events(logGroupName=ACTIVITY_LOG_GROUP, logStreamName="attacker", logEvents=forged)
    result = sweep(load_function("notebook"), now)
    assert result["acted"] == [] and status(sm, "victim") == "InService"


def test_an_unreadable_log_group_keeps_everything_and_tells_no_one_the_agent_is_silent(
    aws, sm, logs, deployed_env, lambda_context, monkeypatch
):
    # Given idle samples, but FilterLogEvents refused (a role without logs:FilterLogEvents)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    seed.notebook(sm, "idle", OWNER)
    seed.activity_samples(logs, "idle", now, IDLE)
    refuse(monkeypatch, "FilterLogEvents")
    result = sweep(load_function("notebook"), now + timedelta(hours=2))
    # Then kept with the reason, not stopped, and no silent-agent message
    assert result["acted"] == [] and counted(result) == {"keep": 1}
    assert status(sm, "idle") == "InService"
    assert drain(aws, deployed_env["REAPER_QUEUE_URL"]) == []


def test_one_notebooks_long_idle_window_does_not_widen_the_scan_of_every_notebook(aws, sm, logs, deployed_env, lambda_context, monkeypatch):
    # Given 30 idle notebooks whose agents have sampled for a day (the log group keeps every sample), and
    # one of them tagged with a one-day idle window. The scan's page budget stands for what a function
    # can read before its timeout: measured in moto, a sample is 178 bytes of a 1 MB page, so 10,000
    # notebooks make 62 pages over the usual 3 hours and 3,423 over a 7-day window (past MAX_PAGES).
    from reaper.kinds.notebook import samples

    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setattr(samples, "MAX_PAGES", 1)  # 30 notebooks x 3 h fit one page; x 1 day, two
    now = datetime.now(UTC)
    names = [f"nb-{i:02d}" for i in range(30)]
    for name in names:
        seed.notebook(sm, name, {**OWNER, **({"reaper:idle-minutes": "1440"} if name == "nb-07" else {})})
        seed.activity_samples(logs, name, now, [0] * 288)
    # When the sweep runs
    with recording() as calls:
        result = sweep(load_function("notebook"), now)
    # Then every notebook is judged from its samples, the one-day window as well: all idle, all stopped
    assert sorted(result["acted"]) == names
    # and the scan of the whole group covers the usual window; only that notebook's stream is read further back
    scans = [p for op, p in calls.made if op == "FilterLogEvents"]
    group_wide = [p for p in scans if "logStreamNames" not in p]
    assert len(group_wide) == 1 and group_wide[0]["startTime"] == int((seed.aligned(now) - timedelta(hours=3)).timestamp() * 1000)
    assert [p["logStreamNames"] for p in scans if "logStreamNames" in p] == [["nb-07"]]
    assert calls.ungranted("NotebookFunction", LOGS_CHANNEL) == []


def test_a_long_window_that_cannot_be_read_leaves_only_its_notebooks_unknown(aws, sm, logs, deployed_env, lambda_context, monkeypatch):
    # Given two idle notebooks, one with a one-day window whose older samples cannot be read (throttled)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    seed.notebook(sm, "usual", OWNER)
    seed.notebook(sm, "patient", {**OWNER, "reaper:idle-minutes": "1440"})
    for name in ("usual", "patient"):
        seed.activity_samples(logs, name, now, [0] * 288)
    original = BaseClient._make_api_call

    def throttled(self: BaseClient, operation_name: str, api_params: Any) -> Any:
        if operation_name == "FilterLogEvents" and "logStreamNames" in api_params:
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, operation_name)
        return original(self, operation_name, api_params)

    monkeypatch.setattr(BaseClient, "_make_api_call", throttled)
    result = sweep(load_function("notebook"), now)
    # Then the usual one is stopped; the patient one is kept as unknown, with the reason
    assert result["acted"] == ["usual"] and status(sm, "patient") == "InService"
    assert counted(result) == {"act": 1, "keep": 1}

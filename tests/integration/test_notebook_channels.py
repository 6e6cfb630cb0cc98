"""AgentChannel through the real notebook handler: the default (metric, the contract) reads
MLReaper/NotebookActivity only and never calls CloudWatch Logs; switching the stack's channel while
notebooks still run the agent they started with keeps every notebook safe (unknown is keep).
The logs channel itself: test_notebook_logs.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper_devkit import seed
from reaper_devkit.calls import recording
from reaper_devkit.template import load
from tests.conftest import drain, event, load_function
from tests.helpers.notebooks import status

IDLE = [0] * 36
ACTIVE = [1, 0, 0] + [0] * 33
OWNER = {"ml:owner": "ana@example.com", "ml:stage": "dev"}


def sweep(now: datetime, id: str = "s1") -> dict[str, Any]:
    from reaper.handlers import handle_kind_event

    return handle_kind_event(event("notebook-schedule.json", id=id), "notebook", load_function("notebook").RUNTIME, now=now)


def test_the_template_default_is_the_contracts_metric():
    t = load()
    assert t["Parameters"]["AgentChannel"]["Default"] == "metric"
    assert t["Parameters"]["AgentChannel"]["AllowedValues"] == ["metric", "logs"]
    assert t["Globals"]["Function"]["Environment"]["Variables"]["REAPER_AGENT_CHANNEL"] == {"Ref": "AgentChannel"}


def test_the_default_channel_reads_the_metric_and_never_calls_logs(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given the default deployment, notebooks reporting by the contract's metric, and a log group with
    # samples that contradict it (left from a logs deployment, or forged): "idle" active in Logs
    monkeypatch.delenv("REAPER_AGENT_CHANNEL", raising=False)
    now = datetime.now(UTC)
    logs = aws.client("logs")
    for name, metric, samples in (("idle", IDLE, ACTIVE), ("active", ACTIVE, IDLE)):
        seed.notebook(sm, name, OWNER)
        seed.activity(cw, name, now, metric)
        seed.activity_samples(logs, name, now, samples)
    app = load_function("notebook")
    # When the schedule fires (dry-run)
    with recording() as calls:
        result = app.handler(event("notebook-schedule.json"), lambda_context)
    # Then the metric decides, in one GetMetricData, and CloudWatch Logs is never called
    assert result["resources"] == 2
    assert {m["id"]: m["verdict"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])} == {"idle": "act"}
    seen = calls.operations
    assert "FilterLogEvents" not in seen and not [a for a in calls.actions if a.startswith("logs:")]
    assert seen.count("GetMetricData") == 1
    # and every call is granted by the default deployment's role (which has no Logs grant)
    assert calls.ungranted("NotebookFunction") == []


@pytest.mark.parametrize("channel", ["metric", "logs"])
def test_both_channels_stop_the_idle_and_keep_the_active_in_enforce(aws, sm, cw, deployed_env, lambda_context, monkeypatch, channel):
    # Given each channel's agents reporting where that channel says
    monkeypatch.setenv("REAPER_AGENT_CHANNEL", channel)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    logs = aws.client("logs")
    for name, values in (("idle", IDLE), ("active", ACTIVE), ("gap", [0, None] + [0] * 34)):
        seed.notebook(sm, name, OWNER)
        if channel == "logs":
            seed.activity_samples(logs, name, now, values)
        else:
            seed.activity(cw, name, now, values)
    with recording() as calls:
        result = sweep(now)
    # Then the same decisions either way
    assert result["acted"] == ["idle"]
    assert [status(sm, n) for n in ("idle", "active", "gap")] == ["Stopped", "InService", "InService"]
    assert calls.ungranted("NotebookFunction", {"UseLogsChannel"} if channel == "logs" else set()) == []


def test_switching_to_logs_during_an_upgrade_keeps_working(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given the stack switched from metric to logs; "old-idle"/"old-active" still run the agent they
    # started with (metric only), "restarted" runs the new agent since 20 minutes (its older
    # periods are in the metric, its new ones in Logs), "new-idle" has been on Logs for 3 hours
    monkeypatch.setenv("REAPER_AGENT_CHANNEL", "logs")
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    logs = aws.client("logs")
    for name in ("old-idle", "old-active", "restarted", "new-idle"):
        seed.notebook(sm, name, OWNER)
    seed.activity(cw, "old-idle", now, IDLE)
    seed.activity(cw, "old-active", now, ACTIVE)
    seed.activity(cw, "restarted", now, [None] * 4 + [0] * 32)
    seed.activity_samples(logs, "restarted", now, [0] * 4)
    seed.activity_samples(logs, "new-idle", now, IDLE)
    # When swept
    result = sweep(now)
    # Then old agents are judged from the metric, the new from Logs; the restarted notebook, whose
    # window is only partly in Logs, is unknown (kept) until its samples fill the idle window
    assert sorted(result["acted"]) == ["new-idle", "old-idle"]
    assert status(sm, "old-active") == status(sm, "restarted") == "InService"
    # and once its samples cover the window, it is stopped like any other
    later = now + timedelta(minutes=45)
    seed.activity_samples(logs, "restarted", later, [0] * 13)
    assert sweep(later, "later")["acted"] == ["restarted"]


def test_switching_back_to_metric_keeps_notebooks_still_on_logs_agents(aws, sm, cw, deployed_env, lambda_context, monkeypatch):
    # Given the stack switched from logs back to metric while "on-logs" still runs a logs agent
    monkeypatch.delenv("REAPER_AGENT_CHANNEL", raising=False)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    seed.notebook(sm, "on-logs", OWNER)
    seed.activity_samples(aws.client("logs"), "on-logs", now, IDLE)
    # When swept 3 hours into it
    result = sweep(now + timedelta(hours=3))
    # Then it is never stopped on data the channel does not read: kept (no metric = unknown) and,
    # once silent, its owner is told to restart it onto the metric agent's fix
    assert result["acted"] == [] and status(sm, "on-logs") == "InService"
    [told] = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    assert told["id"] == "on-logs" and "activity agent silent" in told["reason"] and "MLReaper/NotebookActivity" in told["reason"]


@pytest.mark.parametrize("channel", ["metric", "logs"])
def test_activity_reported_after_the_last_whole_period_keeps_the_notebook(aws, sm, cw, deployed_env, lambda_context, monkeypatch, channel):
    # Given a notebook idle for three hours, whose owner came back: the agent's report at the end of
    # the period just ended (stamped a few seconds past the 5-minute boundary, as cron runs it) says active
    monkeypatch.setenv("REAPER_AGENT_CHANNEL", channel)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    boundary = seed.aligned(datetime.now(UTC))
    now = boundary + timedelta(minutes=2)  # the sweep runs two minutes into the new period
    logs = aws.client("logs")
    seed.notebook(sm, "back", OWNER)
    seed.notebook(sm, "idle", OWNER)
    report = boundary + timedelta(seconds=7)
    for name in ("back", "idle"):
        if channel == "logs":
            seed.activity_samples(logs, name, now, IDLE)
        else:
            seed.activity(cw, name, now, IDLE)
    if channel == "logs":
        logs.put_log_events(
            logGroupName=seed.ACTIVITY_LOG_GROUP,
            logStreamName="back",
            logEvents=[{"timestamp": int(report.timestamp() * 1000), "message": '{"notebook": "back", "active": 1}'}],
        )
    else:
        seed.put_series(cw, "MLReaper", "NotebookActivity", {"NotebookInstanceName": "back"}, [(report, 1)])
    # When the sweep runs
    result = sweep(now)
    # Then the report it could read is not ignored: the notebook in use is kept, the idle one stopped
    assert result["acted"] == ["idle"]
    assert status(sm, "back") == "InService" and status(sm, "idle") == "Stopped"
    by_id = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])}
    assert "back" not in by_id or by_id["back"]["verdict"] == "keep"

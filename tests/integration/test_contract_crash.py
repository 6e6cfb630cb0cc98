"""Safety invariant 7 per kind: every executed action is in the action log and reaches Slack even
when the sweep dies right after it, at the latest through the next sweep. The sweep is killed the
instant the action returns, before its outcome is recorded or queued (a Lambda timeout or crash
there leaves nothing else behind), through each kind's real function against moto.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.handlers import handle_kind_event
from reaper.record.actionlog import ActionLog
from reaper.sweep import pipeline
from tests.conftest import drain, event, load_function
from tests.helpers.contract_kits import KITS, enforcing


class Killed(BaseException):
    """What a Lambda timeout looks like from inside: nothing after it runs."""


@pytest.mark.parametrize("kind", sorted(KITS))
def test_a_sweep_killed_the_instant_its_action_returns_still_logs_and_posts_it(aws, deployed_env, lambda_context, monkeypatch, kind):
    # Given two resources the kind acts on at once, in enforce with no grace
    enforcing(monkeypatch, kind, 0)
    kit = KITS[kind]
    now = datetime.now(UTC)
    arns = kit.seed(aws, now)
    real_act = pipeline._act
    done: list[str] = []

    def act_then_die(*args: Any, **kwargs: Any) -> Any:
        result = real_act(*args, **kwargs)
        if result.executed:
            done.append(args[2].resource.id)
            raise Killed()
        return result

    monkeypatch.setattr(pipeline, "_act", act_then_die)
    app = load_function(kit.function)
    # When the sweep dies right after its first action
    with pytest.raises(Killed):
        app.handler(event(f"{kind}-schedule.json"), lambda_context)
    assert len(done) == 1
    acted = done[0]
    queued = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id") == acted]
    # When the next sweep runs (past the time an unposted message waits for its own sweep)
    monkeypatch.setattr(pipeline, "_act", real_act)
    handle_kind_event(event(f"{kind}-schedule.json", id="next-sweep"), kind, app.RUNTIME, now=now + timedelta(minutes=20))
    queued += [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id") == acted]
    # Then the action is in the action log once, as executed, and its message was queued once
    log = ActionLog(aws.client("dynamodb"), deployed_env["REAPER_TABLE"])
    logged = [e for e in log.stored_entries(now - timedelta(days=1), now + timedelta(days=1)) if e.get("id") == acted and e.get("executed")]
    assert len(logged) == 1 and logged[0]["verdict"] == "act", logged
    executed = [m for m in queued if m.get("executed")]
    assert len(executed) == 1 and "posted late" in executed[0]["reason"], queued
    # and it happened once: the next sweep did not act on it again
    assert kit.changed(aws, arns, next(n for n, a in arns.items() if kit.id_of(a) == acted))


def test_a_change_recorded_as_usual_leaves_no_copy_for_the_next_sweep(aws, deployed_env, lambda_context, monkeypatch):
    # Given a sweep that acts and finishes normally
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    kit = KITS["notebook"]
    now = datetime.now(UTC)
    kit.seed(aws, now)
    app = load_function(kit.function)
    handle_kind_event(event("notebook-schedule.json"), "notebook", app.RUNTIME, now=now)
    first = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("executed")]
    # When the next sweep runs
    handle_kind_event(event("notebook-schedule.json", id="next-sweep"), "notebook", app.RUNTIME, now=now + timedelta(minutes=20))
    # Then each action was posted once, and nothing is left waiting in the log
    assert sorted(m["id"] for m in first) == ["late-tag", "plain"]
    assert [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("executed")] == []
    assert ActionLog(aws.client("dynamodb"), deployed_env["REAPER_TABLE"]).unposted(now + timedelta(days=1)) == []


@pytest.mark.parametrize("kind", sorted(KITS))
def test_when_the_action_log_cannot_take_the_record_ahead_of_a_change_nothing_is_changed(
    aws, deployed_env, lambda_context, monkeypatch, kind
):
    # Given two resources the kind acts on at once, in enforce with no grace, and an action log that
    # takes claims but throttles every record past botocore's retries (DynamoDB at its limit)
    enforcing(monkeypatch, kind, 0)
    kit = KITS[kind]
    arns = kit.seed(aws, datetime.now(UTC))

    def refused(self: ActionLog, *args: Any, **kwargs: Any) -> None:
        raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "Rate exceeded"}}, "PutItem")

    monkeypatch.setattr(ActionLog, "record", refused)
    # When its function sweeps
    result = load_function(kit.function).handler(event(f"{kind}-schedule.json"), lambda_context)
    # Then neither resource was changed (a change the log could not hold ahead would be one nobody hears of),
    assert result["acted"] == [], result
    assert not any(kit.changed(aws, arns, name) for name in arns), arns
    # and each is an error that says nothing was done, not a silent skip
    assert result["verdicts"]["error"] == 2, result
    assert all("nothing done" in e for e in result["errors"]) and len(result["errors"]) == 2, result["errors"]

"""A Stop now event is parsed into its model (reaper.core.events.StopNowDetail) before anything is read or
changed: a detail with a field missing, of the wrong type, or unknown is refused with the field and the
problem, through the real notebook function and the central one, and nothing is called (docs/slack.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.core.errors import BadEventError
from reaper.org import click
from reaper.record.actionlog import ActionLog, create_table
from reaper_devkit import seed
from reaper_devkit.calls import recording
from tests.conftest import load_function
from tests.helpers.events import stop_now

DROP = object()  # the key is left out
MALFORMED = [
    ({"user": DROP}, "detail.user: Field required"),
    ({"arn": 123456789012}, "detail.arn: Input should be a valid string"),
    ({"arn": ""}, "detail.arn: String should have at least 1 character"),
    ({"user": ["U0ANA0001"]}, "detail.user: Input should be a valid string"),
    ({"force": True}, "detail.force: Extra inputs are not permitted"),
    ({"thread_ts": 1733400000.1}, "detail.thread_ts: Input should be a valid string"),
]


def _event(detail: dict[str, Any], now: datetime) -> dict[str, Any]:
    return stop_now("slack-malformed", detail, now)


def _spoil(good: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in {**good, **change}.items() if v is not DROP}


@pytest.mark.parametrize(("change", "said"), MALFORMED, ids=[s.split(":")[0] + "-" + s.split(": ")[1][:12] for _, s in MALFORMED])
def test_a_malformed_stop_now_is_refused_by_the_kind_function_and_changes_nothing(
    aws, sm, cw, deployed_env, lambda_context, monkeypatch, change, said
):
    # Given an idle dev notebook, enforce, and the notebook function
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    seed.notebook(sm, "nb-idle", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
    seed.activity(cw, "nb-idle", now, [0] * 36)
    arn = sm.describe_notebook_instance(NotebookInstanceName="nb-idle")["NotebookInstanceArn"]
    good = {"arn": arn, "user": "U0ANA0001", "response_url": "", "thread_ts": None}
    app = load_function("notebook")
    # When a Stop now event with a malformed detail comes
    with recording() as calls, pytest.raises(BadEventError) as refused:
        app.handler(_event(_spoil(good, change), now), lambda_context)
    # Then it is refused with the field and the problem, before any call: the notebook runs on, nothing is logged
    assert f"not a Stop now event: {said}" in str(refused.value)
    assert calls.total() == 0, calls.by_operation()
    assert sm.describe_notebook_instance(NotebookInstanceName="nb-idle")["NotebookInstanceStatus"] == "InService"
    log = ActionLog(aws.client("dynamodb"), deployed_env["REAPER_TABLE"])
    assert list(log.stored_entries(now.replace(hour=0), now.replace(hour=23))) == []
    # And the same event with its detail whole stops it: the refusal was the detail's
    assert app.handler(_event(good, now), lambda_context)["stop_now"] == "act"


@pytest.mark.parametrize(("change", "said"), MALFORMED, ids=[s.split(":")[0] + "-" + s.split(": ")[1][:12] for _, s in MALFORMED])
def test_a_malformed_stop_now_is_refused_by_the_central_function_before_its_log_is_read(aws, change, said):
    create_table(aws.client("dynamodb"), "org-log")
    now = datetime.now(UTC)
    good = {"arn": "arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb", "user": "U0ADMIN01", "response_url": ""}
    invoked: list[str] = []

    def lambda_for(creds: dict[str, Any], region: str) -> Any:
        invoked.append(region)
        raise AssertionError("no member may be called")

    org_log, sts = ActionLog(aws.client("dynamodb"), "org-log"), aws.client("sts")
    with recording() as calls, pytest.raises(BadEventError) as refused:
        click.stop_from_log(org_log, sts, lambda_for, _event(_spoil(good, change), now), now)
    assert f"not a Stop now event: {said}" in str(refused.value)
    assert calls.total() == 0 and invoked == []

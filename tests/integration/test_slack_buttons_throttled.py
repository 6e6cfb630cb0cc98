"""Slack buttons while every dependency throttles: 30 % of DynamoDB, SageMaker and Lambda calls fail
(after the client's retries). Each click is answered once, never with a Lambda error; every tag a
click wrote is in the action log; nothing is answered twice."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from botocore.exceptions import ClientError

from reaper.core.settings import Settings
from reaper.slack.bot import BotConfig, SlackBot
from reaper.slack.interactions import handle_request
from reaper.wiring import build_runtime
from reaper_devkit import seed
from reaper_devkit.slack_api import SlackApi
from tests.helpers.faults import flaky
from tests.helpers.slack import OWNER, SECRET, USERS, signed

BUTTONS = ("reaper:exempt", "reaper:snooze", "reaper:stop")


def click(api: SlackApi, n: int, action: str, arn: str) -> str:
    payload = {
        "type": "block_actions",
        "user": {"id": OWNER},
        "response_url": api.response_url(f"click-{n}"),
        "container": {"message_ts": f"1700000000.{n:06d}"},
        "actions": [{"action_id": action, "value": json.dumps({"arn": arn, "kind": "notebook"})}],
    }
    return urlencode({"payload": json.dumps(payload)})


@pytest.mark.parametrize("seed_value", [7, 11, 23])
def test_thirty_percent_throttling_on_every_dependency_loses_no_change_and_answers_each_click_once(aws, sm, table, monkeypatch, seed_value):
    # Given 12 notebooks of one owner and the interactions function's clients, each throttled 30 % of the time
    arns = [seed.notebook(sm, f"nb-{i:02d}", {"ml:owner": "ana@example.com", "ml:stage": "dev"}) for i in range(12)]
    rt = build_runtime(Settings.validated({"mode": "enforce", "table": table}), session=aws, region="us-east-1")
    rng = random.Random(seed_value)
    for service in ("dynamodb", "sagemaker"):
        flaky(monkeypatch, rt.clients()(service), 0.3, rng)
    invoked: list[str] = []

    def invoke(target: str, event: dict[str, Any]) -> None:
        if rng.random() < 0.3:
            raise ClientError({"Error": {"Code": "TooManyRequestsException", "Message": "Rate exceeded"}}, "Invoke")
        invoked.append(event["detail"]["arn"])

    with SlackApi(USERS) as api:
        bot = SlackBot.build(BotConfig(bot_token="xoxb-t", admin_channel="C0ADMIN", signing_secret=SECRET, base_url=api.url))
        now = datetime.now(UTC)
        # When the owner clicks 36 buttons (each arn: exempt, snooze, stop)
        statuses = []
        for n in range(36):
            arn, action = arns[n % 12], BUTTONS[n // 12]
            at = now + timedelta(seconds=n)
            statuses.append(handle_request(signed(click(api, n, action, arn), at), rt, bot, at, invoke)["statusCode"])
        responses = list(api.responses)
    # Then every click got an HTTP answer (no exception) and exactly one answer in its thread
    assert set(statuses) <= {200, 503} and 200 in statuses
    assert sorted(r["path"] for r in responses) == sorted(f"/respond/click-{n}" for n in range(36))
    # and every tag a click wrote is in the action log (its record, or the record written ahead of it)
    assert rt.log is not None
    plain = build_runtime(Settings.validated({"mode": "enforce", "table": table}), session=aws, region="us-east-1")
    assert plain.log is not None
    logged = {
        e["arn"]
        for e in plain.log.stored_entries(now - timedelta(minutes=1), now + timedelta(minutes=5))
        if e.get("type") in ("slack-click", "slack-click-ahead") and e.get("result") in ("done", "started")
    }
    tagged = {
        arn
        for arn in arns
        if {t["Key"] for t in plain.clients()("sagemaker").list_tags(ResourceArn=arn)["Tags"]} & {"reaper:exempt", "reaper:snooze-until"}
    }
    assert tagged and tagged <= logged
    # and no stop was handed over twice for one click
    assert len(invoked) == len(set(invoked)) <= 12

"""Every field that reaches Slack is escaped (docs/safety.md, "Slack front doors, escaping, the central role").

The attack: every string a user or AWS can set (a tag, a name, a reason, an error, an owner, a project, a
key of a count, a line of evidence), in every field of every message type of reaper.record.message, holds
`<!channel>`, `<!here>`, `<@U123>`, `<http://x|y>`, `&` and control characters, once short and once
5,000 characters long. Each message is queued as the outbox writes it and posted by the real notifier
function, in bot mode (the local Web API) and in webhook mode (the local receiver); the daily digest is
also built from an action log whose entries carry the attack. Every string of every posted payload (the
whole JSON: fallback text, blocks, confirmations, button values) is walked: no unescaped `<!`, `<@` or
`<http` reaches Slack, and every message is within Slack's limits (tests/helpers/slack_limits.py)."""

from __future__ import annotations

import enum
import json
import re
import types
import typing
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Union, get_args, get_origin

import boto3
import pytest
from pydantic import BaseModel, JsonValue

from reaper.core.model import Mode, Verdict
from reaper.record import message as queued
from reaper.record.actionlog import ActionLog
from reaper_devkit.slack_api import SlackApi
from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import LambdaContext, load_function
from tests.helpers.slack_limits import assert_within_limits

MENTIONS = "<!channel> <!here> <@U123> <http://x|y> <HTTPS://X|Y> &amp; & \x00\x07\x1b[31m\r\x7f\x85"
ATTACKS = {"short": MENTIONS, "5,000 characters": (MENTIONS + " ") * (5000 // (len(MENTIONS) + 1)) + "<!channel>"}
UNESCAPED = re.compile(r"<[!@]|<https?:", re.IGNORECASE)
TYPES = typing.get_args(typing.get_args(queued.Message)[0])  # every member of the Message union
CHOSEN: dict[type, str] = {Verdict: "act", Mode: "enforce"}  # the verdict and mode that show the most


def _value(tp: Any, text: str) -> Any:
    """A JSON value of type `tp` whose every string (and every key) is `text`."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is str or tp is JsonValue:
        return text
    if tp is bool:
        return True
    if tp is int:
        return 3
    if tp is float:
        return 12.5
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return CHOSEN.get(tp, next(iter(tp)).value)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return filled(tp, text)
    if origin is Literal:
        return args[0]
    if origin in (Union, types.UnionType):
        return _value(next(a for a in args if a is not type(None)), text)
    if origin is dict:
        return {text: _value(args[1], text)}
    if origin is list:
        return [_value(args[0], text)]
    if origin is tuple:
        return [_value(a, text) for a in args]
    raise AssertionError(f"no attack value for {tp!r}: add it here")


def filled(model: type[BaseModel], text: str) -> dict[str, Any]:
    """Every field of `model` (but its type tag and the outbox's key) set to the attack."""
    hints = typing.get_type_hints(model, vars(queued))
    return {name: _value(hints[name], text) for name in model.model_fields if name not in ("type", "message_key")}


def bodies(text: str) -> list[str]:
    """One queued body per message type, every field attacked; each validates as the notifier reads it."""
    out = []
    for model in TYPES:
        tag = model.model_fields["type"].default
        body = json.dumps({"type": tag, **filled(model, text)})
        queued.parse_body(body)  # the notifier's reading: a body that did not validate would prove nothing
        out.append(body)
    return out


def strings(value: Any) -> Iterator[str]:
    """Every string in a posted payload, as Slack receives it (a button's value is one string: Slack never
    parses it, so neither does this walk)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, str):
        yield value


def sqs_event(texts: list[str]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": f"m{i}",
                "body": body,
                "receiptHandle": "r",
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:mlreaper-notify",
                "awsRegion": "us-east-1",
            }
            for i, body in enumerate(texts)
        ]
    }


def attacked_log(log: ActionLog, text: str, now: datetime) -> None:
    """Today's entries as the sweeps write them, every user- or AWS-supplied value the attack: a waiting
    resource (the organisation digest's Stop now row), an error, an owner, a project, an account."""
    name = text[:200]  # AWS bounds a resource's name (the log's sort key holds it; DynamoDB keys are at most 1,024 bytes)
    arn = f"arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/{name}"
    common = {"kind": "notebook", "id": name, "owner": text, "project": text, "region": text, "account": text, "arn": arn}
    log.record({**common, "verdict": "warn", "reason": text, "action": "stop", "function": text, "hourly_usd": 1.5}, now, "e1")
    log.record({**common, "arn": arn + "-2", "verdict": "error", "error": text, "reason": text}, now, "e2")


@pytest.fixture
def notifier(aws: boto3.session.Session, table: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The notifier function as deployed, its Slack secret pointing at the local stand-ins."""
    monkeypatch.setenv("REAPER_TABLE", table)
    with SlackApi({}) as api, SlackReceiver() as hook:

        def deploy(secret: str) -> Any:
            arn = aws.client("secretsmanager").create_secret(Name=f"mlreaper-slack-{len(secret)}", SecretString=secret)["ARN"]
            monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", arn)
            app = load_function("notifier")
            app.NOTIFIER.min_interval = 0.0  # Slack's pace is not what this test is about
            return app

        yield {"api": api, "hook": hook, "deploy": deploy, "log": ActionLog(aws.client("dynamodb"), table)}


def _posted(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The payloads as Slack received them; `blocks` is JSON text in a form-encoded chat.postMessage."""
    out = []
    for m in messages:
        blocks = m.get("blocks")
        out.append({**m, "blocks": json.loads(blocks) if isinstance(blocks, str) else blocks})
    return out


def _unescaped(posted: list[dict[str, Any]]) -> list[str]:
    return [s[max(0, hit.start() - 20) : hit.end() + 20] for m in posted for s in strings(m) for hit in UNESCAPED.finditer(s)]


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_no_field_of_any_message_type_reaches_slack_unescaped_in_bot_mode(notifier, attack, lambda_context: LambdaContext):
    # Given every message type with the attack in every field, and an action log whose entries carry it
    text = ATTACKS[attack]
    api = notifier["api"]
    app = notifier["deploy"](json.dumps({"bot_token": "xoxb-t", "admin_channel": "C0ADMIN", "base_url": api.url}))
    now = datetime.now(UTC)
    attacked_log(notifier["log"], text, now - timedelta(minutes=1))
    # When the notifier posts the queued messages, and the daily schedule fires
    result = app.handler(sqs_event(bodies(text)), lambda_context)
    digest = app.handler({"detail-type": "Scheduled Event", "source": "aws.events"}, lambda_context)
    # Then every message was posted (one per type, and the digest)
    assert result == {"batchItemFailures": []} and digest["posted"] is True
    posted = _posted(api.posts)
    assert len(posted) == len(TYPES) + 1
    # And no string of any payload holds an unescaped mention or link, and each is within Slack's limits
    assert _unescaped(posted) == []
    for m in posted:
        assert_within_limits(m)
    # And the digest built from the log did list the attacked resources (a waiting one, an error), so the attack reached it
    shown = json.dumps(posted[-1]["blocks"])
    assert "Waiting (admins may stop now" in shown and "*Errors:*" in shown and "&lt;!channel&gt;" in shown


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_no_field_of_any_message_type_reaches_slack_unescaped_in_webhook_mode(notifier, attack, lambda_context: LambdaContext):
    text = ATTACKS[attack]
    hook = notifier["hook"]
    app = notifier["deploy"](hook.url)
    assert app.handler(sqs_event(bodies(text)), lambda_context) == {"batchItemFailures": []}
    posted = _posted(hook.messages)
    assert len(posted) == len(TYPES)
    assert _unescaped(posted) == []
    for m in posted:
        assert_within_limits(m)


def test_a_confirm_click_on_a_budget_from_a_hostile_project_is_answered_escaped(aws, table):
    """The thread answer quotes the project (from an `ml:project` tag): escaped like the message it answers."""
    from urllib.parse import urlencode

    from reaper.core.settings import Settings
    from reaper.slack.bot import BotConfig, SlackBot
    from reaper.slack.budget_notice import render
    from reaper.slack.interactions import handle_request
    from reaper.wiring import build_runtime
    from tests.helpers.slack import ADMIN, SECRET, signed

    # Given the budget notice for a project named to ping the channel, with its Confirm button, as rendered
    project = MENTIONS
    notice = queued.BudgetChangeMessage(
        id=f"mlreaper-{project}"[:100],
        arn="arn:aws:budgets::123456789012:budget/mlreaper-x",
        project=project,
        what="created",
        usd=100.0,
        origin="tag",
        confirmable=True,
    )
    [button] = [e for b in render(notice).blocks if b["type"] == "actions" for e in b["elements"]]
    rt = build_runtime(Settings.validated({"mode": "enforce", "table": table}), session=aws, region="us-east-1")
    with SlackApi({}) as api:
        bot = SlackBot.build(
            BotConfig(bot_token="xoxb-t", admin_channel="C0ADMIN", signing_secret=SECRET, admins=frozenset({ADMIN}), base_url=api.url)
        )
        # When an admin clicks it
        payload = {
            "user": {"id": ADMIN},
            "response_url": api.response_url("c"),
            "actions": [{"action_id": button["action_id"], "value": button["value"]}],
        }
        now = datetime.now(UTC)
        assert (
            handle_request(signed(urlencode({"payload": json.dumps(payload)}), now), rt, bot, now, lambda t, e: None)["statusCode"] == 200
        )
        said = [r["text"] for r in api.responses]
    # Then the budget is confirmed for that very project, and the answer quotes it escaped
    assert len(said) == 1 and "is confirmed by <@U0ADMIN01>" in said[0]
    assert "project &lt;!channel&gt;" in said[0] and _unescaped([{"text": t.replace("<@U0ADMIN01>", "")} for t in said]) == []

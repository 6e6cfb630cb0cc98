"""Slack buttons: signed, fresh, once, owner or admin only; each click through a sweep's checks,
in the action log and answered in its thread. Slack's side is the local Web API stand-in."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_sdk.signature import SignatureVerifier

from reaper import kinds
from reaper.core.settings import Settings
from reaper.record.actionlog import ActionLog
from reaper.record.runtime import Runtime
from reaper.slack.bot import BotConfig, SlackBot
from reaper.slack.interactions import handle_request
from reaper.sweep import pipeline
from reaper.wiring import build_runtime
from reaper_devkit import seed
from reaper_devkit.calls import recording
from reaper_devkit.slack_api import SlackApi
from tests.conftest import drain, load_function
from tests.helpers.slack import ADMIN, OTHER, OWNER, SECRET, USERS, interactions, signed


def click_body(api: SlackApi, action: str, arn: str, user: str, kind: str = "notebook") -> str:
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "response_url": api.response_url(f"{action}-{user}"),
        "container": {"message_ts": "1700000000.000100"},
        "actions": [{"action_id": action, "value": json.dumps({"arn": arn, "kind": kind})}],
    }
    return urlencode({"payload": json.dumps(payload)})


@pytest.fixture
def world(aws, sm, table):
    arn = seed.notebook(sm, "nb-ana", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
    with interactions(aws, table) as parts:
        yield {"arn": arn, **parts}


def tags(sm: Any, arn: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}


def clicks(rt: Runtime, now: datetime) -> list[dict[str, Any]]:
    assert rt.log is not None
    return [e for e in rt.log.stored_entries(now - timedelta(hours=1), now + timedelta(minutes=1)) if e.get("type") == "slack-click"]


def test_the_owner_snoozes_and_the_tag_the_record_and_the_thread_answer_follow(world, sm):
    now = datetime.now(UTC)
    body = click_body(world["api"], "reaper:snooze", world["arn"], OWNER)
    # When the owner clicks Snooze (a signed request, just now)
    with recording() as calls:
        result = world["call"](signed(body, now), now)
    assert calls.ungranted("InteractionsFunction") == []  # every AWS call on the resource it names
    # Then: 200, the tag, the record, and the answer in the thread
    assert result["statusCode"] == 200
    until = tags(sm, world["arn"])["reaper:snooze-until"]
    assert datetime.fromisoformat(until.replace("Z", "+00:00")) - now > timedelta(hours=23)
    [record] = clicks(world["rt"], now)
    assert record["result"] == "done" and record["user"] == OWNER and record["button"] == "reaper:snooze"
    [said] = world["api"].responses
    assert "snoozed until" in said["text"] and said["thread_ts"] == "1700000000.000100"
    # and the next sweep leaves it alone
    decision, _ = pipeline.decide(
        kinds.get("notebook"),
        kinds.get("notebook").discover(world["rt"].clients(), world["rt"].settings, now)[0],
        None,
        world["rt"].settings,
        now + timedelta(minutes=1),
    )
    assert decision.verdict.value == "exempt" and "snoozed" in decision.reason


def test_a_replayed_click_is_not_acted_on_twice(world, sm):
    now = datetime.now(UTC)
    request = signed(click_body(world["api"], "reaper:exempt", world["arn"], OWNER), now)
    first = world["call"](request, now)
    sm.delete_tags(ResourceArn=world["arn"], TagKeys=["reaper:exempt"])  # the owner changes their mind by hand
    # When the very same signed request arrives again within the 5 minutes
    again = world["call"](request, now + timedelta(seconds=30))
    # Then it is answered but not acted on, and logged as a replay
    assert first["statusCode"] == 200 and again["statusCode"] == 200
    assert "reaper:exempt" not in tags(sm, world["arn"])
    assert [c["result"] for c in clicks(world["rt"], now)] == ["done", "replayed"]
    assert len(world["api"].responses) == 1


@pytest.mark.parametrize("forge", ["unsigned", "bad-signature", "other-secret", "stale", "future", "tampered"])
def test_a_forged_or_stale_request_is_refused_and_changes_nothing(world, sm, forge):
    now = datetime.now(UTC)
    body = click_body(world["api"], "reaper:exempt", world["arn"], OWNER)
    request = signed(body, now)
    if forge == "unsigned":
        request["headers"] = {"Content-Type": "application/x-www-form-urlencoded"}
    elif forge == "bad-signature":
        request["headers"]["X-Slack-Signature"] = "v0=" + "0" * 64
    elif forge == "other-secret":
        request = signed(body, now, secret="not-the-apps-secret")
    elif forge == "stale":
        request = signed(body, now - timedelta(minutes=5, seconds=1))
    elif forge == "future":
        request = signed(body, now + timedelta(minutes=6))
    elif forge == "tampered":
        request["body"] = body.replace("reaper%3Aexempt", "reaper%3Astop")
    result = world["call"](request, now)
    assert result["statusCode"] == 401
    assert "reaper:exempt" not in tags(sm, world["arn"])
    assert world["invoked"] == [] and world["api"].responses == []


def test_someone_else_is_refused_in_the_thread_and_in_the_log(world, sm):
    now = datetime.now(UTC)
    result = world["call"](signed(click_body(world["api"], "reaper:stop", world["arn"], OTHER), now), now)
    assert result["statusCode"] == 200  # Slack shows the answer in the thread, not an error
    assert world["invoked"] == []
    [record] = clicks(world["rt"], now)
    assert record["result"] == "refused" and record["user"] == OTHER
    assert "neither this resource's owner nor an mlreaper admin" in world["api"].responses[0]["text"]


def test_a_member_id_owner_and_an_admin_may_act(world, sm):
    now = datetime.now(UTC)
    sm.add_tags(ResourceArn=world["arn"], Tags=[{"Key": "ml:owner", "Value": OTHER}])
    world["call"](signed(click_body(world["api"], "reaper:stop", world["arn"], OTHER), now), now)
    world["call"](signed(click_body(world["api"], "reaper:restore", world["arn"], ADMIN), now + timedelta(seconds=1)), now)
    assert [t for t, _ in world["invoked"]] == ["notebook"]  # stop delegated; a notebook is not restored
    assert {c["button"]: c["result"] for c in clicks(world["rt"], now)} == {"reaper:stop": "delegated", "reaper:restore": "refused"}


def test_a_button_naming_a_foreign_region_or_unknown_kind_is_refused(world):
    now = datetime.now(UTC)
    foreign = world["arn"].replace("us-east-1", "eu-west-9")
    world["call"](signed(click_body(world["api"], "reaper:exempt", foreign, ADMIN), now), now)
    world["call"](signed(click_body(world["api"], "reaper:exempt", world["arn"], ADMIN, kind="rocket"), now + timedelta(seconds=1)), now)
    assert [c["result"] for c in clicks(world["rt"], now)] == ["refused", "refused"]
    assert world["invoked"] == []


def test_dry_run_answers_what_would_be_done_and_writes_no_tag(aws, sm, table):
    arn = seed.notebook(sm, "nb-dry", {"ml:owner": OWNER})
    rt = build_runtime(Settings.validated({"mode": "dry-run", "table": table}), session=aws, region="us-east-1")
    with SlackApi(USERS) as api:
        bot = SlackBot.build(BotConfig(bot_token="xoxb-t", admin_channel="C0ADMIN", signing_secret=SECRET, base_url=api.url))
        now = datetime.now(UTC)
        handle_request(signed(click_body(api, "reaper:snooze", arn, OWNER), now), rt, bot, now, lambda t, e: None)
        assert "dry-run" in api.responses[0]["text"]
    assert "reaper:snooze-until" not in tags(sm, arn)


def test_stop_now_runs_in_the_kind_function_through_enforce_and_answers_in_the_thread(
    aws, sm, cw, deployed_env, lambda_context, monkeypatch, world
):
    # Given the interactions function delegated a Stop now click (enforce mode)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    world["call"](signed(click_body(world["api"], "reaper:stop", world["arn"], OWNER), now), now)
    [(target, event)] = world["invoked"]
    app = load_function(target)
    # When the notebook function gets it (twice: Lambda's async retry)
    first = app.handler(event, lambda_context)
    again = app.handler(event, lambda_context)
    # Then the notebook is stopped once, logged, posted, and the thread is told
    assert sm.describe_notebook_instance(NotebookInstanceName="nb-ana")["NotebookInstanceStatus"] in ("Stopping", "Stopped")
    assert first["stop_now"] == "act" and again["stop_now"] == "state"  # stopping already: nothing to stop
    log = ActionLog(aws.client("dynamodb"), deployed_env["REAPER_TABLE"])
    acted = [
        e
        for e in log.stored_entries(now - timedelta(hours=1), now + timedelta(minutes=5))
        if e.get("verdict") == "act" and e.get("executed")
    ]
    assert len(acted) == 1 and "asked in Slack by U0ANA0001" in acted[0]["reason"]
    assert [m["id"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("type") == "verdict"] == ["nb-ana"]
    assert any("stopped" in r["text"] for r in world["api"].responses)


def test_stop_now_leaves_an_exempt_resource_alone(aws, sm, deployed_env, lambda_context, monkeypatch, world):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    now = datetime.now(UTC)
    world["call"](signed(click_body(world["api"], "reaper:stop", world["arn"], OWNER), now), now)
    sm.add_tags(ResourceArn=world["arn"], Tags=[{"Key": "reaper:exempt", "Value": "true"}])  # set after the click
    [(target, event)] = world["invoked"]
    result = load_function(target).handler(event, lambda_context)
    assert result["stop_now"] == "exempt"
    assert sm.describe_notebook_instance(NotebookInstanceName="nb-ana")["NotebookInstanceStatus"] == "InService"
    assert "not changed" in world["api"].responses[-1]["text"]


def test_the_signature_window_is_slack_sdks(world):
    """The same body signed 4 min 59 s ago is accepted: the window is 5 minutes, not less."""
    now = datetime.now(UTC)
    ok = world["call"](signed(click_body(world["api"], "reaper:exempt", world["arn"], OWNER), now - timedelta(seconds=299)), now)
    assert ok["statusCode"] == 200
    assert time.time() > 0


# -- malformed requests: a 4xx, never an exception (a 502 and the function's error alarm) -------------
def slack_signed(data: bytes, at: datetime, *, base64_encoded: bool, text: str | None = None) -> dict[str, Any]:
    """A request whose signature is Slack's algorithm (slack_sdk's SignatureVerifier) over the raw bytes `data`;
    the event carries `text` as its body (base64 of `data` by default when `base64_encoded`)."""
    ts = str(int(at.timestamp()))
    if data.isascii():
        sig = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=data)
    else:  # the same algorithm over the bytes (slack_sdk decodes them as UTF-8 first, which these are not)
        sig = "v0=" + hmac.new(SECRET.encode(), b"v0:" + ts.encode() + b":" + data, hashlib.sha256).hexdigest()
    body = text if text is not None else (base64.b64encode(data).decode() if base64_encoded else data.decode())
    return {
        "headers": {"x-slack-request-timestamp": ts, "x-slack-signature": sig, "content-type": "application/x-www-form-urlencoded"},
        "body": body,
        "isBase64Encoded": base64_encoded,
        "requestContext": {"http": {"method": "POST"}},
    }


def test_a_base64_encoded_click_is_verified_over_the_bytes_slack_sent(world, sm):
    now = datetime.now(UTC)
    data = click_body(world["api"], "reaper:exempt", world["arn"], OWNER).encode()
    result = world["call"](slack_signed(data, now, base64_encoded=True), now)
    assert result["statusCode"] == 200
    assert tags(sm, world["arn"])["reaper:exempt"] == "true"


@pytest.mark.parametrize(
    ("case", "status"),
    [
        ("invalid-base64", 400),
        ("deeply-nested", 400),
        ("deeply-nested-value", 400),
        ("oversized", 413),
        ("not-utf8", 400),
        ("headers-not-a-map", 400),
    ],
)
def test_a_malformed_request_gets_a_4xx_and_changes_nothing(world, sm, case, status):
    # Given a fresh request signed with the app's real secret (or none at all), but malformed
    now = datetime.now(UTC)
    if case == "invalid-base64":
        request = slack_signed(b"payload=%7B%7D", now, base64_encoded=True, text="!!not base64$$")
        request["headers"]["x-slack-signature"] = SignatureVerifier(SECRET).generate_signature(
            timestamp=request["headers"]["x-slack-request-timestamp"], body="!!not base64$$"
        )
    elif case == "deeply-nested":
        request = slack_signed(urlencode({"payload": "[" * 5000 + "]" * 5000}).encode(), now, base64_encoded=False)
    elif case == "deeply-nested-value":
        payload = {
            "user": {"id": OWNER},
            "response_url": "https://x",
            "actions": [{"action_id": "reaper:exempt", "value": "[" * 3000 + "]" * 3000}],
        }
        request = slack_signed(urlencode({"payload": json.dumps(payload)}).encode(), now, base64_encoded=True)
    elif case == "oversized":
        body = click_body(world["api"], "reaper:exempt", world["arn"], OWNER) + "&pad=" + "a" * 70_000
        request = slack_signed(body.encode(), now, base64_encoded=False)
    elif case == "not-utf8":
        request = slack_signed(b"payload=\xff\xfe\xfd", now, base64_encoded=True)
    else:
        request = slack_signed(b"payload=%7B%7D", now, base64_encoded=False)
        request["headers"] = ["x-slack-signature", "v0=00"]
    # When it arrives, Then it is answered with a 4xx (no exception), and nothing is done
    result = world["call"](request, now)
    assert result["statusCode"] == status
    assert "reaper:exempt" not in tags(sm, world["arn"])
    assert world["invoked"] == [] and world["api"].responses == []

"""Both Slack front doors (functions/interactions, the member's; functions/central_interactions, the central
account's) answer every malformed request with a 4xx: never an exception, which Lambda turns into a 502
and the function's error alarm (docs/safety.md, "Slack front doors, escaping, the central role").

Each request below is driven through the real handler (cold start from the environment, the signing secret
read from Secrets Manager), and each is refused before anything is claimed, done or answered."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import ModuleType
from typing import Any
from urllib.parse import urlencode

import boto3
import pytest

from tests.conftest import LambdaContext, load_function

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
ADMIN = "U0ADMIN01"
ARN = "arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb"


def sign(ts: str, data: bytes, secret: str = SECRET) -> str:
    """Slack's v0 signature (https://api.slack.com/authentication/verifying-requests-from-slack)."""
    return "v0=" + hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + data, hashlib.sha256).hexdigest()


def click(value: Any = None, **payload: Any) -> str:
    base = {
        "type": "block_actions",
        "user": {"id": ADMIN},
        "response_url": "http://127.0.0.1:9/never",
        "container": {"message_ts": "1700000000.000100"},
        "actions": [{"action_id": "reaper:stop", "value": json.dumps(value or {"arn": ARN, "kind": "notebook", "logged": "x"})}],
    }
    return urlencode({"payload": json.dumps({**base, **payload})})


def request(body: str, ts: str, headers: dict[str, Any] | None = None, **event: Any) -> dict[str, Any]:
    signed = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sign(ts, body.encode("utf-8", "surrogatepass"))}
    return {"headers": signed if headers is None else headers, "body": body, "isBase64Encoded": False, **event}


# name -> (now's timestamp) -> the event; every one must get a 4xx
def _cases() -> dict[str, Callable[[str], Any]]:
    body = click()
    good = lambda ts: sign(ts, body.encode())  # noqa: E731 - a table of one-liners
    return {
        # the signature
        "signature non-ASCII": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": "v0=é" + "0" * 63}),
        "signature all non-ASCII": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": "🔑" * 67}),
        "signature a lone surrogate": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": "v0=\ud800"}),
        "signature NUL": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": "v0=\x00" + "0" * 63}),
        "signature empty": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": ""}),
        "signature a number": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": 12345}),
        "signature a list": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": [good(ts)]}),
        "signature None": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": None}),
        "signature 100 KB": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": "v0=" + "a" * 100_000}),
        "signature upper-case hex": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": good(ts).upper()}),
        "signature v1": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": "v1" + good(ts)[2:]}),
        # the timestamp
        "timestamp Arabic-Indic digits": lambda ts: request(body, ts, {"x-slack-request-timestamp": "١٧٠٠", "x-slack-signature": good(ts)}),
        "timestamp superscript digits": lambda ts: request(body, ts, {"x-slack-request-timestamp": "¹²³", "x-slack-signature": good(ts)}),
        "timestamp garbage": lambda ts: request(body, ts, {"x-slack-request-timestamp": "yesterday", "x-slack-signature": good(ts)}),
        "timestamp negative": lambda ts: request(body, ts, {"x-slack-request-timestamp": "-" + ts, "x-slack-signature": good(ts)}),
        "timestamp float": lambda ts: request(body, ts, {"x-slack-request-timestamp": ts + ".5", "x-slack-signature": good(ts)}),
        "timestamp 10,000 digits": lambda ts: request(body, ts, {"x-slack-request-timestamp": "9" * 10_000, "x-slack-signature": good(ts)}),
        "timestamp with spaces": lambda ts: request(body, ts, {"x-slack-request-timestamp": f" {ts} ", "x-slack-signature": good(ts)}),
        "timestamp a lone surrogate": lambda ts: request(body, ts, {"x-slack-request-timestamp": "\udc80", "x-slack-signature": good(ts)}),
        "timestamp year 1970": lambda ts: request(body, "1"),
        # the headers
        "no headers": lambda ts: request(body, ts, {}),
        "headers None": lambda ts: {**request(body, ts), "headers": None},
        "headers a list": lambda ts: {**request(body, ts), "headers": [["x-slack-signature", good(ts)]]},
        "headers a string": lambda ts: {**request(body, ts), "headers": "x-slack-signature: v0=00"},
        "only the timestamp": lambda ts: request(body, ts, {"X-Slack-Request-Timestamp": ts}),
        "only the signature": lambda ts: request(body, ts, {"X-Slack-Signature": good(ts)}),
        "header names upper-case, bad signature": lambda ts: request(
            body, ts, {"X-SLACK-REQUEST-TIMESTAMP": ts, "X-SLACK-SIGNATURE": "v0=" + "0" * 64}
        ),
        "header names in two cases, the bad one last": lambda ts: request(
            body, ts, {"x-slack-request-timestamp": ts, "x-slack-signature": good(ts), "X-Slack-Signature": "v0=" + "0" * 64}
        ),
        "header names non-string": lambda ts: request(body, ts, {1: ts, None: good(ts)}),
        # the body
        "body not base64": lambda ts: {**request("!!not base64$$", ts), "isBase64Encoded": True},
        "body base64 of garbage bytes": lambda ts: _b64(b"\xff\xfe\x00payload", ts),
        "body a lone surrogate": lambda ts: request("payload=\ud800", ts),
        "body a dict": lambda ts: {**request(body, ts), "body": {"payload": "{}"}},
        "body a number": lambda ts: {**request(body, ts), "body": 42},
        "body missing": lambda ts: {k: v for k, v in request(body, ts).items() if k != "body"},
        "body 1 MB": lambda ts: request("payload=" + "a" * 1_000_000, ts),
        "isBase64Encoded a string": lambda ts: {**request(body, ts), "isBase64Encoded": "true"},
        # signed, but not a click mlreaper rendered
        "no payload": lambda ts: request("token=x", ts),
        "payload not JSON": lambda ts: request(urlencode({"payload": "{not json"}), ts),
        "payload a list": lambda ts: request(urlencode({"payload": "[1, 2]"}), ts),
        "payload nested 10,000 deep": lambda ts: request(urlencode({"payload": "[" * 10_000 + "]" * 10_000}), ts),
        "actions empty": lambda ts: request(click(actions=[]), ts),
        "value not JSON": lambda ts: request(click(actions=[{"action_id": "reaper:stop", "value": "{"}]), ts),
        "value an amount past float": lambda ts: request(click({"arn": ARN, "kind": "notebook", "usd": 10**400}), ts),
        "user not a member ID": lambda ts: request(click(user={"id": "<!channel>"}), ts),
        "container a string": lambda ts: request(click(container="x", message=None), ts),
        "action unknown": lambda ts: request(click(actions=[{"action_id": "reaper:delete", "value": "{}"}]), ts),
        "2,000 form fields": lambda ts: request("&".join(f"f{i}=x" for i in range(2000)), ts),
        # not an event
        "event a list": lambda ts: [],
        "event None": lambda ts: None,
        "event a string": lambda ts: "payload=",
    }


def _b64(data: bytes, ts: str) -> dict[str, Any]:
    return {
        "headers": {"x-slack-request-timestamp": ts, "x-slack-signature": sign(ts, data)},
        "body": base64.b64encode(data).decode(),
        "isBase64Encoded": True,
    }


CASES = _cases()


@pytest.fixture
def doors(aws: boto3.session.Session, table: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, ModuleType]]:
    """The two functions as deployed: a bot-mode Slack secret with the signing secret, their action logs."""
    secret = {"bot_token": "xoxb-t", "admin_channel": "C0ADMIN", "signing_secret": SECRET, "admins": [ADMIN]}
    arn = aws.client("secretsmanager").create_secret(Name="mlreaper-slack", SecretString=json.dumps(secret))["ARN"]
    monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", arn)
    monkeypatch.setenv("REAPER_TABLE", table)
    monkeypatch.setenv("REAPER_ORG_TABLE", table)
    yield {"member": load_function("interactions"), "central": load_function("central_interactions")}


@pytest.mark.parametrize("door", ["member", "central"])
def test_every_malformed_request_gets_a_4xx_and_nothing_is_claimed(doors, aws, table, door, lambda_context: LambdaContext):
    # Given the real handler of each front door
    handler = doors[door].handler
    ts = str(int(datetime.now(UTC).timestamp()))
    answers: dict[str, Any] = {}
    # When each malformed request of the table arrives
    for name, make in CASES.items():
        try:
            answers[name] = handler(make(ts), lambda_context)["statusCode"]
        except Exception as exc:  # noqa: BLE001 - the very thing counted: an exception is a 502
            answers[name] = f"{type(exc).__name__}: {exc}"[:120]
    # Then every one is a 4xx (none an exception, none a 5xx, none accepted)
    wrong = {name: got for name, got in answers.items() if not (isinstance(got, int) and 400 <= got < 500)}
    assert wrong == {}, f"{len(wrong)} of {len(CASES)} malformed requests were not a 4xx: {wrong}"
    # And nothing was claimed or recorded in the action log
    assert aws.client("dynamodb").scan(TableName=table)["Count"] == 0

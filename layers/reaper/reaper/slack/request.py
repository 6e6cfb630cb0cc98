"""A button click as Slack sends it: verified, checked for freshness and replay, then parsed.

Slack signs each request with the app's signing secret: `X-Slack-Signature` is
`v0=` + HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}`
(https://api.slack.com/authentication/verifying-requests-from-slack). slack-sdk's
SignatureVerifier checks it, and refuses a timestamp more than 5 minutes from `now`. A replayed
request (same signature inside those 5 minutes) is refused by a claim in the action log on the
signature: the first delivery wins, every copy is answered "already handled".

The body is form-encoded, `payload=<JSON>` (https://api.slack.com/interactivity/handling#payloads).
Only the button's `value` (the resource's ARN and kind, written by us) and Slack's own fields
(user, response_url, message ts) are used; the rest of the resource is read again from AWS.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

from slack_sdk.signature import Clock, SignatureVerifier

from reaper.slack.message import SLACK_ID

REPLAY_WINDOW_SECONDS = 300
ACTIONS = frozenset({"reaper:snooze", "reaper:exempt", "reaper:restore", "reaper:stop"})


class RequestRefused(Exception):
    """Not acted on; `status` is the HTTP answer, the message says why (logged, never the secret)."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


@dataclass(frozen=True)
class Click:
    action: str  # one of ACTIONS
    arn: str
    kind: str
    user: str  # the Slack member who clicked
    response_url: str
    thread_ts: str | None
    signature: str


class _FixedClock(Clock):
    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> float:
        return self._now.timestamp()


def raw_body(event: dict[str, Any]) -> str:
    """The body exactly as Slack sent it (a function URL may hand it over base64-encoded)."""
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8")
    return str(body)


def verify(event: dict[str, Any], signing_secret: str, now: datetime) -> tuple[str, str]:
    """(raw body, signature) of a request Slack signed within the last 5 minutes; raises RequestRefused."""
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    timestamp, signature = headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
    if not timestamp or not signature:
        raise RequestRefused(401, "unsigned request")
    try:
        age = abs(now.timestamp() - int(timestamp))
    except ValueError:
        raise RequestRefused(401, "the request timestamp is not a number") from None
    if age > REPLAY_WINDOW_SECONDS:
        raise RequestRefused(401, f"stale request ({int(age)} s old; at most {REPLAY_WINDOW_SECONDS})")
    body = raw_body(event)
    if not SignatureVerifier(signing_secret, clock=_FixedClock(now)).is_valid(body, timestamp, signature):
        raise RequestRefused(401, "bad signature")
    return body, signature


def parse_click(body: str, signature: str) -> Click:
    try:
        payload = json.loads(parse_qs(body)["payload"][0])
        action = payload["actions"][0]
        value = json.loads(action["value"])
        click = Click(
            action=str(action["action_id"]),
            arn=str(value["arn"]),
            kind=str(value["kind"]),
            user=str(payload["user"]["id"]),
            response_url=str(payload["response_url"]),
            thread_ts=(payload.get("container") or {}).get("message_ts") or (payload.get("message") or {}).get("ts"),
            signature=signature,
        )
    except (KeyError, IndexError, TypeError, ValueError):
        raise RequestRefused(400, "not a button click from an mlreaper message") from None
    if click.action not in ACTIONS or not SLACK_ID.match(click.user) or not click.arn.startswith("arn:"):
        raise RequestRefused(400, "not a button click from an mlreaper message")
    return click

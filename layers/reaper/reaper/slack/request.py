"""A button click as Slack sends it: verified, checked for freshness and replay, then parsed.

Slack signs each request with the app's signing secret: `X-Slack-Signature` is
`v0=` + HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}`
(https://api.slack.com/authentication/verifying-requests-from-slack). It is computed here over
the body's bytes (slack-sdk's SignatureVerifier algorithm, which would first decode them as UTF-8),
and a timestamp more than 5 minutes from `now` is refused. A replayed
request (same signature inside those 5 minutes) is refused by a claim in the action log on the
signature: the first delivery wins, every copy is answered "already handled".

Slack signs the HTTP body as it sent it. A function URL hands a body it considers binary over
base64-encoded (`isBase64Encoded`): the HMAC is computed over the decoded bytes, which are those
Slack sent; nothing else is decoded, and nothing is parsed, before the signature holds. A body that
is not valid base64, larger than MAX_BODY_BYTES, not UTF-8, or JSON nested deeper than MAX_JSON_DEPTH
is refused with a 4xx, never an exception (an exception would be a 502 and a Lambda error alarm); so is a
signature that is not ASCII (hmac.compare_digest raises TypeError on one) and an `isBase64Encoded` that
is not a boolean (tests/integration/test_slack_malformed.py holds the whole table).

The body is form-encoded, `payload=<JSON>` (https://api.slack.com/interactivity/handling#payloads).
Only the button's `value` (the resource's ARN and kind, written by us) and Slack's own fields
(user, response_url, message ts) are used; the rest of the resource is read again from AWS.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict
from urllib.parse import parse_qs

from reaper.slack.message import SLACK_ID

REPLAY_WINDOW_SECONDS = 300
MAX_BODY_BYTES = 64 * 1024  # a block_actions payload is a few KiB; Slack's own messages are far smaller than this
MAX_JSON_DEPTH = 32  # a button click's payload nests 5 deep
MAX_SIGNATURE = 128  # `v0=` and 64 hex digits; the claim's key holds it whole
MAX_LOGGED_KEY = 1024  # a DynamoDB sort key is at most 1,024 bytes
STOP_ANYWAY = "reaper:stop-anyway"  # an EC2 box kept for its instance store's files: stop it, and they are lost
ACTIONS = frozenset({"reaper:snooze", "reaper:exempt", "reaper:restore", "reaper:stop", STOP_ANYWAY, "reaper:confirm-budget"})


class RequestRefused(Exception):
    """Not acted on; `status` is the HTTP answer, the message says why (logged, never the secret)."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


class ClickRecord(TypedDict, total=False):
    """A click's action-log record (type "slack-click"): which button, on what, by whom, and how it ended
    (reaper.slack.buttons, reaper.org.interactions)."""

    type: str
    button: str
    arn: str
    kind: str
    user: str
    id: str
    region: str
    account: str  # the central digest's: the resource's account
    via: str  # "central": clicked in the organisation's digest
    owner: str | None
    tag: dict[str, str]  # the protection tag a Snooze or Exempt writes
    project: str | None  # a budget confirmation's
    usd: float | None
    gb: float | None  # a Stop anyway's: the instance store's figure consented to
    result: str  # done | refused | failed | delegated | dry-run | replayed
    reason: str  # what the thread was told


@dataclass(frozen=True)
class Click:
    action: str  # one of ACTIONS
    arn: str
    kind: str
    user: str  # the Slack member who clicked
    response_url: str
    thread_ts: str | None
    signature: str
    project: str | None = None  # confirm-budget: the budget's ml:project
    usd: float | None = None  # confirm-budget: the amount the message showed
    logged: str | None = None  # the central digest's Stop now: the organisation log's key of the record it showed
    gb: float | None = None  # Stop anyway: the GB on the instance store the button said would be lost

    def record(self) -> ClickRecord:
        """The start of the click's action-log record: which button, on what, by whom."""
        parts = self.arn.split(":")
        return {
            "type": "slack-click",
            "button": self.action,
            "arn": self.arn,
            "kind": self.kind,
            "user": self.user,
            "id": self.arn.rsplit("/", 1)[-1],
            "region": parts[3] if len(parts) > 3 else "",
        }


def raw_body(event: Mapping[str, object]) -> bytes:
    """The body's bytes exactly as Slack sent them (a function URL may hand them over base64-encoded)."""
    body = event.get("body") or ""
    if not isinstance(body, str):
        raise RequestRefused(400, "the request body is not text")
    if len(body) > MAX_BODY_BYTES * 4 // 3 + 4:  # bounded before decoding too
        raise RequestRefused(413, f"the request body is larger than {MAX_BODY_BYTES} bytes")
    encoded = event.get("isBase64Encoded", False)
    if not isinstance(encoded, bool):
        raise RequestRefused(400, "isBase64Encoded is not a boolean")
    if encoded:
        try:
            data = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise RequestRefused(400, "the request body is not valid base64") from None
    else:
        try:
            data = body.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate (JSON's "\ud800") is no byte Slack could have sent
            raise RequestRefused(400, "the request body is not UTF-8") from None
    if len(data) > MAX_BODY_BYTES:
        raise RequestRefused(413, f"the request body is larger than {MAX_BODY_BYTES} bytes")
    return data


def _headers(event: Mapping[str, object]) -> dict[str, str]:
    headers = event.get("headers") or {}
    if not isinstance(headers, dict):
        raise RequestRefused(400, "the request headers are not a map")
    return {str(k).lower(): str(v) for k, v in headers.items()}


def verify(event: Mapping[str, object], signing_secret: str, now: datetime) -> tuple[str, str]:
    """(body, signature) of a request Slack signed within the last 5 minutes; raises RequestRefused.

    The body is returned as text only once its bytes are proven to be Slack's."""
    headers = _headers(event)
    timestamp, signature = headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
    if not timestamp or not signature:
        raise RequestRefused(401, "unsigned request")
    if not signature.isascii() or len(signature) > MAX_SIGNATURE:
        # hmac.compare_digest raises TypeError on a str that is not ASCII: refused before it is called
        raise RequestRefused(401, "bad signature")
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        raise RequestRefused(401, "the request timestamp is not a number")
    age = abs(now.timestamp() - int(timestamp))
    if age > REPLAY_WINDOW_SECONDS:
        raise RequestRefused(401, f"stale request ({int(age)} s old; at most {REPLAY_WINDOW_SECONDS})")
    data = raw_body(event)
    if not hmac.compare_digest(signature_of(signing_secret, timestamp, data), signature):
        raise RequestRefused(401, "bad signature")
    try:
        return data.decode("utf-8"), signature
    except UnicodeDecodeError:
        raise RequestRefused(400, "the request body is not UTF-8") from None


def signature_of(signing_secret: str, timestamp: str, data: bytes) -> str:
    """Slack's `v0=` signature of these bytes: SignatureVerifier's algorithm, over bytes as they came
    (SignatureVerifier decodes bytes as UTF-8 first, which raises on a body that is not UTF-8)."""
    base = b"v0:" + timestamp.encode("ascii") + b":" + data
    return "v0=" + hmac.new(signing_secret.encode("utf-8"), base, hashlib.sha256).hexdigest()


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in a JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def bounded_json(text: str) -> Any:
    """json.loads, refused (ValueError) when nested deeper than MAX_JSON_DEPTH: deep nesting makes the
    parser recurse until it raises RecursionError, which is not a ValueError."""
    if json_depth(text) > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH}")
    return json.loads(text)


def parse_click(body: str, signature: str) -> Click:
    try:
        payload = bounded_json(parse_qs(body, max_num_fields=8)["payload"][0])
        action = payload["actions"][0]
        value = bounded_json(action["value"])
        click = Click(
            action=str(action["action_id"]),
            arn=str(value["arn"]),
            kind=str(value["kind"]),
            user=str(payload["user"]["id"]),
            response_url=str(payload["response_url"]),
            thread_ts=(payload.get("container") or {}).get("message_ts") or (payload.get("message") or {}).get("ts"),
            signature=signature,
            project=str(value["project"]) if "project" in value else None,
            usd=float(value["usd"]) if "usd" in value else None,
            logged=str(value["logged"])[:MAX_LOGGED_KEY] if "logged" in value else None,
            gb=float(value["gb"]) if "gb" in value else None,
        )
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError):  # float(10**400)
        raise RequestRefused(400, "not a button click from an mlreaper message") from None
    if click.action not in ACTIONS or not SLACK_ID.match(click.user) or not click.arn.startswith("arn:"):
        raise RequestRefused(400, "not a button click from an mlreaper message")
    return click

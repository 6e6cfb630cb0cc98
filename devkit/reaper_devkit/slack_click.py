"""A button click as Slack would send it to the interactions function URL: signed with the app's
signing secret (https://api.slack.com/authentication/verifying-requests-from-slack). Demo and tests."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime
from typing import Any
from urllib.parse import urlencode


def click_body(action: str, arn: str, kind: str, user: str, response_url: str, message_ts: str = "1700000000.000100") -> str:
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "response_url": response_url,
        "container": {"message_ts": message_ts},
        "actions": [{"action_id": action, "value": json.dumps({"arn": arn, "kind": kind})}],
    }
    return urlencode({"payload": json.dumps(payload)})


def signed_request(body: str, at: datetime, secret: str) -> dict[str, Any]:
    """The function URL event for `body`, signed at `at`."""
    ts = str(int(at.timestamp()))
    sig = "v0=" + hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {
        "headers": {"x-slack-request-timestamp": ts, "x-slack-signature": sig, "content-type": "application/x-www-form-urlencoded"},
        "body": body,
        "isBase64Encoded": False,
        "requestContext": {"http": {"method": "POST"}},
    }

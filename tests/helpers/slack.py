"""A Slack workspace as the buttons' tests sign for it: the signing secret, its users, a signed request."""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from typing import Any

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
OWNER, OTHER, ADMIN = "U0ANA0001", "U0EVE0001", "U0ADMIN01"
USERS = {"ana@example.com": OWNER, "eve@example.com": OTHER}


def signed(body: str, at: datetime, secret: str = SECRET) -> dict[str, Any]:
    ts = str(int(at.timestamp()))
    sig = "v0=" + hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {
        "headers": {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig, "Content-Type": "application/x-www-form-urlencoded"},
        "body": body,
        "isBase64Encoded": False,
        "requestContext": {"http": {"method": "POST"}},
    }

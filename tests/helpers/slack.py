"""A Slack workspace as the buttons' tests sign for it: the signing secret, its users, a signed request, and the
interactions function's parts in front of it."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import boto3

from reaper.core.settings import Settings
from reaper.slack.bot import BotConfig, SlackBot
from reaper.slack.interactions import handle_request
from reaper.wiring import build_runtime
from reaper_devkit.slack_api import SlackApi
from tests.conftest import REGION

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


@contextmanager
def interactions(aws: boto3.session.Session, table: str) -> Iterator[dict[str, Any]]:
    """The interactions function's parts, in enforce on the action log `table`: its runtime ("rt"), the local Slack
    Web API knowing USERS ("api"), a bot checking SECRET with ADMIN its admin ("bot"), the sweeps it asked for
    ("invoked") and "call"(event, now), which handles one request."""
    rt = build_runtime(Settings.validated({"mode": "enforce", "table": table}), session=aws, region=REGION)
    with SlackApi(USERS) as api:
        bot = SlackBot.build(
            BotConfig(bot_token="xoxb-t", admin_channel="C0ADMIN", signing_secret=SECRET, admins=frozenset({ADMIN}), base_url=api.url)
        )
        invoked: list[tuple[str, dict[str, Any]]] = []
        yield {
            "rt": rt,
            "api": api,
            "bot": bot,
            "invoked": invoked,
            "call": lambda ev, now: handle_request(ev, rt, bot, now, lambda t, e: invoked.append((t, e))),
        }

"""Bot mode: the Slack secret holds a bot token, and messages go to the people they are about.

The secret (Secrets Manager, JSON):
    {"bot_token": "xoxb-...", "signing_secret": "...", "admin_channel": "C0ADMIN",
     "fallback_channel": "C0FALLBACK", "project_channels": {"vision": "C0VISION"}, "admins": ["U0ADMIN"]}
`bot_token`, `admin_channel` and (for buttons) `signing_secret` are required; the rest is optional.
A secret without `bot_token` is webhook mode (reaper.slack.webhook).

Routing (`SlackBot.channel_for`), first that applies: the owner's DM (an `ml:owner` that is a member ID
U…/W… is used as it is; an e-mail is looked up with users.lookupByEmail, cached for the life of
the function), the project's channel, the fallback channel, the admin channel. chat.postMessage
to a user ID posts in the app's DM with that user (https://api.slack.com/methods/chat.postMessage#channels).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

import reaper.record.message
from reaper.record.message import AnomalyMessage, BudgetChangeMessage, DailyDigestMessage, NoticeMessage
from reaper.slack.message import SLACK_ID, Message
from reaper.slack.post import SlackRateLimited, SlackRefused, SlackUnconfirmed, SlackUnreachable, retry_after
from reaper.slack.webhook import WebhookConfigError

EMAIL_MISSES = {"users_not_found", "user_not_found", "invalid_email"}


@dataclass(frozen=True)
class BotConfig:
    bot_token: str
    admin_channel: str
    signing_secret: str | None = None
    fallback_channel: str | None = None
    project_channels: dict[str, str] = field(default_factory=dict)
    admins: frozenset[str] = frozenset()
    base_url: str | None = None  # the local stand-in (tests, demo); Slack's own when None


def bot_from_secret(text: str | None) -> BotConfig | None:
    """BotConfig for a secret with a `bot_token`; None for anything else (webhook mode decides)."""
    raw = (text or "").strip()
    if not raw.startswith("{"):
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or "bot_token" not in data:
        return None
    token, admin = data.get("bot_token"), data.get("admin_channel")
    if not isinstance(token, str) or not token.startswith("xox"):
        raise WebhookConfigError("the Slack secret's bot_token is not a Slack token (xoxb-…)")
    if not isinstance(admin, str) or not admin.strip():
        raise WebhookConfigError("the Slack secret has a bot_token but no admin_channel")
    projects = data.get("project_channels") or {}
    admins = data.get("admins") or []
    if not isinstance(projects, dict) or not all(isinstance(v, str) for v in projects.values()):
        raise WebhookConfigError("the Slack secret's project_channels is not an object of channel IDs")
    if not isinstance(admins, list) or not all(isinstance(a, str) and SLACK_ID.match(a.strip()) for a in admins):
        raise WebhookConfigError("the Slack secret's admins is not a list of member IDs (U…/W…)")
    signing = data.get("signing_secret")
    base = data.get("base_url")
    return BotConfig(
        bot_token=token,
        admin_channel=admin.strip(),
        signing_secret=signing if isinstance(signing, str) and signing else None,
        fallback_channel=(data.get("fallback_channel") or None),
        project_channels={str(k).strip().lower(): v.strip() for k, v in projects.items()},
        admins=frozenset(a.strip() for a in admins),
        base_url=base if isinstance(base, str) and base.startswith("http://127.0.0.1") else None,
    )


@dataclass
class SlackBot:
    config: BotConfig
    client: WebClient
    users: dict[str, str | None] = field(default_factory=dict)  # e-mail -> member ID (None: not in Slack)

    @classmethod
    def build(cls, config: BotConfig, timeout: int = 5) -> SlackBot:
        # slack-sdk's own default base URL unless the secret names one (a test server)
        base_url = config.base_url.rstrip("/") + "/api/" if config.base_url else WebClient.BASE_URL
        # no retry handlers: a retried post could be a double post; the queue retries instead
        return cls(config, WebClient(token=config.bot_token, timeout=timeout, base_url=base_url, retry_handlers=[]))

    def user_id(self, owner: str | None) -> str | None:
        """The owner's member ID: as written when it is one, looked up (once) when an e-mail."""
        owner = (owner or "").strip()
        if SLACK_ID.match(owner):
            return owner
        if "@" not in owner:
            return None
        email = owner.lower()
        if email not in self.users:
            try:
                found = self._call(lambda: self.client.users_lookupByEmail(email=email))
                self.users[email] = str(found["user"]["id"])
            except SlackRefused as exc:
                if not any(miss in str(exc) for miss in EMAIL_MISSES):
                    raise
                self.users[email] = None
        return self.users[email]

    def channel_for(self, m: reaper.record.message.Message) -> str:
        if isinstance(m, DailyDigestMessage | BudgetChangeMessage):
            return self.config.admin_channel
        user = self.user_id(m.owner)
        if user:
            return user
        if isinstance(m, AnomalyMessage):  # an anomaly nobody owns (or not in Slack) is the admins'
            return self.config.admin_channel
        project = ("" if isinstance(m, NoticeMessage) else m.project or "").strip().lower()
        return self.config.project_channels.get(project) or self.config.fallback_channel or self.config.admin_channel

    def post(self, m: reaper.record.message.Message, message: Message) -> str:
        """Post to where the message belongs; returns the channel. Raises reaper.slack.post's errors."""
        channel = self.channel_for(m)
        self._call(lambda: self.client.chat_postMessage(channel=channel, text=message.text, blocks=message.blocks))
        return channel

    def _call(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except SlackApiError as exc:
            status = exc.response.status_code
            if status == 429:
                raise SlackRateLimited(retry_after(exc.response.headers or {})) from None
            raise SlackRefused(status, str(exc.response.get("error") or "error")) from None
        except URLError as exc:
            raise SlackUnreachable(f"Slack unreachable: {exc.reason}") from None
        except (TimeoutError, ConnectionError, http.client.HTTPException) as exc:
            raise SlackUnconfirmed(f"no answer from Slack ({type(exc).__name__})") from None


_BOTS: dict[str, SlackBot] = {}


def cached_bot(secret_text: str) -> SlackBot | None:
    """The SlackBot for this secret value, kept while the value stays the same (so its e-mail
    lookups are cached across invocations); None when the secret holds no bot token."""
    if secret_text not in _BOTS:
        config = bot_from_secret(secret_text)
        if config is None:
            return None
        _BOTS.clear()
        _BOTS[secret_text] = SlackBot.build(config)
    return _BOTS[secret_text]


def secret_bot(secret_arn: str | None) -> SlackBot | None:
    """The bot for the Slack secret a function is given (Secrets Manager through powertools Parameters,
    cached 5 minutes); None without a secret or without a bot token in it."""
    if not secret_arn:
        return None
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(secret_arn, max_age=300)
    return cached_bot(value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value))

"""Posting to a Slack incoming webhook, with failures sorted by what a retry would do.

- `SlackRefused` / `SlackUnreachable`: Slack did not take the message (it answered an error,
  or the request never got through): safe to send again.
- `SlackRateLimited`: 429 with a `Retry-After` longer than we are willing to wait in the function;
  the caller holds further posts and lets the queue bring the message back.
- `SlackUnconfirmed`: the request went out and no answer came (read timeout, connection dropped
  after sending). Slack may well have posted it, so sending again could double it: the caller
  records it as unconfirmed and does not repeat it.

A 429 with a short `Retry-After` is waited out here (slack-sdk's RateLimitErrorRetryHandler,
bounded). slack-sdk's own logger is silenced: on a retry it logs the full URL at INFO, and the
URL is a credential. Every error text is passed through `webhook.redact`.
"""

from __future__ import annotations

import http.client
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.error import URLError

from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

import reaper.record.message
from reaper.slack.message import Message, cost_line, escape, headline, mention, money, render, render_message
from reaper.slack.render import render_for
from reaper.slack.webhook import redact

__all__ = [
    "Message",
    "PostPolicy",
    "SlackPostError",
    "SlackRateLimited",
    "SlackRefused",
    "SlackUnconfirmed",
    "SlackUnreachable",
    "cost_line",
    "escape",
    "headline",
    "mention",
    "money",
    "post",
    "render",
    "render_message",
    "send",
]

Sleep = Callable[[float], None]

# slack-sdk logs the URL (INFO on a retry, DEBUG per request, and errors): it gets a logger that says nothing.
_SDK_LOGGER = logging.getLogger("reaper.slack.post.sdk")
_SDK_LOGGER.setLevel(logging.CRITICAL + 1)
_SDK_LOGGER.propagate = False
_SDK_LOGGER.addHandler(logging.NullHandler())


@dataclass(frozen=True)
class PostPolicy:
    timeout: int = 5  # seconds; Slack answers a webhook in well under one
    max_wait: float = 5.0  # the longest Retry-After waited out in the function; longer goes back to the queue
    max_retries: int = 2  # 429s waited out per message

    @property
    def longest_post(self) -> float:
        """An upper bound on one post(), for the claim's lease."""
        return self.timeout * (self.max_retries + 1) + self.max_wait * self.max_retries + 1


class SlackPostError(Exception):
    """Slack did not take the message; sending it again is safe."""


class SlackRefused(SlackPostError):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"Slack answered {status}: {body[:200]}")
        self.status = status


class SlackUnreachable(SlackPostError):
    """The request did not get through (DNS, connect, TLS)."""


class SlackRateLimited(SlackPostError):
    def __init__(self, retry_after: float) -> None:
        super().__init__(f"Slack rate limit: retry after {retry_after:g} s")
        self.retry_after = retry_after


class SlackUnconfirmed(Exception):
    """Sent, and no answer: it may be posted. Not a SlackPostError, so no caller retries it by accident."""


def retry_after(headers: Mapping[str, Any]) -> float:
    """Seconds from a Retry-After header (https://api.slack.com/apis/rate-limits); 1 when absent or odd."""
    for name, value in headers.items():
        if name.lower() == "retry-after":
            raw = value[0] if isinstance(value, (list, tuple)) and value else value
            try:
                return max(0.0, float(str(raw).strip()))
            except ValueError:
                return 1.0
    return 1.0


class BoundedRetryAfter(RateLimitErrorRetryHandler):
    """slack-sdk's rate-limit handler, but it waits only up to `max_wait` and through `sleep`
    (the stock one sleeps whatever Retry-After says, which can outlast the function)."""

    def __init__(self, max_retry_count: int, max_wait: float, sleep: Sleep) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait = max_wait
        self.sleep = sleep

    def _can_retry(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None, error: Exception | None = None
    ) -> bool:
        return response is not None and response.status_code == 429 and retry_after(response.headers) <= self.max_wait

    def prepare_for_next_attempt(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None, error: Exception | None = None
    ) -> None:
        assert response is not None
        state.next_attempt_requested = True
        self.sleep(retry_after(response.headers))
        state.increment_current_attempt()


def send(url: str, message: Message, policy: PostPolicy = PostPolicy(), sleep: Sleep = time.sleep) -> None:
    """Post one rendered message; raises one of the errors above."""
    from slack_sdk.webhook import WebhookClient

    client = WebhookClient(
        url,
        timeout=policy.timeout,
        logger=_SDK_LOGGER,
        retry_handlers=[BoundedRetryAfter(policy.max_retries, policy.max_wait, sleep)],
    )
    try:
        response = client.send(text=message.text, blocks=message.blocks)
    except URLError as exc:  # raised while connecting or sending: the request did not arrive whole
        raise SlackUnreachable(redact(f"Slack unreachable: {exc.reason}", url)) from None
    except (TimeoutError, ConnectionError, http.client.HTTPException) as exc:
        # Sent, then the answer timed out or the connection dropped.
        raise SlackUnconfirmed(redact(f"no answer from Slack ({type(exc).__name__})", url)) from None
    except Exception as exc:  # noqa: BLE001 - e.g. SlackRequestError for a URL the SDK refuses
        raise SlackUnreachable(redact(f"Slack request failed: {type(exc).__name__}: {exc}", url)) from None
    if response.status_code == 429:
        raise SlackRateLimited(retry_after(response.headers or {}))
    if response.status_code != 200:
        raise SlackRefused(response.status_code, redact(str(response.body or ""), url))


def post(url: str, queued: reaper.record.message.Message, policy: PostPolicy = PostPolicy(), sleep: Sleep = time.sleep) -> Message:
    """Render and post one message; returns what was posted."""
    message = render_for(queued)
    send(url, message, policy, sleep)
    return message

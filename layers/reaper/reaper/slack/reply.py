"""Answering a button click in its thread, through the click's response_url.

A response_url takes up to 5 answers within 30 minutes
(https://api.slack.com/interactivity/handling#message_responses); slack_sdk's WebhookClient posts
them (a response_url is a webhook URL: same JSON body, same answers). It must be Slack's
(`https://hooks.slack.com/...`), or the loopback stand-in of the tests and the demo: a URL
taken from a request is never fetched anywhere else.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

log = logging.getLogger("reaper")

SLACK_HOSTS = frozenset({"hooks.slack.com", "hooks.slack-gov.com"})


def allowed(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname in SLACK_HOSTS:
        return True
    return parts.scheme == "http" and parts.hostname == "127.0.0.1"


def answer(response_url: str, text: str, thread_ts: str | None = None, timeout: float = 3) -> bool:
    """Post `text` in the clicked message's thread; False (logged) when it could not be."""
    if not allowed(response_url):
        log.warning("not answering a click: its response_url is not Slack's")
        return False
    body: dict[str, object] = {"text": text, "response_type": "in_channel", "replace_original": False}
    if thread_ts:
        body["thread_ts"] = thread_ts
    from slack_sdk.webhook import WebhookClient

    try:
        response = WebhookClient(response_url, timeout=max(1, round(timeout))).send_dict(body)
    except Exception as exc:  # noqa: BLE001 - URLError, a timeout, a refused URL: a reply is best-effort
        log.warning("could not answer the click in Slack: %s", type(exc).__name__)
        return False
    return 200 <= int(response.status_code) < 300

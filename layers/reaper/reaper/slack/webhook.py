"""The Slack webhook URL: read from what the admin stored, and kept out of every log line.

The secret may hold the bare URL, or JSON with a `url` key (the Secrets Manager console's
default "key/value" form; `webhook_url` and `webhook` are accepted too). The stack's
placeholder `not-configured` means Slack is off. Anything else is a `WebhookConfigError`:
the notifier counts it (metric `SlackConfigError`, alarmed in template.yaml) and hands the
messages back to the queue, so nothing is dropped in silence.

No error message here ever includes the stored value: it is a credential.
"""

from __future__ import annotations

import contextlib
import json
import re
from urllib.parse import urlsplit

from reaper.core.errors import ConfigError

OFF = "not-configured"
JSON_KEYS = ("url", "webhook_url", "webhook")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}  # the local stand-in used by the demo and tests
# Anything that looks like a webhook path, for text we did not write ourselves.
WEBHOOK_SHAPE = re.compile(r"(?i)(https?://)?[\w.-]*hooks\.slack(?:-gov)?\.com/\S*")
REDACTED = "<webhook url redacted>"


class WebhookConfigError(ConfigError):
    """The stored webhook cannot be used. The message describes the shape, never the value."""


def webhook_from_secret(value: str | None) -> str | None:
    """The URL to post to, or None when Slack is deliberately off."""
    text = (value or "").strip()
    if not text or text == OFF:
        return None
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise WebhookConfigError("the Slack secret starts with '{' but is not valid JSON") from None
        if not isinstance(data, dict):
            raise WebhookConfigError("the Slack secret is JSON but not an object")
        lowered = {str(k).strip().lower(): v for k, v in data.items()}
        found = next((lowered[k] for k in JSON_KEYS if k in lowered), None)
        if not isinstance(found, str):
            keys = ", ".join(sorted(lowered)) or "none"
            raise WebhookConfigError(f"the Slack secret is JSON without a string 'url' key (keys: {keys})")
        text = found.strip()
    return validated(text)


def validated(url: str) -> str:
    """An https URL with no whitespace (http only to a local stand-in)."""
    url = url.strip()
    if any(c.isspace() for c in url):
        raise WebhookConfigError("the Slack webhook URL contains whitespace")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise WebhookConfigError("the Slack webhook URL does not parse") from None
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname in LOOPBACK:
        return url
    if parts.scheme == "https":
        raise WebhookConfigError("the Slack webhook URL names no host (expected https://hooks.slack.com/services/…)")
    raise WebhookConfigError(f"the Slack webhook URL must start with https:// (scheme found: {parts.scheme or 'none'})")


def redact(text: str, url: str | None) -> str:
    """`text` with the URL (and anything shaped like a webhook URL) replaced."""
    if url:
        variants = {url, url.strip(), url.strip().rstrip("/")}
        with contextlib.suppress(ValueError):
            variants.add(urlsplit(url.strip()).path)
        for variant in sorted(variants, key=len, reverse=True):
            if len(variant) > 8:
                text = text.replace(variant, REDACTED)
    return WEBHOOK_SHAPE.sub(REDACTED, text)

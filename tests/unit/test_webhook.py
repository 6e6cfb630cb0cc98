"""The webhook secret: what an admin may store, and what is refused loudly (never echoed)."""

from __future__ import annotations

import json

import pytest

from reaper.slack.webhook import REDACTED, WebhookConfigError, redact, webhook_from_secret

URL = "https://hooks.slack.com/services/T0SECRET/B0SECRET/zzSecretToken42"


@pytest.mark.parametrize(
    "stored",
    [
        URL,
        f"  {URL}\n",
        json.dumps({"url": URL}),  # the Secrets Manager console's key/value default
        json.dumps({"webhook_url": URL}),
        json.dumps({"Webhook": f" {URL} ", "channel": "#ml"}),
        json.dumps({"URL": URL}),
    ],
)
def test_a_bare_url_or_json_with_a_url_key_is_the_webhook(stored):
    assert webhook_from_secret(stored) == URL


@pytest.mark.parametrize("stored", ["not-configured", "", "   ", None])
def test_the_placeholder_or_nothing_means_slack_is_off(stored):
    assert webhook_from_secret(stored) is None


@pytest.mark.parametrize(
    "stored",
    [
        json.dumps({"hook": URL}),  # JSON without a known key
        json.dumps([URL]),  # JSON, not an object
        json.dumps({"url": 42}),
        "{" + URL,  # broken JSON
        URL.replace("https://", ""),  # scheme-less
        URL.replace("https://", "http://"),  # cleartext to Slack
        f"{URL} extra",  # inner whitespace
        "xoxb-a-bot-token-not-a-url",
    ],
)
def test_anything_else_is_an_error_that_never_repeats_the_value(stored):
    with pytest.raises(WebhookConfigError) as caught:
        webhook_from_secret(stored)
    assert "zzSecretToken42" not in str(caught.value) and "xoxb" not in str(caught.value)


def test_a_local_stand_in_may_use_http_on_loopback_only():
    assert webhook_from_secret("http://127.0.0.1:8080/services/x") == "http://127.0.0.1:8080/services/x"
    with pytest.raises(WebhookConfigError):
        webhook_from_secret("http://example.com/services/x")


def test_redact_removes_the_url_and_anything_shaped_like_one():
    text = f"error for {URL} and POST /services/T0SECRET/B0SECRET/zzSecretToken42 and hooks.slack.com/services/OTHER/X/Y"
    out = redact(text, URL)
    assert "zzSecretToken42" not in out and "OTHER" not in out and REDACTED in out

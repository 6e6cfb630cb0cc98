"""Bot mode against a local Slack Web API stand-in: owners told directly, one message each per
sweep, one daily digest for the admins; webhook mode untouched."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.record.actionlog import ActionLog
from reaper.slack.bot import bot_from_secret
from reaper.slack.notifier import Notifier
from reaper.slack.post import SlackRefused
from reaper.slack.webhook import WebhookConfigError
from reaper_devkit import seed
from reaper_devkit.slack_api import SlackApi
from tests.conftest import drain, event, load_function
from tests.helpers.slack_bot import ADMIN, FALLBACK, USERS, VISION, bot_for

OWNERS = ["ana@example.com", "Bo@Example.com ", "W0CARLA01", "dee@example.com", ""]  # dee is not in Slack
N = int(os.environ.get("REAPER_TEST_FLEET", "200"))  # 2,000 for the figure (slow on moto)


def sqs_event(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": f"m{i}",
                "body": json.dumps(p),
                "receiptHandle": f"rh{i}",
                "attributes": {},
                "messageAttributes": {},
                "eventSource": "aws:sqs",
                "awsRegion": "us-east-1",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
            }
            for i, p in enumerate(payloads)
        ]
    }


@pytest.fixture
def big_fleet(sm: Any, cw: Any) -> None:
    now = datetime.now(UTC)
    for i in range(N):
        owner = OWNERS[i % len(OWNERS)]
        tags = {"ml:stage": "dev", "ml:project": "vision" if owner.startswith("dee") else "nlp"}
        if owner:
            tags["ml:owner"] = owner
        seed.notebook(sm, f"nb-{i:04d}", tags)
        # one period past now too: seeding 200 takes seconds, and a sweep that starts in the next 5-minute
        # period must still find its newest period seeded (else all 200 are unknown; failed once in CI)
        seed.activity(cw, f"nb-{i:04d}", now + timedelta(minutes=5), [0] * 37)


def test_a_dry_run_sweep_of_200_idle_notebooks_is_one_message_per_owner_and_one_digest(
    aws, big_fleet, deployed_env, lambda_context, monkeypatch
):
    # Given bot mode and 200 idle notebooks of 5 owners (one not in Slack, one with no owner tag)
    monkeypatch.setenv("REAPER_SLACK_MODE", "bot")
    app = load_function("notebook")
    # When the schedule fires (dry-run)
    result = app.handler(event("notebook-schedule.json"), lambda_context)
    assert result["resources"] == N
    queued = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    # Then the queue holds one summary per owner, never one message per resource
    assert len(queued) == len(OWNERS)
    assert all(q["type"] == "owner-summary" for q in queued)
    assert sum(q["total"] for q in queued) == N
    # and every resource still has its own record in the action log, none left unposted
    log = ActionLog(aws.client("dynamodb"), deployed_env["REAPER_TABLE"])
    now = datetime.now(UTC)
    assert len([e for e in log.stored_entries(now - timedelta(hours=1), now) if e.get("type") == "verdict"]) == N
    assert log.unposted(now + timedelta(hours=1)) == []
    with SlackApi(USERS) as api:
        bot = bot_for(api)
        n = Notifier(webhook=lambda: None, log=log, bot=lambda: bot, min_interval=0)
        # When the notifier posts them
        assert n.handle(sqs_event(queued))["batchItemFailures"] == []
        # Then each owner is told directly; the unknown e-mail's project channel and the untagged go to fallback
        channels = sorted(p["channel"] for p in api.posts)
        assert channels == sorted(["U0ANA0001", "U0BO00001", "W0CARLA01", VISION, FALLBACK])
        assert api.calls.count("users.lookupByEmail") == 3  # ana, bo, dee: once each
        ana = api.posts_to("U0ANA0001")[0]
        blocks = json.loads(ana["blocks"]) if isinstance(ana["blocks"], str) else ana["blocks"]
        assert len(blocks) <= 50
        buttons = [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
        assert {"reaper:snooze", "reaper:exempt", "reaper:stop"} <= set(buttons)
        # When the digest schedule fires, twice
        first = n.handle({"detail-type": "Scheduled Event", "source": "aws.scheduler"})
        second = n.handle({"detail-type": "Scheduled Event", "source": "aws.scheduler"})
        # Then the admin channel got one digest counting the whole sweep
        assert first["posted"] is True and second["posted"] is False
        assert len(api.posts_to(ADMIN)) == 1
        assert first["digest"]["verdicts"] == {"act": N}
        assert first["digest"]["kinds"] == {"notebook": N}
        assert len(api.posts) == len(OWNERS) + 1


def test_an_unreachable_slack_gives_every_summary_back_to_the_queue(aws, table):
    log = ActionLog(aws.client("dynamodb"), table)
    summary = {"type": "owner-summary", "owner": "ana@example.com", "total": 1, "counts": {"act": 1}, "items": [], "message_key": "k1"}
    with SlackApi(USERS) as api:
        bot = bot_for(api)
        n = Notifier(webhook=lambda: None, log=log, bot=lambda: bot, min_interval=0)
        api.down = True
        down = n.handle(sqs_event([summary]))
        api.down = False
        up = n.handle(sqs_event([summary]))
        again = n.handle(sqs_event([summary]))
    assert [f["itemIdentifier"] for f in down["batchItemFailures"]] == ["m0"]
    assert up["batchItemFailures"] == [] and again["batchItemFailures"] == []
    assert len(api.posts) == 1  # posted once, after the outage, never twice


def test_a_rate_limited_post_waits_in_the_queue(aws, table):
    log = ActionLog(aws.client("dynamodb"), table)
    summaries = [{"type": "owner-summary", "owner": o, "total": 0, "items": [], "message_key": f"k{o}"} for o in ("U0ANA0001", "U0BO00001")]
    with SlackApi(USERS) as api:
        bot = bot_for(api)
        api.rate_limit = 30
        result = Notifier(webhook=lambda: None, log=log, bot=lambda: bot, min_interval=0).handle(sqs_event(summaries))
    assert {f["itemIdentifier"] for f in result["batchItemFailures"]} == {"m0", "m1"}
    assert api.calls.count("chat.postMessage") == 1  # the second was held back, not tried


def test_hostile_owner_values_are_escaped_and_never_a_mention():
    from reaper.record.message import OwnerSummaryMessage, from_record
    from reaper.slack.owner_summary import render

    item = {"kind": "notebook", "id": "<!channel>", "arn": "arn:x", "verdict": "act", "mode": "dry-run", "reason": "<https://evil|click>"}
    summary = from_record({"type": "owner-summary", "owner": "<!here>", "total": 1, "counts": {"act": 1}, "items": [item] * 150})
    assert isinstance(summary, OwnerSummaryMessage)
    msg = render(summary)
    text = json.dumps(msg.blocks)
    assert "<!channel>" not in text and "<!here>" not in text and "<https://evil" not in text
    assert len(msg.blocks) <= 50


@pytest.mark.parametrize(
    "secret, problem",
    [
        ('{"bot_token": "nope", "admin_channel": "C1"}', "not a Slack token"),
        ('{"bot_token": "xoxb-1"}', "no admin_channel"),
        ('{"bot_token": "xoxb-1", "admin_channel": "C1", "admins": ["ana@example.com"]}', "member IDs"),
    ],
)
def test_a_bad_bot_secret_is_a_config_error_naming_the_key_not_the_value(secret, problem):
    with pytest.raises(WebhookConfigError, match=problem) as caught:
        bot_from_secret(secret)
    assert "xoxb-1" not in str(caught.value)


def test_a_webhook_secret_is_not_bot_mode():
    assert bot_from_secret('{"url": "https://hooks.slack.com/services/T/B/x"}') is None
    assert bot_from_secret("https://hooks.slack.com/services/T/B/x") is None


def test_a_lookup_that_slack_refuses_for_another_reason_is_not_cached_as_unknown():
    with SlackApi(USERS) as api:
        bot = bot_for(api)
        api.rate_limit = None
        bot.client.token = "xoxb-test"
        # a refused lookup (bad auth, say) surfaces as an error, so the queue retries it
        api.down = True
        with pytest.raises(SlackRefused):
            bot.user_id("ana@example.com")
        api.down = False
        assert bot.user_id("ana@example.com") == "U0ANA0001"

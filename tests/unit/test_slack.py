"""Slack messages: everything the contract lists, and no message lost when Slack fails."""

from __future__ import annotations

import json

import pytest

from reaper import slack
from reaper.notifier import handle_queue_batch
from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import event


def payload() -> dict:
    return json.loads(event("notifier-sqs.json")["Records"][0]["body"])


def test_an_action_message_says_what_why_cost_owner_undo_and_opt_out():
    text, blocks = slack.render(payload())
    flat = json.dumps(blocks)
    assert text.startswith("Stopped notebook `idle-nb`")
    for needle in ("us-east-1", "123456789012", "ml.g4dn.xlarge", "no activity for 3 h 05 m", "$0.74/h", "$537.57/month",
                   "<@U024BE7LH>", "start-notebook-instance", "reaper:exempt=true", "volume is kept"):
        assert needle in flat, needle


def test_dry_run_says_would():
    p = {**payload(), "mode": "dry-run", "executed": False}
    text, blocks = slack.render(p)
    assert text.startswith("Would stop") and "nothing was changed" in json.dumps(blocks)


def test_an_email_owner_is_written_out_and_a_missing_owner_said():
    assert slack.mention("ana@example.com") == "ana@example.com"
    assert "ml:owner" in slack.mention(None)


def test_unknown_cost_is_not_a_guess():
    text, blocks = slack.render({**payload(), "hourly_usd": None, "monthly_usd": None})
    assert "unknown/h" in json.dumps(blocks)


def test_notifier_posts_each_message():
    with SlackReceiver() as hook:
        result = handle_queue_batch(event("notifier-sqs.json"), lambda: hook.url)
    assert result == {"batchItemFailures": []}
    assert len(hook.messages) == 1 and hook.messages[0]["blocks"]


def test_slack_outage_hands_every_message_back_to_the_queue():
    with SlackReceiver() as hook:
        hook.fail_with = 503
        batch = event("notifier-sqs.json")
        batch["Records"].append({**batch["Records"][0], "messageId": "second"})
        result = handle_queue_batch(batch, lambda: hook.url)
    assert [f["itemIdentifier"] for f in result["batchItemFailures"]] == [batch["Records"][0]["messageId"], "second"]


def test_slack_unreachable_is_a_retry_too():
    result = handle_queue_batch(event("notifier-sqs.json"), lambda: "http://127.0.0.1:9/unreachable")
    assert len(result["batchItemFailures"]) == 1


def test_a_garbled_message_goes_to_the_dead_letter_queue_not_lost():
    batch = {"Records": [{"messageId": "m1", "body": "{not json"}]}
    with SlackReceiver() as hook:
        assert handle_queue_batch(batch, lambda: hook.url) == {"batchItemFailures": [{"itemIdentifier": "m1"}]}


def test_slack_not_configured_is_not_an_error():
    assert handle_queue_batch(event("notifier-sqs.json"), lambda: "") == {"batchItemFailures": []}


def test_a_non_sqs_event_is_refused():
    from reaper.errors import BadEventError

    with pytest.raises(BadEventError):
        handle_queue_batch({"detail": {}}, lambda: "")


def test_a_job_message_shows_its_spend_not_a_monthly_saving():
    p = {**payload(), "kind": "training-job", "evidence": {"estimated_usd": 113.34, "estimate_is_upper_bound": True}}
    flat = json.dumps(slack.render(p)[1])
    assert "$113.34 spent so far" in flat and "upper bound" in flat and "/month" not in flat


def test_an_advisory_says_nothing_was_changed():
    p = {**payload(), "verdict": "keep", "action": None, "executed": False}
    text, blocks = slack.render(p)
    assert "nothing was changed" in text and "saves" not in json.dumps(blocks)

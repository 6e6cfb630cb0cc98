"""Slack messages: everything the contract lists, and no message lost when Slack fails."""

from __future__ import annotations

import json

import pytest

from reaper.record.message import BadMessage, NoticeMessage, VerdictMessage, from_record
from reaper.slack import post as slack
from reaper.slack.notifier import handle_queue_batch
from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import event
from tests.helpers.slack_limits import assert_within_limits, texts

HOSTILE = "<!channel> <https://evil.example|click me> & <@U999999999>"


def payload() -> dict:
    return json.loads(event("notifier-sqs.json")["Records"][0]["body"])


def render(p: dict) -> tuple[str, list[dict]]:
    """A payload as the notifier reads it (reaper.record.message), rendered."""
    message = from_record(p)
    assert isinstance(message, VerdictMessage | NoticeMessage)
    return slack.render(message)


def verdict(p: dict) -> VerdictMessage:
    message = from_record(p)
    assert isinstance(message, VerdictMessage)
    return message


def test_an_action_message_says_what_why_cost_owner_undo_and_opt_out():
    text, blocks = render(payload())
    flat = json.dumps(blocks)
    assert text.startswith("Stopped notebook `idle-nb`")
    for needle in (
        "us-east-1",
        "123456789012",
        "ml.g4dn.xlarge",
        "no activity for 3 h 05 m",
        "$0.74/h",
        "$537.57/month",
        "<@U024BE7LH>",
        "start-notebook-instance",
        "reaper:exempt=true",
        "volume is kept",
    ):
        assert needle in flat, needle


def test_a_change_recorded_before_it_was_made_and_never_confirmed_does_not_claim_it_was_done():
    # the write-ahead copy a killed sweep leaves (pipeline._write_ahead), posted by the next sweep
    p = {**payload(), "unconfirmed": True}
    text, blocks = render(p)
    assert text.startswith("Began to stop (unconfirmed: check it) notebook `idle-nb`"), text
    assert not text.startswith("Stopped") and "start-notebook-instance" in json.dumps(blocks)  # the undo is still given


def test_dry_run_says_would():
    p = {**payload(), "mode": "dry-run", "executed": False}
    text, blocks = render(p)
    assert text.startswith("Would stop") and "nothing was changed" in json.dumps(blocks)


def test_an_email_owner_is_written_out_and_a_missing_owner_said():
    assert slack.mention("ana@example.com") == "ana@example.com"
    assert "ml:owner" in slack.mention(None)


def test_unknown_cost_is_not_a_guess():
    text, blocks = render({**payload(), "hourly_usd": None, "monthly_usd": None})
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
        result = handle_queue_batch(batch, lambda: hook.url, min_interval=0)
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
    from reaper.core.errors import BadEventError

    with pytest.raises(BadEventError):
        handle_queue_batch({"detail": {}}, lambda: "")


def test_a_job_message_shows_its_spend_not_a_monthly_saving():
    p = {**payload(), "kind": "training-job", "evidence": {"estimated_usd": 113.34, "estimate_is_upper_bound": True}}
    flat = json.dumps(render(p)[1])
    assert "$113.34 spent so far" in flat and "upper bound" in flat and "/month" not in flat


def test_an_advisory_says_nothing_was_changed():
    p = {**payload(), "verdict": "keep", "action": None, "executed": False}
    text, blocks = render(p)
    assert "nothing was changed" in text and "saves" not in json.dumps(blocks)


def test_every_string_from_a_user_or_aws_is_escaped():
    # Given a payload whose every user- or AWS-supplied value tries a mention, a link and an entity
    p = {**payload()}
    for key in ("id", "region", "account", "reason", "error", "detail", "project", "stage", "undo", "opt_out", "instance_type", "kind"):
        p[key] = f"{key} {HOSTILE}"
    p["owner"] = HOSTILE
    # When it is rendered
    text, blocks = render(p)
    # Then no Slack control sequence survives, and each value is shown escaped
    for t in [text, *texts(blocks)]:
        assert "<!" not in t and "<http" not in t and "& " not in t and "<@U999" not in t, t
    flat = json.dumps(blocks)
    assert "&lt;!channel&gt;" in flat and "&lt;https://evil.example|click me&gt;" in flat and "&amp;" in flat
    assert_within_limits({"text": text, "blocks": blocks})


def test_a_notice_is_escaped_too():
    notice = {"type": "notice", "kind": HOSTILE, "id": HOSTILE, "title": HOSTILE, "text": HOSTILE, "owner": HOSTILE}
    notice.update(region="<r>", account="&")
    text, blocks = render({**notice, "details": {HOSTILE: HOSTILE}})
    for t in [text, *texts(blocks)]:
        assert "<!" not in t and "<http" not in t and "<r>" not in t


def test_only_a_slack_member_id_becomes_a_mention():
    assert slack.mention("U024BE7LH") == "<@U024BE7LH>"
    assert slack.mention("<!here>") == "&lt;!here&gt;"


def test_every_text_is_cut_to_slacks_limits_and_says_so():
    # Given values far over every limit, made of characters that grow when escaped
    huge = "x<&>" * 4000
    p = {
        **payload(),
        **{k: huge for k in ("id", "reason", "error", "detail", "project", "stage", "undo", "opt_out", "owner", "kind", "action")},
    }
    # When rendered
    message = slack.render_message(verdict(p))
    # Then every block fits (slack-sdk's validators agree), no entity is split, and the cut is announced
    assert_within_limits({"text": message.text, "blocks": message.blocks})
    assert {"reason", "undo", "opt_out", "fields", "title", "header"} <= set(message.cut)
    assert "reaper log" in json.dumps(message.blocks)


def test_a_message_within_limits_is_not_cut():
    assert slack.render_message(verdict(payload())).cut == ()


def test_a_garbled_cost_is_refused_at_the_seam_and_a_garbled_estimate_is_unknown_not_a_crash():
    # a cost that is not a number is not a message (the notifier's poison path: never posted)
    for garbled in ({"hourly_usd": "lots"}, {"monthly_usd": True}, {"evidence": "not a dict"}):
        with pytest.raises(BadMessage):
            from_record({**payload(), **garbled})
    # the evidence is free-form JSON: an estimate that is not a number is shown as unknown
    text, blocks = render({**payload(), "hourly_usd": None, "evidence": {"estimated_usd": "lots"}})
    assert "unknown/h" in json.dumps(blocks) and "about unknown spent so far" in json.dumps(blocks)

"""The typed message seam (reaper.record.message): old bodies still read, numbers exact, one key posted once,
and a body that is not a message refused with its reason and never posted.

The old bodies are tests/fixtures/messages_before_typed_seam.jsonl: captured by tests/plugins/message_capture.py
from the code before this seam (commit 6970d45), running 20 integration test files: what it queued on SQS,
kept in the action log as unposted, posted directly, and built as a digest; each with what its renderer made of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reaper.core.settings import Settings
from reaper.record.actionlog import ActionLog
from reaper.record.message import (
    MAX_BODY_BYTES,
    BadMessage,
    BudgetChangeMessage,
    DailyDigestMessage,
    NoticeMessage,
    OwnerSummaryMessage,
    VerdictMessage,
    from_record,
    parse_body,
)
from reaper.record.outbox import QueueOutbox
from reaper.record.runtime import Runtime
from reaper.slack.notifier import Notifier
from reaper.slack.render import render_for
from reaper.sweep.courier import Courier
from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import ROOT, drain, event
from tests.plugins.message_capture import blocks_sha256

FIXTURE = ROOT / "tests" / "fixtures" / "messages_before_typed_seam.jsonl"
OLD: list[dict[str, Any]] = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line]
NOW = datetime(2026, 12, 3, 12, tzinfo=UTC)


def verdict_body(**over: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(event("notifier-sqs.json")["Records"][0]["body"])
    return {**body, **over}


def sqs_event(bodies: list[str]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": f"m{i}",
                "body": b,
                "receiptHandle": f"rh{i}",
                "attributes": {},
                "messageAttributes": {},
                "eventSource": "aws:sqs",
            }
            for i, b in enumerate(bodies)
        ]
    }


def notifier(url: str, log: ActionLog | None = None) -> Notifier:
    return Notifier(webhook=lambda: url, log=log, min_interval=0)


# -- 1. bodies written by the code before the seam ----------------------------------------------------------


def test_the_capture_holds_every_type_the_code_sends_from_every_place_it_goes():
    seen = {(c["source"], json.loads(c["body"])["type"]) for c in OLD}
    assert {t for _, t in seen} == {"verdict", "notice", "owner-summary", "budget-change", "daily-digest"}
    assert {s for s, _ in seen} == {"sqs", "unposted", "direct", "digest"}
    assert ("unposted", "verdict") in seen and ("unposted", "notice") in seen
    assert any(json.loads(c["body"]).get("unconfirmed") for c in OLD)  # write-ahead copies of begun changes
    assert not any("error" in c["rendered"] for c in OLD)


@pytest.mark.parametrize(
    "captured",
    OLD,
    ids=[f"{c['source']}-{json.loads(c['body']).get('kind') or json.loads(c['body'])['type']}-{i}" for i, c in enumerate(OLD)],
)
def test_an_old_body_validates_keeps_every_key_and_renders_as_it_did(captured):
    # Given a body exactly as the old code wrote it
    old = json.loads(captured["body"])
    # When the notifier (or the courier's replay) reads it
    message = parse_body(captured["body"])
    # Then it is the same message: no key dropped or changed (the action log's record is the old one) ...
    assert message.type == old["type"]
    assert message.as_record() == old
    # ... Slack gets what the old renderer made of it, to the character ...
    rendered = render_for(message)
    assert {"text": rendered.text, "blocks_sha256": blocks_sha256(rendered.blocks), "cut": list(rendered.cut)} == captured["rendered"]
    # ... and the new wire reads back as the same message
    assert parse_body(message.model_dump_json()) == message


def test_old_bodies_sitting_in_the_queue_at_deploy_time_are_all_posted():
    # Given every body the old code queued, delivered to the new notifier in batches of ten (the event source's)
    queued = [c["body"] for c in OLD if c["source"] == "sqs"]
    with SlackReceiver() as hook:
        results = [notifier(hook.url).handle(sqs_event(queued[i : i + 10])) for i in range(0, len(queued), 10)]
    # Then none is refused, and each is posted
    assert all(r == {"batchItemFailures": []} for r in results)
    assert len(hook.messages) == len(queued)


@pytest.fixture
def rt(aws, table, queue) -> Iterator[Runtime]:
    yield Runtime(
        settings=Settings(),
        home_region="us-east-1",
        session=aws,
        log=ActionLog(aws.client("dynamodb"), table),
        outbox=QueueOutbox(aws.client("sqs"), queue),
    )


def test_old_unposted_copies_are_replayed_by_the_next_sweep_keys_and_all(rt, aws, queue):
    # Given the unposted copies a sweep of the old code left behind (written as it wrote them), and one body that is no message
    assert rt.log is not None
    old = [json.loads(c["body"]) for c in OLD if c["source"] == "unposted"]
    for n, body in enumerate(old):
        rt.log.put_unposted(body, NOW - timedelta(hours=1), f"old-sweep-{n}")
    rt.log.put_unposted({"type": "verdict", "kind": "notebook", "id": "garbled", "hourly_usd": "lots"}, NOW - timedelta(hours=1), "bad")
    # When the next sweep replays them
    taken = Courier(rt, NOW, "next-sweep").replay_unposted()
    # Then every old copy is queued as a message, said to be late, under its own message key
    assert taken == len(old)
    queued = [parse_body(json.dumps(b)) for b in drain(aws, queue)]
    assert sorted(m.subject for m in queued) == sorted(f"{b['kind']} {b['id']}" for b in old)
    keys = {b.get("message_key") for b in old} - {None}
    assert keys and keys <= {m.message_key for m in queued}
    assert all(m.reason.endswith(")") and "posted late" in m.reason for m in queued if isinstance(m, VerdictMessage))
    # and the one that is no message is not posted, and stays in the log (a record is never dropped)
    left = rt.log.unposted(NOW)
    assert [body["id"] for _, body in left] == ["garbled"]


# -- 2. notices: one typed shape, an optional free-form part ----------------------------------------------------


def test_a_notice_from_any_caller_has_one_shape_and_its_free_form_part_is_escaped_and_kept():
    # the restore refusal has no ARN, account or owner; a capacity notice has them all; both are notices
    refusal = NoticeMessage(kind="restore", id="ep", region="us-east-1", title="Could not restore ep", text="no record")
    assert refusal.as_record() == {
        "type": "notice",
        "kind": "restore",
        "id": "ep",
        "region": "us-east-1",
        "title": "Could not restore ep",
        "text": "no record",
    }
    with_details = NoticeMessage(kind="capacity", id="cr-1", title="t", text="x", details={"<!here>": ["i-1", 2], "minutes": 40})
    back = parse_body(with_details.model_dump_json())
    assert back == with_details and isinstance(back, NoticeMessage) and back.details["minutes"] == 40
    flat = json.dumps(render_for(back).blocks)
    assert "&lt;!here&gt;" in flat and "<!here>" not in flat and "minutes: 40" in flat


def test_a_notice_with_keys_no_producer_writes_still_validates_and_they_are_not_posted():
    body = {"type": "notice", "kind": "ec2", "id": "i-1", "title": "t", "text": "x", "channel": "<!channel>", "problems": [1]}
    notice = from_record(body)
    assert isinstance(notice, NoticeMessage) and "channel" not in notice.model_dump_json()


# -- 3. numbers round-trip exactly ---------------------------------------------------------------------------

DOLLARS = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False) | st.integers(0, 10**9)


@settings(max_examples=200, deadline=None)
@given(usd=DOLLARS, monthly=DOLLARS, minutes=st.integers(0, 10**7), frac=st.floats(allow_nan=False, allow_infinity=False))
def test_dollars_and_minutes_round_trip_exactly_on_the_old_wire_and_the_new(usd, monthly, minutes, frac):
    old_wire = json.dumps(verdict_body(hourly_usd=usd, monthly_usd=monthly, evidence={"idle_minutes": minutes, "mean": frac}))
    message = parse_body(old_wire)
    assert isinstance(message, VerdictMessage)
    for m in (message, parse_body(message.model_dump_json())):
        assert isinstance(m, VerdictMessage)
        assert m.hourly_usd == usd and m.monthly_usd == monthly
        assert m.evidence["idle_minutes"] == minutes and type(m.evidence["idle_minutes"]) is int  # minutes stay whole
        assert m.evidence["mean"] == frac
        assert json.loads(m.model_dump_json())["hourly_usd"] == usd
    budget = BudgetChangeMessage(id="b", arn="arn:b", project="p", what="set", usd=usd, previous_usd=monthly, origin="admin")
    again = parse_body(budget.model_dump_json())
    assert isinstance(again, BudgetChangeMessage) and (again.usd, again.previous_usd) == (usd, monthly)
    digest = DailyDigestMessage(id="d", date="2026-12-03", reclaimed_today_usd=usd, reclaimed_week_usd=monthly)
    assert parse_body(digest.model_dump_json()) == digest


def test_a_sweep_s_summary_adds_its_owner_s_dollars_to_the_cent_of_the_old_code():
    summary = next(parse_body(c["body"]) for c in OLD if json.loads(c["body"])["type"] == "owner-summary")
    assert isinstance(summary, OwnerSummaryMessage)
    again = parse_body(summary.model_dump_json())
    assert isinstance(again, OwnerSummaryMessage) and again.hourly_usd == summary.hourly_usd
    assert [i.hourly_usd for i in again.items] == [i.hourly_usd for i in summary.items]


# -- 4. one message key, one post --------------------------------------------------------------------------------


def test_the_queue_keeps_a_message_key_and_stamps_one_where_none_is(aws, queue):
    outbox = QueueOutbox(aws.client("sqs"), queue)
    keyed = from_record(verdict_body(message_key="k-write-ahead"))
    unkeyed = NoticeMessage(kind="ec2", id="i-1", title="t")
    assert outbox.send([keyed, unkeyed]) == {}
    got = [parse_body(json.dumps(b)) for b in drain(aws, queue)]
    assert got[0].message_key == "k-write-ahead" and got[1].message_key and got[1].message_key != "k-write-ahead"


def test_a_changes_write_ahead_copy_and_its_final_message_are_posted_once(aws, table):
    # Given the write-ahead copy a sweep left (replayed late) and the final message under the same key
    ahead = verdict_body(message_key="k1", unconfirmed=True, executed=False, reason="began (posted late: ...)")
    final = verdict_body(message_key="k1")
    log = ActionLog(aws.client("dynamodb"), table)
    with SlackReceiver() as hook:
        n = notifier(hook.url, log)
        first = n.handle(sqs_event([json.dumps(final)]))
        second = n.handle(sqs_event([json.dumps(ahead)]))
    # Then the notifier posts the key once
    assert first == second == {"batchItemFailures": []}
    assert len(hook.messages) == 1


# -- attack: a body that is no message -----------------------------------------------------------------------------

MISSING_KIND = {k: v for k, v in verdict_body().items() if k != "kind"}
BAD_BODIES = {
    "not JSON": ("{not json", "Invalid JSON"),
    "empty": ("", "empty"),
    "JSON but not an object": ("[1, 2]", "the body: Input should be an object"),
    "an unknown type": (json.dumps({"type": "wire-transfer", "kind": "x", "id": "y"}), "does not match any of the expected tags"),
    "no type": (json.dumps({"kind": "notebook", "id": "x"}), "Unable to extract tag using discriminator"),
    "a missing field": (json.dumps(MISSING_KIND), "verdict.kind: Field required"),
    "dollars as a string": (json.dumps(verdict_body(hourly_usd="0.74")), "verdict.hourly_usd: Input should be a valid number"),
    "a flag as a word": (json.dumps(verdict_body(executed="yes")), "verdict.executed: Input should be a valid boolean"),
    "an unknown verdict": (json.dumps(verdict_body(verdict="obliterate")), "verdict.verdict: Input should be"),
    "a title that is an object": (json.dumps({"type": "notice", "kind": "x", "id": "y", "title": {"$": 1}}), "notice.title"),
    "huge": (json.dumps(verdict_body(reason="x" * MAX_BODY_BYTES)), "over 1,048,576 bytes"),
    "nested without end": ('{"type": "verdict", "evidence": ' + "[" * 5000 + "]" * 5000 + "}", "recursion limit"),
}


@pytest.mark.parametrize("name", list(BAD_BODIES))
def test_a_body_that_is_no_message_is_refused_with_a_clear_reason(name):
    body, said = BAD_BODIES[name]
    with pytest.raises(BadMessage) as refused:
        parse_body(body)
    reason = str(refused.value)
    assert said in reason, reason
    assert len(reason) < 600  # the reason names the problem, never echoes the body


def test_malformed_bodies_are_never_posted_and_their_batch_mates_are(caplog):
    # Given a batch of every malformed body and one good message
    bodies = [b for b, _ in BAD_BODIES.values()] + [json.dumps(verdict_body())]
    with SlackReceiver() as hook:
        result = notifier(hook.url).handle(sqs_event(bodies))
    # Then each malformed one is reported as failed (SQS retries it, then keeps it in the dead-letter queue) ...
    assert {f["itemIdentifier"] for f in result["batchItemFailures"]} == {f"m{i}" for i in range(len(BAD_BODIES))}
    # ... nothing of them reaches Slack, the good one does, and the log says why for each
    assert len(hook.messages) == 1 and "idle-nb" in json.dumps(hook.messages[0])
    said = [r for r in caplog.records if r.getMessage() == "message cannot be posted; it goes to the dead-letter queue"]
    assert [r.message_id for r in said] == [f"m{i}" for i in range(len(BAD_BODIES))]
    assert [r.problem for r in said][5] == "not a message: verdict.kind: Field required"
    assert all(len(r.problem) < 600 for r in said)

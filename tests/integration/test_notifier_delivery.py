"""The notifier against a local Slack stand-in and a moto action log: each message once,
whatever Slack or the queue does."""

from __future__ import annotations

import json
import logging
import socket
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.record.actionlog import ActionLog, PostClaim
from reaper.record.message import parse_body
from reaper.slack import post as slack
from reaper.slack.direct import DirectSlack
from reaper.slack.notifier import Notifier
from reaper.slack.webhook import WebhookConfigError, webhook_from_secret
from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import event
from tests.helpers.events import sqs_batch

SECRET_PATH = "/services/T0SECRET/B0SECRET/zzSecretToken42"
FAST = slack.PostPolicy(timeout=1, max_wait=2, max_retries=2)


def body(n: int = 0, **extra: Any) -> str:
    p = json.loads(event("notifier-sqs.json")["Records"][0]["body"])
    return json.dumps({**p, "id": f"nb-{n}", **extra})


def failed(result: dict[str, Any]) -> set[str]:
    return {f["itemIdentifier"] for f in result["batchItemFailures"]}


def redeliver(event_: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """What SQS hands back: only the records the last call reported as failed."""
    return {"Records": [r for r in event_["Records"] if r["messageId"] in failed(result)]}


@pytest.fixture
def log(aws, table) -> ActionLog:
    return ActionLog(aws.client("dynamodb"), table)


def notifier(url: str, log: ActionLog | None, **kw: Any) -> Notifier:
    return Notifier(webhook=lambda: url, log=log, policy=kw.pop("policy", FAST), min_interval=kw.pop("min_interval", 0), **kw)


def test_a_slow_slack_posts_once(log):
    # Given a Slack that takes the message but answers after the client's timeout
    with SlackReceiver() as hook:
        hook.delay = 1.6
        n = notifier(hook.url, log)
        ev = sqs_batch([body()])
        # When it is delivered, and then delivered again (SQS redelivery, or a duplicate)
        first = n.handle(ev)
        again = n.handle(ev)
        time.sleep(0.8)  # let the server finish its answers
    # Then Slack saw one request, and neither delivery is retried
    assert hook.requests == 1 and len(hook.messages) == 1
    assert failed(first) == set() and failed(again) == set()
    assert (
        log.claim_post("post|" + json.loads(ev["Records"][0]["body"]).get("message_key", "m0"), datetime.now(UTC), timedelta(minutes=1))
        is PostClaim.UNCONFIRMED
    )


def test_a_redelivered_message_is_not_posted_again_and_a_refused_one_is(log):
    with SlackReceiver() as hook:
        n = notifier(hook.url, log)
        ev = sqs_batch([body(0), body(1)])
        hook.script = [(503, {})]  # Slack refuses the first post only
        first = n.handle(ev)
        assert failed(first) == {"m0"}
        # When SQS redelivers everything (a visibility timeout, a lost delete)
        second = n.handle(ev)
    # Then the refused one is posted now (its claim was released), the posted one is not repeated
    assert failed(second) == set()
    assert sorted(m["text"].split("`")[1] for m in hook.messages) == ["nb-0", "nb-1"]


def test_one_poison_message_leaves_its_batch_mates_posted_once_each(log):
    # Given a batch of 10: 8 good, one not JSON, one JSON that is not an object
    bodies = [body(i) for i in range(10)]
    bodies[3], bodies[7] = "{not json", json.dumps(["a", "list"])
    ev = sqs_batch(bodies)
    with SlackReceiver() as hook:
        n = notifier(hook.url, log)
        # When SQS delivers it, then redelivers what failed, up to maxReceiveCount
        result = n.handle(ev)
        for _ in range(7):
            if not failed(result):
                break
            result = n.handle(redeliver(ev, result))
    # Then only the two poison messages fail, every time, and each good one was posted exactly once
    assert failed(result) == {"m3", "m7"}
    posted = [m["text"].split("`")[1] for m in hook.messages]
    assert sorted(posted) == sorted(f"nb-{i}" for i in range(10) if i not in (3, 7))


def test_the_same_message_queued_twice_is_posted_once(log):
    # Given botocore's retry queued one payload twice (same message_key, new message ids)
    with SlackReceiver() as hook:
        n = notifier(hook.url, log)
        n.handle(sqs_batch([body(message_key="k-1"), body(message_key="k-1")]))
    assert len(hook.messages) == 1


def test_a_dead_senders_claim_is_taken_over_only_after_its_lease(log):
    # Given a notifier that claimed a post and died before Slack answered
    now = datetime.now(UTC)
    n0 = notifier("http://127.0.0.1:9/x", log)
    assert log.claim_post("post|m0", now, n0.lease) is PostClaim.CLAIMED
    with SlackReceiver() as hook:
        # When the message comes back while the lease runs: not posted, retried later
        n = notifier(hook.url, log, clock=lambda: now + timedelta(seconds=1))
        assert failed(n.handle(sqs_batch([body()]))) == {"m0"}
        # When it comes back after the lease (the queue's visibility timeout is longer): posted
        later = notifier(hook.url, log, clock=lambda: now + n0.lease + timedelta(seconds=1))
        assert failed(later.handle(sqs_batch([body()]))) == set()
    assert len(hook.messages) == 1


def test_retry_after_is_honoured():
    # Given Slack answering 429 with Retry-After: 1, then 200
    with SlackReceiver() as hook:
        hook.script = [(429, {"Retry-After": "1"}), (200, {})]
        result = notifier(hook.url, None).handle(sqs_batch([body()]))
    # Then the message was posted once, on the second request, at least a second after the first
    assert failed(result) == set() and len(hook.messages) == 1 and hook.requests == 2
    assert hook.times[1] - hook.times[0] >= 1.0


def test_a_long_retry_after_holds_the_rest_of_the_batch_for_the_queue(log):
    # Given a Retry-After longer than the notifier waits in a function
    with SlackReceiver() as hook:
        hook.script = [(429, {"Retry-After": "30"})]
        slept: list[float] = []
        n = notifier(hook.url, log, sleep=slept.append)
        result = n.handle(sqs_batch([body(0), body(1), body(2)]))
    # Then nothing waited 30 s, Slack was asked once, and all three go back to the queue unposted
    assert failed(result) == {"m0", "m1", "m2"} and hook.requests == 1 and not any(s >= 30 for s in slept)
    assert log.claim_post("post|m0", datetime.now(UTC), timedelta(minutes=1)) is PostClaim.CLAIMED  # released


def test_posts_are_paced(log):
    # Given a clock that moves only when the notifier sleeps (posting takes no time)
    clock = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    with SlackReceiver() as hook:
        n = notifier(hook.url, log, min_interval=0.3, sleep=sleep, monotonic=lambda: clock[0])
        n.handle(sqs_batch([body(i) for i in range(3)]))
    # Then each post after the first waited out the interval
    assert len(hook.messages) == 3 and slept == pytest.approx([0.3, 0.3])


def test_a_bad_secret_keeps_every_message_and_is_counted(capfd):
    from reaper.core.observability import metrics

    def bad() -> str | None:
        return webhook_from_secret(json.dumps({"hook": "https://hooks.slack.com" + SECRET_PATH}))

    result = Notifier(webhook=bad).handle(sqs_batch([body(0), body(1)]))
    metrics.flush_metrics()
    assert failed(result) == {"m0", "m1"}
    out = capfd.readouterr().out
    assert "SlackConfigError" in out and "zzSecretToken42" not in out


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def test_no_log_line_holds_the_webhook_url(log, caplog, capfd):
    # Given every log at DEBUG, and every failure the notifier and the CLI path can meet
    caplog.set_level(logging.DEBUG)
    logging.getLogger().setLevel(logging.DEBUG)
    with SlackReceiver(path=SECRET_PATH) as hook:
        n = notifier(hook.url, log)
        for status, headers in [(503, {}), (404, {}), (429, {"Retry-After": "1"}), (429, {"Retry-After": "99"})]:
            hook.script = [(status, headers)] * 3
            n.handle(sqs_batch([body()], prefix=f"s{status}-{headers.get('Retry-After')}-"))
        hook.delay = 1.3
        n.handle(sqs_batch([body()], prefix="slow"))  # read timeout
        DirectSlack(hook.url, FAST).send([parse_body(body())])  # the CLI path, timing out too
        hook.delay = 0
        hook.script = [(500, {})]
        DirectSlack(hook.url, FAST).send([parse_body(body())])
        time.sleep(0.5)
    unreachable = f"http://127.0.0.1:{_closed_port()}{SECRET_PATH}"
    notifier(unreachable, log).handle(sqs_batch([body()], prefix="down"))
    DirectSlack(unreachable, FAST).send([parse_body(body())])
    for stored in ("https://hooks.slack.com" + SECRET_PATH + " x", "hooks.slack.com" + SECRET_PATH, "{" + SECRET_PATH):
        with pytest.raises(WebhookConfigError):
            webhook_from_secret(stored)
    # Then the URL's secret part is in no log record, no stdout/stderr line
    captured = capfd.readouterr()
    everything = caplog.text + captured.out + captured.err + "".join(str(r.__dict__) for r in caplog.records)
    assert caplog.records or captured.out  # the failures were logged
    assert "zzSecretToken42" not in everything and "B0SECRET" not in everything

"""The notifier function end to end: SQS redrive keeps what Slack refused until it lands in the DLQ."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from reaper.slack.notifier import Notifier
from reaper_devkit import seed_endpoint as se
from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import drain, event, load_function
from tests.helpers.events import sqs_batch
from tests.helpers.slack_limits import assert_within_limits


def test_notifier_reads_the_webhook_from_the_secret_and_reports_failures(aws, monkeypatch, lambda_context):
    with SlackReceiver() as hook:
        secret = aws.client("secretsmanager").create_secret(Name="mlreaper-slack", SecretString=hook.url)["ARN"]
        monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", secret)
        app = load_function("notifier")
        assert app.handler(event("notifier-sqs.json"), lambda_context) == {"batchItemFailures": []}
        hook.fail_with = 500
        failed = app.handler(event("notifier-sqs.json"), lambda_context)
    assert len(hook.messages) == 1 and len(failed["batchItemFailures"]) == 1


def test_placeholder_secret_means_slack_is_off(aws, monkeypatch, lambda_context):
    secret = aws.client("secretsmanager").create_secret(Name="mlreaper-slack", SecretString="not-configured")["ARN"]
    monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", secret)
    app = load_function("notifier")
    assert app.handler(event("notifier-sqs.json"), lambda_context) == {"batchItemFailures": []}


def test_failed_messages_end_in_the_dead_letter_queue(aws, monkeypatch, lambda_context):
    # Given the stack's queue pair (redrive after maxReceiveCount) and Slack down
    sqs = aws.client("sqs")
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    q = sqs.create_queue(
        QueueName="notify",
        Attributes={"VisibilityTimeout": "0", "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"})},
    )["QueueUrl"]
    sqs.send_message(QueueUrl=q, MessageBody=event("notifier-sqs.json")["Records"][0]["body"])
    with SlackReceiver() as hook:
        hook.fail_with = 503
        secret = aws.client("secretsmanager").create_secret(Name="s", SecretString=hook.url)["ARN"]
        monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", secret)
        app = load_function("notifier")
        # When Lambda's SQS poller delivers it until the redrive policy moves it
        for _ in range(5):
            msgs = sqs.receive_message(QueueUrl=q, MaxNumberOfMessages=10).get("Messages", [])
            if not msgs:
                break
            records = [{"messageId": m["MessageId"], "body": m["Body"], "receiptHandle": m["ReceiptHandle"]} for m in msgs]
            result = app.handler({"Records": records}, lambda_context)
            failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
            for m in msgs:
                if m["MessageId"] not in failed:
                    sqs.delete_message(QueueUrl=q, ReceiptHandle=m["ReceiptHandle"])
    # Then the message is in the dead-letter queue, whole
    kept = sqs.receive_message(QueueUrl=dlq).get("Messages", [])
    assert len(kept) == 1 and json.loads(kept[0]["Body"])["id"] == "idle-nb"


@pytest.mark.parametrize("stored", ['{{"url": "{url}"}}', '{{"webhook_url": " {url} "}}', " {url}\n"])
def test_a_json_or_padded_secret_posts(aws, monkeypatch, lambda_context, stored):
    # Given the secret as the Secrets Manager console stores key/value pairs (or padded)
    with SlackReceiver() as hook:
        secret = aws.client("secretsmanager").create_secret(Name="mlreaper-slack", SecretString=stored.format(url=hook.url))["ARN"]
        monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", secret)
        app = load_function("notifier")
        result = app.handler(event("notifier-sqs.json"), lambda_context)
    # Then the message is posted
    assert result == {"batchItemFailures": []} and len(hook.messages) == 1


def test_an_unusable_secret_keeps_the_messages_and_says_so(aws, monkeypatch, lambda_context, capfd, caplog):
    secret = aws.client("secretsmanager").create_secret(Name="s", SecretString='{"token": "https://hooks.slack.com/services/T/B/zzTok"}')[
        "ARN"
    ]
    monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", secret)
    app = load_function("notifier")
    result = app.handler(event("notifier-sqs.json"), lambda_context)
    out = capfd.readouterr().out + caplog.text + "".join(str(r.__dict__) for r in caplog.records)
    # Then the message goes back to the queue, the metric the alarm watches is published, the log says why
    assert len(result["batchItemFailures"]) == 1
    assert '"SlackConfigError"' in out and "without a string 'url' key" in out and "zzTok" not in out


def test_a_40_component_endpoints_message_is_within_slacks_limits(aws, sm, deployed_env, lambda_context, monkeypatch):
    # Given an idle dev endpoint hosting 40 inference components with long names, in enforce
    now = datetime.now(UTC)
    se.components(
        sm,
        "llm-fleet",
        {f"llm-adapter-{i:02d}-customer-support-summarise-v{i}": 1 for i in range(40)},
        {"ml:owner": "ana@example.com", "ml:stage": "dev"},
    )
    se.age("llm-fleet", now, 300)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    load_function("endpoint").handler(event("endpoint-schedule.json"), lambda_context)
    bodies = [json.dumps(m) for m in drain(aws, deployed_env["REAPER_QUEUE_URL"])]
    assert any("llm-fleet" in b for b in bodies)
    # When the notifier posts its messages
    records = sqs_batch(bodies)
    with SlackReceiver() as hook:
        result = Notifier(webhook=lambda: hook.url, min_interval=0).handle(records)
    # Then Slack took every one, and each is within Slack's limits
    assert result == {"batchItemFailures": []} and len(hook.messages) == len(bodies)
    for message in hook.messages:
        assert_within_limits(message)

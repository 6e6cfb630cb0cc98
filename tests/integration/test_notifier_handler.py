"""The notifier function end to end: SQS redrive keeps what Slack refused until it lands in the DLQ."""

from __future__ import annotations

import json

from reaper_devkit.slack_receiver import SlackReceiver
from tests.conftest import event, load_function


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

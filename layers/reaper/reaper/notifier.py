"""The Slack notifier: reads the queue, posts each message, and reports the ones that failed
so SQS retries them (and, after the queue's maxReceiveCount, keeps them in the dead-letter queue).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from reaper import slack
from reaper.errors import BadEventError
from reaper.observability import logger

WebhookSource = Callable[[], str]


def handle_queue_batch(event: Any, webhook: WebhookSource) -> dict[str, Any]:
    if not isinstance(event, dict) or not isinstance(event.get("Records"), list):
        raise BadEventError("notifier expects an SQS event with Records")
    failures: list[dict[str, str]] = []
    url = webhook()
    for record in event["Records"]:
        message_id = record.get("messageId", "")
        try:
            payload = json.loads(record.get("body", ""))
        except json.JSONDecodeError:
            # Not retryable: keep it for a human in the DLQ rather than drop it.
            logger.error("message is not JSON; leaving it for the dead-letter queue", extra={"message_id": message_id})
            failures.append({"itemIdentifier": message_id})
            continue
        if not url:
            logger.warning("Slack is not configured; the action log keeps the record", extra={"id": payload.get("id")})
            continue
        try:
            slack.post(url, payload)
        except slack.SlackPostError as exc:
            logger.warning("Slack post failed; SQS will retry", extra={"error": str(exc), "message_id": message_id})
            failures.append({"itemIdentifier": message_id})
    return {"batchItemFailures": failures}

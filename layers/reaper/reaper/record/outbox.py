"""Where messages go: the SQS queue the notifier reads (deployed), Slack directly (CLI with a
webhook), or nowhere (not configured). The action log holds every record in any case.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from reaper.aws.faults import AwsError, short

SQS_PERMISSIONS = ("sqs:SendMessage",)


class Outbox(Protocol):
    def send(self, payloads: Sequence[dict[str, Any]]) -> dict[int, str]:
        """Deliver or queue; returns {index: problem} for each payload that could not be handed on."""


class NoOutbox:
    def send(self, payloads: Sequence[dict[str, Any]]) -> dict[int, str]:
        return {}


class QueueOutbox:
    """SQS: the notifier posts, retries, and leaves what fails in the dead-letter queue."""

    def __init__(self, sqs: Any, queue_url: str) -> None:
        self.sqs, self.queue_url = sqs, queue_url

    def send(self, payloads: Sequence[dict[str, Any]]) -> dict[int, str]:
        """Each message gets a `message_key` before it is queued: botocore's retry of a batch whose
        answer was lost queues it twice under new message ids, and the notifier posts one key once."""
        problems: dict[int, str] = {}
        keyed = [{**p, "message_key": p.get("message_key") or uuid.uuid4().hex} for p in payloads]
        for i in range(0, len(keyed), 10):
            batch = keyed[i : i + 10]
            entries = [{"Id": str(n), "MessageBody": json.dumps(p, default=str)} for n, p in enumerate(batch)]
            try:
                response = self.sqs.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            except AwsError as exc:
                for n, p in enumerate(batch):
                    problems[i + n] = f"queueing the message for {p.get('kind')} {p.get('id')} failed: {short(exc)}"
                continue
            for failed in response.get("Failed", []):
                n = int(failed["Id"])
                p = batch[n]
                problems[i + n] = f"queueing the message for {p.get('kind')} {p.get('id')} failed: {failed.get('Message')}"
        return problems

"""Where messages go: the SQS queue the notifier reads (deployed), Slack directly (CLI with a
webhook), or nowhere (not configured). The action log holds every record in any case.

What goes is a typed message (reaper.record.message), never a dict: the queue gets its
`model_dump_json()`, and the notifier reads it back with `reaper.record.message.parse_body`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from reaper.aws.faults import AwsError, short
from reaper.record.message import Message

SQS_PERMISSIONS = ("sqs:SendMessage",)


class Outbox(Protocol):
    def send(self, messages: Sequence[Message]) -> dict[int, str]:
        """Deliver or queue; returns {index: problem} for each message that could not be handed on."""


class NoOutbox:
    def send(self, messages: Sequence[Message]) -> dict[int, str]:
        return {}


class GroupedOutbox:
    """An outbox whose messages are held to the end of the sweep and handed on as one summary per owner
    (reaper.record.owner_summary). Chosen by reaper.wiring (Slack's bot mode); the courier asks the
    outbox, never Slack's mode."""

    def __init__(self, inner: Outbox) -> None:
        self.inner = inner

    def send(self, messages: Sequence[Message]) -> dict[int, str]:
        return self.inner.send(messages)


class QueueOutbox:
    """SQS: the notifier posts, retries, and leaves what fails in the dead-letter queue."""

    def __init__(self, sqs: Any, queue_url: str) -> None:
        self.sqs, self.queue_url = sqs, queue_url

    def send(self, messages: Sequence[Message]) -> dict[int, str]:
        """Each message gets a `message_key` before it is queued: botocore's retry of a batch whose
        answer was lost queues it twice under new message ids, and the notifier posts one key once."""
        problems: dict[int, str] = {}
        keyed = [m if m.message_key else m.model_copy(update={"message_key": uuid.uuid4().hex}) for m in messages]
        for i in range(0, len(keyed), 10):
            batch = keyed[i : i + 10]
            entries = [{"Id": str(n), "MessageBody": m.model_dump_json()} for n, m in enumerate(batch)]
            try:
                response = self.sqs.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            except AwsError as exc:
                for n, m in enumerate(batch):
                    problems[i + n] = f"queueing the message for {m.subject} failed: {short(exc)}"
                continue
            for failed in response.get("Failed", []):
                n = int(failed["Id"])
                problems[i + n] = f"queueing the message for {batch[n].subject} failed: {failed.get('Message')}"
        return problems

"""Events the tests send: those every sweep function refuses, whatever its kind (the first cases of each handler's
malformed-event test), a Stop-now click as the interactions function puts it on the bus, and the queue's batches
for the notifier."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper.slack.buttons import STOP_DETAIL_TYPE, STOP_SOURCE

MALFORMED_ANY_KIND: list[Any] = [
    "not an object",
    {"detail-type": "Scheduled Event", "source": "aws.events"},  # no id
    {"id": "x", "detail-type": "Something Else", "source": "aws.events", "detail": {}},
]


def stop_now(event_id: str, detail: dict[str, Any], now: datetime) -> dict[str, Any]:
    """A Stop-now event (an EventBridge envelope) with its `detail`, sent at `now`."""
    return {
        "version": "0",
        "id": event_id,
        "source": STOP_SOURCE,
        "detail-type": STOP_DETAIL_TYPE,
        "account": "",
        "time": now.isoformat(),
        "region": "",
        "resources": [],
        "detail": detail,
    }


def sqs_batch(bodies: list[str], prefix: str = "m") -> dict[str, Any]:
    """An SQS event source's batch for the notifier: one record per body, its messageId `prefix` and its index."""
    return {
        "Records": [
            {
                "messageId": f"{prefix}{i}",
                "body": b,
                "receiptHandle": f"rh{i}",
                "attributes": {},
                "messageAttributes": {},
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
                "awsRegion": "us-east-1",
            }
            for i, b in enumerate(bodies)
        ]
    }

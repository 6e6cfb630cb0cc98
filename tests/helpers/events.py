"""Events every sweep function refuses, whatever its kind: the first cases of each handler's malformed-event test."""

from __future__ import annotations

from typing import Any

MALFORMED_ANY_KIND: list[Any] = [
    "not an object",
    {"detail-type": "Scheduled Event", "source": "aws.events"},  # no id
    {"id": "x", "detail-type": "Something Else", "source": "aws.events", "detail": {}},
]

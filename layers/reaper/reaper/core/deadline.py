"""How long a sweep may still run: the Lambda's remaining time, or no limit for the CLI.

A sweep starts no change in its last seconds (RESERVE): an action cut off by the timeout would
be neither logged nor posted. What it does not reach it says once, and the next sweep decides again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

RESERVE_SECONDS = 30.0  # enough to finish one action, record it and queue the messages


@dataclass(frozen=True)
class Deadline:
    at: float | None  # time.monotonic() value; None = no limit
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def none(cls) -> Deadline:
        return cls(None)

    @classmethod
    def in_seconds(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(clock() + seconds, clock)

    @classmethod
    def from_lambda(cls, context: object) -> Deadline:
        """The invocation's own clock: `left()` asks the context each time (Lambda computes it live),
        so a test hands in a context whose time runs as it likes, with no sleep."""
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        if not callable(remaining):
            return cls.none()
        try:
            float(remaining())
        except (TypeError, ValueError):
            return cls.none()
        return cls(0.0, lambda: -float(remaining()) / 1000.0)

    def left(self) -> float | None:
        return None if self.at is None else self.at - self.clock()

    def nearly_over(self) -> bool:
        left = self.left()
        return left is not None and left < RESERVE_SECONDS

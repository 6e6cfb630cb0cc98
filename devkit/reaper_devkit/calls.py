"""Count the AWS API calls a piece of code makes (for IAM checks and the benchmark)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.client import BaseClient

from reaper.iam import iam_action


class CallRecorder:
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()  # "service:Operation" -> count (IAM names)

    @property
    def actions(self) -> set[str]:
        return set(self.calls)

    def by_operation(self) -> dict[str, int]:
        return dict(sorted(self.calls.items()))

    def total(self) -> int:
        return sum(self.calls.values())


@contextmanager
def recording() -> Iterator[CallRecorder]:
    """Every botocore client call inside the block is counted, whichever session made the client."""
    recorder = CallRecorder()
    original = BaseClient._make_api_call

    def wrapped(self: BaseClient, operation_name: str, api_params: Any) -> Any:
        recorder.calls[iam_action(self.meta.service_model.service_name, operation_name)] += 1
        return original(self, operation_name, api_params)

    BaseClient._make_api_call = wrapped  # type: ignore[method-assign]
    try:
        yield recorder
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]

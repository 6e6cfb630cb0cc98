"""Count the AWS API calls a piece of code makes (for IAM checks and the benchmark).

Each call is also kept as what IAM authorizes for it (reaper_devkit.iam_check): `ungranted`
says which of those the function's role in template.yaml would refuse, resource and conditions
included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any

from botocore.client import BaseClient

from reaper.sweep.iam import NO_PERMISSION_NEEDED, iam_action
from reaper_devkit.iam_check import TRANSACT_ITEM_ACTION, TRANSACT_WRITE, Request, on_behalf, requests_for, ungranted
from reaper_devkit.moto_ext import autoscaling_sagemaker


class CallRecorder:
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()  # "service:Operation" -> count (IAM names)
        self.requests: list[Request] = []  # what IAM authorizes for each call
        self.made: list[tuple[str, dict[str, Any]]] = []  # (operation, parameters) of each call, in order

    def ungranted(self, logical_id: str, conditions: Collection[str] | None = None) -> list[str]:
        """What the function's role would refuse among everything recorded (empty = all granted)."""
        return ungranted(self.requests, logical_id, conditions)

    @property
    def actions(self) -> set[str]:
        """The IAM actions the calls need: a TransactWriteItems needs those of its items (iam_check); a call
        that needs no permission (the CLI's STS GetCallerIdentity before a sweep) needs none."""
        items = {r.action for r in self.requests if r.action in TRANSACT_ITEM_ACTION.values()}
        return (set(self.calls) - {TRANSACT_WRITE} - NO_PERMISSION_NEEDED) | (items if TRANSACT_WRITE in self.calls else set())

    def by_operation(self) -> dict[str, int]:
        return dict(sorted(self.calls.items()))

    def total(self) -> int:
        return sum(self.calls.values())

    @property
    def operations(self) -> list[str]:
        """Every call's botocore operation name, in the order made ("FilterLogEvents", ...)."""
        return [op for op, _params in self.made]


@contextmanager
def recording() -> Iterator[CallRecorder]:
    """Every botocore client call inside the block is counted, whichever session made the client."""
    recorder = CallRecorder()
    original = BaseClient._make_api_call

    def wrapped(self: BaseClient, operation_name: str, api_params: Any) -> Any:
        action = iam_action(self.meta.service_model.service_name, operation_name)
        recorder.calls[action] += 1
        recorder.made.append((operation_name, dict(api_params)))
        if action in NO_PERMISSION_NEEDED:  # counted, but nothing for IAM to authorize
            return original(self, operation_name, api_params)
        try:
            recorder.requests.extend(requests_for(action, api_params, self.meta.region_name))
        except (KeyError, TypeError, AttributeError):  # a call whose resource cannot be read: refused, visibly
            recorder.requests.append(Request(action, f"unreadable:{sorted(api_params)}"))
        before = len(autoscaling_sagemaker.ON_BEHALF)
        try:
            return original(self, operation_name, api_params)
        finally:  # the alarms AWS made or deleted for this caller (a target-tracking policy's): the caller's to be allowed
            recorder.requests.extend(on_behalf(autoscaling_sagemaker.ON_BEHALF[before:]))

    BaseClient._make_api_call = wrapped  # type: ignore[method-assign]
    try:
        yield recorder
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]

"""Faults injected at a client, as AWS answers them: the reaper's code under test is never replaced."""

from __future__ import annotations

import random
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError


def flaky(monkeypatch: pytest.MonkeyPatch, client: Any, rate: float, rng: random.Random) -> None:
    """Every API method of `client` fails with ThrottlingException `rate` of the time (after retries)."""
    for method in client.meta.method_to_api_mapping:
        if method.startswith(("get_paginator", "can_paginate")):
            continue
        original = getattr(client, method)
        operation = client.meta.method_to_api_mapping[method]

        def throttled(*args: Any, _original: Any = original, _operation: str = operation, **kwargs: Any) -> Any:
            if rng.random() < rate:
                raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, _operation)
            return _original(*args, **kwargs)

        monkeypatch.setattr(client, method, throttled)


def refuse(monkeypatch: pytest.MonkeyPatch, operation: str, code: str = "AccessDeniedException") -> None:
    """`operation` (its API name), from any client, answers `code`: as AWS answers a role without its grant."""
    original = BaseClient._make_api_call

    def refused(self: BaseClient, name: str, params: Any) -> Any:
        if name == operation:
            raise ClientError({"Error": {"Code": code, "Message": f"not authorized to perform {operation}"}}, name)
        return original(self, name, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", refused)

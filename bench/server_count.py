"""Counting AWS calls on the server's side: a WSGI middleware in front of moto's local server that names
each request's operation from what AWS itself reads (the SigV4 credential scope for the service; the
`X-Amz-Target` header, the Smithy RPC v2 path or the `Action` parameter for the operation), and keeps
the resource each change call names. Whatever client makes the calls (the reaper in this process,
Cloud Custodian in its own venv), they are counted the same way (bench/c7n_side_by_side.py).

Pages: SigV4 credential scope https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html ;
the JSON protocol's X-Amz-Target https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html ;
Smithy RPC v2 CBOR paths https://smithy.io/2.0/additional-specs/protocols/smithy-rpc-v2.html ;
the query protocol's Action https://smithy.io/2.0/aws/protocols/aws-query-protocol.html
"""

from __future__ import annotations

import io
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs

# SigV4 signing names that differ from the IAM prefix the rest of the bench uses
SIGNING_TO_IAM = {"monitoring": "cloudwatch", "execute-api": "apigateway"}
_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/[^/]+/([^/]+)/aws4_request")
_RPC_V2 = re.compile(r"^/service/[^/]+/operation/([^/?]+)")

# the change calls whose target is "the resource acted on", and the parameter that names it
TARGETS: dict[str, tuple[str, ...]] = {
    "sagemaker:StopNotebookInstance": ("NotebookInstanceName",),
    "sagemaker:DeleteEndpoint": ("EndpointName",),
    "sagemaker:UpdateEndpointWeightsAndCapacities": ("EndpointName",),
    "sagemaker:UpdateInferenceComponentRuntimeConfig": ("InferenceComponentName",),
    "ec2:StopInstances": ("InstanceId",),
}


def operation_of(headers: Mapping[str, str], path: str, query: str, body: bytes) -> str | None:
    """`service:Operation` of one request, or None for a request that is not an AWS call (moto's own API)."""
    scope = _SCOPE.search(headers.get("Authorization", ""))
    if scope is None or path.startswith("/moto-api"):
        return None
    service = SIGNING_TO_IAM.get(scope.group(1), scope.group(1))
    target = headers.get("X-Amz-Target", "")
    rpc = _RPC_V2.match(path)
    if target:
        op = target.rsplit(".", 1)[-1]
    elif rpc:
        op = rpc.group(1)
    else:
        params = _form(query, body)
        op = params.get("Action", [""])[0] or f"{headers.get('REQUEST_METHOD', 'REST')} {path.split('?')[0]}"
    return f"{service}:{op}"


def targets_of(operation: str, query: str, body: bytes) -> list[str]:
    """The resources a change call names (empty for any other call)."""
    keys = TARGETS.get(operation)
    if not keys:
        return []
    if body[:1] == b"{":
        doc = json.loads(body)
        return [str(doc[k]) for k in keys if k in doc]
    params = _form(query, body)  # the EC2 query protocol: InstanceId.1, InstanceId.2, ...
    return [v for name, values in params.items() for v in values if name.split(".")[0] in keys]


def _form(query: str, body: bytes) -> dict[str, list[str]]:
    out = parse_qs(query)
    if body and body[:1] not in (b"{", b"\xa0", b"\xbf") and b"=" in body:
        try:
            for k, v in parse_qs(body.decode("utf-8")).items():
                out.setdefault(k, []).extend(v)
        except UnicodeDecodeError:  # a binary body (CBOR, event stream) holds no form fields: the query alone names it
            return out
    return out


class Tally:
    """The calls of one run, by operation, and the resources each change call named."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.changed: list[tuple[str, str]] = []  # (operation, resource) in order
        self._lock = threading.Lock()

    def add(self, operation: str, targets: Iterable[str]) -> None:
        with self._lock:
            self.calls[operation] += 1
            self.changed.extend((operation, t) for t in targets)

    def by_operation(self) -> dict[str, int]:
        return dict(sorted(self.calls.items()))

    def total(self) -> int:
        return sum(self.calls.values())

    def acted_on(self, owner: Callable[[str], str] = lambda r: r) -> set[str]:
        """Every resource some change call named, mapped to the resource judged (an inference component to its endpoint)."""
        return {owner(r) for _op, r in self.changed}


class CountingApp:
    """WSGI middleware: counts each AWS request into the current Tally (none outside `counting()`)."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.tally: Tally | None = None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        tally = self.tally
        if tally is not None:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length) if length else b""
            environ["wsgi.input"] = io.BytesIO(body)  # moto reads it again
            headers = {"Authorization": environ.get("HTTP_AUTHORIZATION", ""), "X-Amz-Target": environ.get("HTTP_X_AMZ_TARGET", "")}
            headers["REQUEST_METHOD"] = environ.get("REQUEST_METHOD", "")
            query = environ.get("QUERY_STRING", "")
            op = operation_of(headers, environ.get("PATH_INFO", ""), query, body)
            if op is not None:
                status: list[str] = []

                def answered(code: str, *args: Any, **kwargs: Any) -> Any:
                    status.append(code)
                    return start_response(code, *args, **kwargs)

                out = self.app(environ, answered)
                # a change the server refused (4xx, 5xx) acted on nothing; the call still counts
                accepted = bool(status) and status[0][:1] == "2"
                tally.add(op, targets_of(op, query, body) if accepted else [])
                return out
        return self.app(environ, start_response)

    @contextmanager
    def counting(self) -> Iterator[Tally]:
        self.tally = Tally()
        try:
            yield self.tally
        finally:
            self.tally = None

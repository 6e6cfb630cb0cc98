"""A local stand-in for the MLflow REST API of SageMaker's managed tracking servers (tests, bench, demo).

One HTTP server on 127.0.0.1 answers for every tracking server moto_ext/mlflow knows, routed by the request's
`Host` (the host of the server's TrackingServerUrl, `t-….REGION.experiments.sagemaker.aws`), as AWS serves each
at its own host. `serving()` points the reaper's connection (reaper.kinds.mlflow.tracking_api.CONNECT) here,
plain HTTP to this port, and nothing else: the host check, the SigV4 signing, the deadlines and the parsing
run as they do against AWS.

What it checks, as AWS does: every request carries SigV4 (`Authorization: AWS4-HMAC-SHA256 Credential=…`) for
service `sagemaker-mlflow` in the server's region, and its signature is recomputed with the test credentials
(by access key id: SECRETS); anything else is HTTP 403 ("Credential should be scoped to correct service"). A server
not running answers 503. Requests are counted in `requests` (host, path).

What it serves, from the MLflow REST API reference (https://mlflow.org/docs/latest/api_reference/rest-api.html):
- POST /api/2.0/mlflow/experiments/search: `experiments` [{experiment_id, name, lifecycle_stage, creation_time,
  last_update_time}] (milliseconds), `max_results`, `page_token`/`next_page_token`, `order_by` "last_update_time DESC";
- POST /api/2.0/mlflow/runs/search: `experiment_ids` (required), `filter` (only "attributes.status = 'X'"),
  `order_by` "attributes.start_time DESC" / "attributes.end_time DESC" (runs with no end_time last), `max_results`:
  `runs` [{info: {run_id, experiment_id, status, start_time, end_time}}].
A server's `behaviour` (set with `misbehave`) makes it refuse (403), fail (500), hang past the reader's
timeout, or redirect to another host (302), as a test needs.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from reaper.aws.jupyter_http import Session
from reaper.kinds.mlflow import tracking_api
from reaper_devkit.local_aws import FAKE_ENV
from reaper_devkit.moto_ext.mlflow import RUNNING, FakeTrackingServer, _backends, store

# the kit's credentials by access key id: tests/conftest.py's, moto's mock_aws's, and the local account's (local_aws)
SECRETS = {"testing": "testing", "FOOBARKEY": "FOOBARSECRET", FAKE_ENV["AWS_ACCESS_KEY_ID"]: FAKE_ENV["AWS_SECRET_ACCESS_KEY"]}
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request, "
    r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$"
)


def _ms(when: datetime | None) -> int | None:
    return None if when is None else int(when.astimezone(UTC).timestamp() * 1000)


def _signed(handler: BaseHTTPRequestHandler, host: str, body: bytes, region: str) -> bool:
    """Whether the request is SigV4 for sagemaker-mlflow in `region`, its signature right for the test credentials."""
    found = _AUTH.match(handler.headers.get("Authorization", ""))
    if not found or found.group(4) != "sagemaker-mlflow" or found.group(3) != region or found.group(1) not in SECRETS:
        return False
    signed = found.group(5).split(";")
    if "host" not in signed or "x-amz-date" not in signed:
        return False
    headers = {h: (host if h == "host" else handler.headers.get(h, "")) for h in signed}
    request = AWSRequest(method=handler.command, url=f"https://{host}{handler.path}", data=body, headers=headers)
    request.context["timestamp"] = handler.headers.get("X-Amz-Date", "")
    auth = SigV4Auth(Credentials(found.group(1), SECRETS[found.group(1)]), "sagemaker-mlflow", region)
    expected: str = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    return expected == found.group(6)


def _experiments(server: FakeTrackingServer, params: dict[str, Any]) -> dict[str, Any]:
    rows = [
        {
            "experiment_id": str(i),
            "name": name,
            "lifecycle_stage": "active",
            "creation_time": _ms(server.created.replace(tzinfo=UTC)),
            "last_update_time": _ms(server.experiment_updated.get(name) or server.created.replace(tzinfo=UTC)),
        }
        for i, name in enumerate(server.experiments)
    ]
    rows.sort(key=lambda r: r["last_update_time"] or 0, reverse=True)
    size, first = int(params.get("max_results") or 1000), int(params.get("page_token") or 0)
    later = {"next_page_token": str(first + size)} if first + size < len(rows) else {}
    return {"experiments": rows[first : first + size], **later}


def _runs(server: FakeTrackingServer, params: dict[str, Any]) -> dict[str, Any]:
    ids = params.get("experiment_ids")
    if not ids:
        raise ValueError("experiment_ids is required")
    names = {str(i): n for i, n in enumerate(server.experiments)}
    runs = [r for r in server.runs if any(names.get(i) == r["experiment"] for i in ids)]
    wanted = re.fullmatch(r"attributes\.status = '([A-Z]+)'", params.get("filter") or "")
    if params.get("filter") and not wanted:
        raise ValueError("filter not supported by the stand-in")
    runs = [r for r in runs if wanted is None or r["status"] == wanted.group(1)]
    for order in params.get("order_by") or []:
        key = order.split(".")[1].split()[0]  # start_time / end_time
        runs.sort(key=lambda r: (r.get(key) is not None, r.get(key) or datetime.min.replace(tzinfo=UTC)), reverse=True)
    size = int(params.get("max_results") or 1000)
    out = [
        {
            "info": {
                "run_id": r["run_id"],
                "experiment_id": next(i for i, n in names.items() if n == r["experiment"]),
                "status": r["status"],
                "start_time": _ms(r.get("start_time")),
                **({"end_time": _ms(r["end_time"])} if r.get("end_time") else {}),
            }
        }
        for r in runs[:size]
    ]
    return {"runs": out}


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the reader opens up to 40 connections at once (tracking_api.WORKERS)
    daemon_threads = True


class FakeMlflowApi:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.behaviour: dict[str, str] = {}  # server name -> refuse | fail | hang | redirect
        self.hang_seconds = 30.0
        self._lock = threading.Lock()
        self._by_host: dict[str, FakeTrackingServer] = {}
        self.httpd = _Server(("127.0.0.1", 0), self._handler())
        self.port = self.httpd.server_address[1]

    def misbehave(self, name: str, how: str) -> None:
        self.behaviour[name] = how

    def server_at(self, host: str) -> FakeTrackingServer | None:
        found = self._by_host.get(host)
        if found is not None and found.host == host and any(found is s for b in _backends() for s in store(b).values()):
            return found
        self._by_host = {s.host: s for b in _backends() for s in store(b).values()}
        return self._by_host.get(host)

    def _answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, Any], dict[str, str]]:
        host = handler.headers.get("Host", "")
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        with self._lock:
            self.requests.append((host, handler.path))
        server = self.server_at(host)
        if server is None:
            return 404, {"error_code": "ENDPOINT_NOT_FOUND"}, {}
        if not _signed(handler, host, body, server.arn.split(":")[3]):
            return 403, {"message": "Credential should be scoped to correct service: 'sagemaker-mlflow'."}, {}
        how = self.behaviour.get(server.name)
        if how == "refuse":
            return 403, {"message": f"not authorized to perform: sagemaker-mlflow:* on {server.arn} with an explicit deny"}, {}
        if how == "fail":
            return 500, {"error_code": "INTERNAL_ERROR"}, {}
        if how == "redirect":
            return 302, {}, {"Location": "https://collector.example.net/api/2.0/mlflow/runs/search"}
        if how == "hang":
            time.sleep(self.hang_seconds)
        if server.status not in RUNNING:
            return 503, {"message": f"tracking server is {server.status}"}, {}
        params = json.loads(body or b"{}")
        try:
            if handler.path == tracking_api.EXPERIMENTS:
                return 200, _experiments(server, params), {}
            if handler.path == tracking_api.RUNS:
                return 200, _runs(server, params), {}
        except ValueError as exc:
            return 400, {"error_code": "INVALID_PARAMETER_VALUE", "message": str(exc)}, {}
        return 404, {"error_code": "ENDPOINT_NOT_FOUND"}, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                status, payload, headers = api._answer(self)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the reader cut the connection at its deadline

            do_GET = do_POST  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """Quiet: the stand-in's requests are counted by the tests, not printed on stderr."""

        return Handler

    def connect(self, host: str, session: Session) -> http.client.HTTPConnection:
        """The reaper's connection, plain HTTP to this stand-in (the request's Host stays the server's)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port)
        conn._create_connection = session.connect  # type: ignore[attr-defined]
        return conn

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def serving() -> Iterator[FakeMlflowApi]:
    api = FakeMlflowApi()
    thread = threading.Thread(target=api.httpd.serve_forever, name="fake-mlflow-api", daemon=True)
    thread.start()
    before = tracking_api.CONNECT
    tracking_api.CONNECT = api.connect
    try:
        yield api
    finally:
        tracking_api.CONNECT = before
        api.close()
        thread.join(timeout=5)

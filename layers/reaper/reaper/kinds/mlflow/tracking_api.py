"""A tracking server's own MLflow REST API, read-only, for its most recent run activity (MlflowReads=on).

Where: the server's `TrackingServerUrl` (DescribeMlflowTrackingServer), and only there. The URL must be
https on SageMaker's MLflow domain for the server's own region (`[label.]REGION.experiments.sagemaker.aws`,
the host the sagemaker-mlflow plugin and DescribeMlflowTrackingServer name), on the default port, with no
userinfo: anything else is refused before a byte is sent (`mlflow-api-off-host`). No redirect is ever
followed: the MLflow REST API answers JSON, and a 3xx (to another host or not) makes the server unknown.

How: each request is signed with SigV4 for service `sagemaker-mlflow` in the server's region (botocore's
SigV4Auth, as the sagemaker-mlflow plugin signs them), with the function's own credentials; IAM authorizes
it as `sagemaker-mlflow:SearchExperiments` / `sagemaker-mlflow:SearchRuns` on the tracking server's ARN
(docs/aws-assumptions.md, "MLflow tracking servers: evidence of use").

What: POST api/2.0/mlflow/experiments/search (up to MAX_EXPERIMENT_PAGES pages of PAGE, newest update first:
how many and the newest `last_update_time`), then, per RUN_CHUNK experiments, three runs/search of one run
each: the newest `start_time`, the newest `end_time`, and any run with status RUNNING. Searches change
nothing on the server.

Bounds, as the Jupyter reads (aws/jupyter.py, aws/jupyter_http.py): WORKERS servers at a time, each request
REQUEST_TIMEOUT seconds in all (a dripping answer is cut at its deadline), a BUDGET for every reading of the
sweep (not reached: unknown), and no connection left open when `read_all` returns. Every failure is a
reading with a stable `unknown` code, never an exception and never idleness; its text names the request
and the HTTP status or the exception's type, never a URL, a header or a signature.
"""

from __future__ import annotations

import http.client
import json
import re
import ssl
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from reaper.aws.jupyter import reading_order
from reaper.aws.jupyter_http import Cut, Cutter, Session, WatchedHTTPSConnection
from reaper.kinds.mlflow.model import API_NOT_REACHED, API_OFF_HOST, API_REFUSED, API_UNREACHABLE, API_UNREADABLE, UsageReading

SERVICE = "sagemaker-mlflow"  # the SigV4 service name, and the IAM prefix of the actions it is authorized as
PERMISSIONS = ("sagemaker-mlflow:SearchExperiments", "sagemaker-mlflow:SearchRuns")
WORKERS = 40
REQUEST_TIMEOUT = 10.0  # seconds, each request in all
BUDGET = 90.0  # seconds, every reading of a sweep
PAGE = 1_000  # experiments/search max_results
MAX_EXPERIMENT_PAGES = 5  # more experiments than 5,000: unknown (a bound, not a guess that the rest are idle)
RUN_CHUNK = 100  # experiment ids per runs/search
MAX_BODY = 2_000_000
EXPERIMENTS = "/api/2.0/mlflow/experiments/search"
RUNS = "/api/2.0/mlflow/runs/search"


class Failed(Exception):
    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code, self.text = code, text


@dataclass(frozen=True)
class Target:
    """One running server to read: its name, region and the URL DescribeMlflowTrackingServer gave."""

    name: str
    region: str
    url: str | None


def host_of(url: str | None, region: str) -> str:
    """The host a server's URL names, if it is https on SageMaker's MLflow domain for `region`; else Failed."""
    parts = urlsplit(url or "")
    pattern = rf"(?:[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?\.)?{re.escape(region)}\.experiments\.sagemaker\.aws"
    host = (parts.hostname or "").lower()
    plain = parts.scheme == "https" and parts.port is None and parts.username is None and parts.password is None
    if not (plain and parts.netloc.lower() == host and re.fullmatch(pattern, host)):
        raise Failed(API_OFF_HOST, f"its TrackingServerUrl is not https on {region}.experiments.sagemaker.aws: not requested")
    return host


_TLS = ssl.create_default_context()


def https_connection(host: str, session: Session) -> http.client.HTTPConnection:
    """A verified TLS connection to `host`:443 whose socket the session cuts at its deadline."""
    conn = WatchedHTTPSConnection(host, 443, context=_TLS)
    conn.session, conn.tls = session, _TLS
    conn._create_connection = session.connect  # type: ignore[attr-defined]  # http.client's own hook
    return conn


# How a request reaches the host: TLS to it. The test kit swaps only this for plain HTTP to its local stand-in
# (reaper_devkit.mlflow_api), keeping the host check, the signing, the deadlines and the parsing as they are.
CONNECT: Callable[[str, Session], http.client.HTTPConnection] = https_connection


class Signer:
    """SigV4 for `sagemaker-mlflow` with frozen credentials (read once per sweep)."""

    def __init__(self, credentials: Any) -> None:
        self.credentials = credentials

    def headers(self, host: str, region: str, path: str, body: bytes) -> dict[str, str]:
        request = AWSRequest(method="POST", url=f"https://{host}{path}", data=body, headers={"Content-Type": "application/json"})
        SigV4Auth(self.credentials, SERVICE, region).add_auth(request)
        return {**dict(request.headers.items()), "Host": host, "Accept": "application/json"}


def _post(session: Session, signer: Signer, host: str, region: str, path: str, body: dict[str, Any]) -> Any:
    what = f"POST {path.rsplit('/', 2)[-2]}/search"
    data = json.dumps(body).encode()
    conn: http.client.HTTPConnection | None = None
    try:
        session.begin()  # the budget's end refuses it (Cut): not reached
        conn = CONNECT(host, session)
        conn.request("POST", path, body=data, headers=signer.headers(host, region, path, data))
        resp = conn.getresponse()
        status, payload = resp.status, resp.read(MAX_BODY + 1)
        if session.expired():
            raise _late(session, what)
    except (OSError, http.client.HTTPException, Cut) as exc:
        if session.expired():
            raise _late(session, what) from None
        raise Failed(API_UNREACHABLE, f"{what}: {type(exc).__name__}") from None
    finally:
        if conn is not None:
            conn.close()
        session.end()
    return _answer(what, status, payload)


def _answer(what: str, status: int, payload: bytes) -> Any:
    if 300 <= status < 400:
        raise Failed(API_OFF_HOST, f"{what}: HTTP {status}, a redirect: not followed")
    if status in (401, 403):
        action = "SearchRuns" if "runs" in what else "SearchExperiments"
        raise Failed(API_REFUSED, f"{what}: HTTP {status}: sagemaker-mlflow:{action} refused")
    if status != 200:
        raise Failed(API_UNREACHABLE, f"{what}: HTTP {status}")
    if len(payload) > MAX_BODY:
        raise Failed(API_UNREADABLE, f"{what}: answer larger than {MAX_BODY} bytes")
    try:
        found = json.loads(payload)
    except ValueError:
        raise Failed(API_UNREADABLE, f"{what}: not JSON") from None
    if not isinstance(found, dict):
        raise Failed(API_UNREADABLE, f"{what}: not the MLflow REST API's model")
    return found


def _late(session: Session, what: str) -> Failed:
    if session.cutter.closed or session.deadline >= session.cutter.end:
        return Failed(API_NOT_REACHED, f"{what}: the sweep's time for MLflow reads ended first")
    return Failed(API_UNREACHABLE, f"{what}: no whole answer within {session.timeout:.0f} s")


def _ms(value: Any, what: str) -> datetime | None:
    """An MLflow time (int64 milliseconds since the epoch, as a number or a digit string); None when absent."""
    if value is None:
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if type(value) is not int or value < 0:
        raise Failed(API_UNREADABLE, f"{what} is not a time in milliseconds")
    return datetime.fromtimestamp(value / 1000, UTC)


def _list(answer: dict[str, Any], key: str, what: str) -> list[dict[str, Any]]:
    items = answer.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise Failed(API_UNREADABLE, f"{what}: `{key}` is not a list of objects")
    return items


def _experiments(session: Session, signer: Signer, host: str, region: str) -> tuple[list[str], datetime | None]:
    ids: list[str] = []
    newest: datetime | None = None
    token: str | None = None
    for _ in range(MAX_EXPERIMENT_PAGES):
        body: dict[str, Any] = {"max_results": PAGE, "order_by": ["last_update_time DESC"], "view_type": "ALL"}
        answer = _post(session, signer, host, region, EXPERIMENTS, {**body, **({"page_token": token} if token else {})})
        for e in _list(answer, "experiments", "experiments/search"):
            if not isinstance(e.get("experiment_id"), str):
                raise Failed(API_UNREADABLE, "an experiment without experiment_id")
            ids.append(e["experiment_id"])
            stamps = [s for s in (_ms(e.get(k), f"an experiment's {k}") for k in ("last_update_time", "creation_time")) if s]
            newest = max([newest, *stamps] if newest else stamps, default=None)
        token = answer.get("next_page_token") or None
        if token is None:
            return ids, newest
    raise Failed(API_UNREADABLE, f"more than {PAGE * MAX_EXPERIMENT_PAGES:,} experiments: not all read")


def _newest_run(session: Session, signer: Signer, host: str, region: str, ids: list[str], extra: dict[str, Any]) -> dict[str, Any] | None:
    body = {"experiment_ids": ids, "max_results": 1, "run_view_type": "ALL", **extra}
    runs = _list(_post(session, signer, host, region, RUNS, body), "runs", "runs/search")
    if not runs:
        return None
    info = runs[0].get("info")
    if not isinstance(info, dict) or not isinstance(info.get("run_id"), str):
        raise Failed(API_UNREADABLE, "a run without info.run_id")
    return info


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return max(a, b) if a and b else a or b


def read_one(target: Target, signer: Signer, session: Session) -> UsageReading:
    """One server's reading (its figures, or why not); never raises."""
    try:
        if session.cutter.closed:
            raise Failed(API_NOT_REACHED, "the sweep's time for MLflow reads ended before this one started")
        host = host_of(target.url, target.region)
        ids, updated = _experiments(session, signer, host, target.region)
        reading = UsageReading(experiments=len(ids), last_experiment_update=updated)
        for i in range(0, len(ids), RUN_CHUNK):
            chunk = ids[i : i + RUN_CHUNK]
            started = _newest_run(session, signer, host, target.region, chunk, {"order_by": ["attributes.start_time DESC"]})
            ended = _newest_run(session, signer, host, target.region, chunk, {"order_by": ["attributes.end_time DESC"]})
            running = _newest_run(session, signer, host, target.region, chunk, {"filter": "attributes.status = 'RUNNING'"})
            reading = replace(
                reading,
                last_run_start=_latest(reading.last_run_start, _ms((started or {}).get("start_time"), "a run's start_time")),
                last_run_end=_latest(reading.last_run_end, _ms((ended or {}).get("end_time"), "a run's end_time")),
            )
            if running is not None and reading.running_run is None:
                since = _ms(running.get("start_time"), "a run's start_time")
                reading = replace(reading, running_run=str(running["run_id"]), running_since=since)
        return reading
    except Failed as exc:
        return UsageReading(unreadable=exc.text, unknown=exc.code)
    except Exception as exc:  # noqa: BLE001 - any failure is unknown; its type only (a text may hold a header)
        return UsageReading(unreadable=f"reading its MLflow API failed ({type(exc).__name__})", unknown=API_UNREACHABLE)


def read_all(
    targets: Sequence[Target],
    credentials: Any,
    *,
    workers: int = WORKERS,
    timeout: float = REQUEST_TIMEOUT,
    budget: float = BUDGET,
    turn: int = 0,
) -> dict[str, UsageReading]:
    """{server name: its reading}, for every target; when it returns no reading runs any more."""
    if not targets:
        return {}
    if credentials is None:
        why = UsageReading(unreadable="no AWS credentials to sign its MLflow API requests with", unknown=API_REFUSED)
        return {t.name: why for t in targets}
    signer = Signer(credentials)
    by_name = {t.name: t for t in targets}
    cutter = Cutter(time.monotonic() + budget).start()
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(targets))), thread_name_prefix="mlflow-read")
    try:
        futures: dict[Future[UsageReading], str] = {
            pool.submit(read_one, by_name[name], signer, Session(cutter, timeout)): name for name in reading_order(list(by_name), turn)
        }
        done, _ = wait(futures, timeout=budget)
    finally:
        cutter.close()
        pool.shutdown(wait=True, cancel_futures=True)
    late = UsageReading(unreadable=f"its MLflow API was not read within the sweep's {budget:.0f} s for them", unknown=API_NOT_REACHED)
    return {name: (future.result() if future in done else late) for future, name in futures.items()}

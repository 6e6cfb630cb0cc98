"""Reading a Jupyter server that AWS hosts, through the presigned URL AWS gives for it (JupyterReads=on).

The way the console's "Open JupyterLab" reaches it: a presigned URL (a notebook instance's from
CreatePresignedNotebookInstanceUrl, a Studio app's from CreatePresignedDomainUrl; each kind's `Door`
asks for it), then the URL followed as a browser follows it (its redirects, with the cookies they set,
in a cookie jar of this one reading, and no JavaScript run), then three read-only GETs of the Jupyter
Server REST API under the server's base URL:

- api/status: `started` and `connections` (its `last_activity` also moves with REST API requests,
  an open browser tab's polling included, so it is neither activity nor idleness here);
- api/kernels: each kernel's `execution_state`, `last_activity`, `connections`;
- api/terminals: each terminal's `last_activity` (404 when the server has no terminals enabled).

api/status does not count itself as activity, and `no_track_activity` keeps the other two reads out
of the server's API activity; a kernel's or terminal's `last_activity` moves only with what it sends,
never with a REST read (docs/jupyter-reads.md, docs/aws-assumptions.md).

The base URL: a notebook instance serves Jupyter at the root of the origin the hop lands on. A Studio
app serves it under a path (the app's), so its URL asks to land on `api/status` itself (LandingUri):
the base is the landing URL less that path, and a hop that lands anywhere else (a Studio page, the
sign-in page) is unreadable and nothing more is requested.

Safety: GETs only. The presigned URL, the URL the hop lands on and the cookies live in this module's
locals for one reading and are never logged, stored, returned or put in an exception's text: a failure
is described by its HTTP status (of the presigned URL's origin only) or its exception type only. Every failure is a reading with a stable
`unknown` code, never an exception out of `read_all`, and never idleness.

One host: the hop and the GETs stay on the presigned URL's origin (scheme, host, port). A redirect elsewhere,
which the user's own Jupyter server can send, is never followed: the resource is unknown
("jupyter-off-host"), and no status or answer of another host is read (aws/jupyter_http.py).

Concurrency: WORKERS readings at a time (the clients' pool holds as many connections: aws/clients.py), each
request (with its redirects) given REQUEST_TIMEOUT seconds in all, however slowly a server sends, and a
BUDGET for all of them: resources not read by then are unknown ("jupyter-not-reached"), so a slow account
cannot stall a sweep. A reading is one presign call and about five requests, one after another: at 0.5 s
each, 3 s, so 40 at a time reach 1,200 servers in the 90 s (10 at a time reached 340:
bench/jupyter_reach.py, docs/performance.md). The threads mostly wait on the network; 40 of them and their
connections stay far under Lambda's 1,024 file descriptors. When `read_all` returns, every connection is
closed and every reader thread has returned.

Order: the keys sorted, then rotated by the golden ratio of the sweep's turn (its minute), so a budget
that reaches only part of them does not leave the same ones unread every sweep: while a sweep reaches at
least 62 % of them (1/phi of the circle), no resource is unread in two sweeps in a row, and below that
none waits more than a few sweeps.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict
from urllib.parse import urlsplit

from botocore.exceptions import ClientError

from reaper.aws import jupyter_http
from reaper.aws.faults import error_code
from reaper.aws.jupyter_http import Cut, Cutter, OffOrigin, Session, origin
from reaper.core.jupyter_verdict import JupyterKernel, JupyterReading

WORKERS = 40  # readings at a time: 1,000 servers reached in BUDGET at 0.5 s a request (docs/performance.md)
REQUEST_TIMEOUT = 10.0  # seconds, each request with its redirects, in all (not per read)
BUDGET = 90.0  # seconds for every reading of a sweep
PHI = 0.6180339887498949  # the golden ratio's fraction: successive turns start far apart on the circle
MAX_BODY = 2_000_000  # bytes of one API answer

# unknown codes (stable: `reaper coverage` groups by them)
REFUSED = "url-refused"
UNREACHABLE = "jupyter-unreachable"
UNREADABLE = "jupyter-unreadable"
NOT_REACHED = "jupyter-not-reached"
OFF_ORIGIN = "jupyter-off-host"
OFF_ORIGIN_WHY = "an expired URL's sign-in page, or a redirect by what serves the notebook or app"
DENIED_CODES = ("AccessDenied", "AccessDeniedException")


@dataclass(frozen=True)
class Door:
    """How one kind reaches its Jupyter servers: the API that presigns the URL, what the URL opens, what
    fixes a refusal, and the path the URL lands on under the server's base URL (None: the origin's root)."""

    api: str  # e.g. "CreatePresignedNotebookInstanceUrl"
    what: str  # e.g. "the notebook's presigned URL"
    refused_fix: str
    landing: str | None = None  # e.g. "api/status" (Studio's LandingUri)


class _NoPresignedUrl(logging.Filter):
    """Drops botocore's DEBUG records that would carry a presigned URL: its parser logs every response
    body ("Response body: ... AuthorizedUrl ...") when DEBUG logging is on."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return "AuthorizedUrl" not in text and "authToken" not in text


_FILTER = _NoPresignedUrl()
for _name in ("botocore.parsers", "botocore.endpoint", "botocore.hooks", "botocore.retryhandler", "botocore.retries.standard"):
    if _FILTER not in logging.getLogger(_name).filters:
        logging.getLogger(_name).addFilter(_FILTER)


class Failed(Exception):
    """A reading that failed, with a text that holds no URL, token or cookie."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code, self.text = code, text


class PresignedUrlAnswer(TypedDict, total=False):
    """CreatePresignedDomainUrl / CreatePresignedNotebookInstanceUrl answer with AuthorizedUrl
    (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreatePresignedDomainUrl.html)."""

    AuthorizedUrl: str


def presigned(door: Door, call: Callable[[], PresignedUrlAnswer]) -> str:
    """The URL `call` (the door's API) answers; a refusal is REFUSED with the door's fix, any other
    failure UNREACHABLE, by its error code only."""
    try:
        answer = call()
    except ClientError as exc:
        code = error_code(exc)
        if code in DENIED_CODES:
            raise Failed(REFUSED, f"{door.api}: {code}: {door.refused_fix}") from None
        raise Failed(UNREACHABLE, f"{door.api} failed ({code})") from None
    url = answer.get("AuthorizedUrl")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("https", "http"):
        raise Failed(UNREADABLE, f"{door.api} answered no http(s) URL")
    return url


def read_all(
    door: Door,
    presigns: Mapping[str, Callable[[], str]],
    *,
    workers: int = WORKERS,
    timeout: float = REQUEST_TIMEOUT,
    budget: float = BUDGET,
    turn: int = 0,
) -> dict[str, JupyterReading]:
    """{key: its reading}, for every key of `presigns` (a reading that failed or was not reached says why),
    read in `reading_order(keys, turn)`. When it returns, no reading runs any more: at the budget's end every
    connection still open is cut and every reader thread has returned (aws/jupyter_http.py)."""
    if not presigns:
        return {}
    cutter = Cutter(time.monotonic() + budget).start()
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(presigns))), thread_name_prefix="jupyter-read")
    try:
        futures: dict[Future[JupyterReading], str] = {
            pool.submit(read_one, door, presigns[key], timeout, cutter): key for key in reading_order(list(presigns), turn)
        }
        done, _ = wait(futures, timeout=budget)
    finally:
        cutter.close()  # every connection still open is shut down, and no new one opens
        pool.shutdown(wait=True, cancel_futures=True)  # so the readers still running return now
    late = JupyterReading(unreadable=f"its Jupyter server was not read within the sweep's {budget:.0f} s for them", unknown=NOT_REACHED)
    return {key: (future.result() if future in done else late) for future, key in futures.items()}


def reading_order(keys: list[str], turn: int) -> list[str]:
    """The keys sorted, then started at the golden-ratio point of `turn` (stable for a turn, moving by
    about 62 % of the circle from one turn to the next)."""
    ordered = sorted(keys)
    start = int((turn * PHI) % 1.0 * len(ordered))
    return ordered[start:] + ordered[:start]


def read_one(door: Door, presign: Callable[[], str], timeout: float = REQUEST_TIMEOUT, cutter: Cutter | None = None) -> JupyterReading:
    """One server's reading; never raises. Without `cutter` (one reading alone), its own, for five requests'
    time (the hop and the three GETs, each within `timeout`)."""
    own = cutter is None
    cutter = cutter or Cutter(time.monotonic() + timeout * 5).start()
    try:
        return _read(door, presign, Session(cutter, timeout))
    except Failed as exc:
        return JupyterReading(unreadable=exc.text, unknown=exc.code)
    except Exception as exc:  # noqa: BLE001 - any failure is unknown; the type only (an exception's text may hold the URL)
        return JupyterReading(unreadable=f"reading its Jupyter server failed ({type(exc).__name__})", unknown=UNREACHABLE)
    finally:
        if own:
            cutter.close()


def _read(door: Door, presign: Callable[[], str], session: Session) -> JupyterReading:
    if session.cutter.closed:
        raise Failed(NOT_REACHED, "the sweep's time for Jupyter reads ended before this one started")
    url = presign()
    start = origin(url)
    if start is None:
        raise Failed(UNREADABLE, f"{door.api} answered no plain http(s) URL")
    opener = jupyter_http.opener(start, session)
    base = _hop(opener, session, door, url)
    status = _get(opener, session, base, "api/status", door)
    kernels = _get(opener, session, base, "api/kernels?no_track_activity=1", door)
    terminals = _get(opener, session, base, "api/terminals?no_track_activity=1", door, missing=[])
    return parse(status, kernels, terminals)


def _open(opener: urllib.request.OpenerDirector, session: Session, url: str, what: str, door: Door) -> tuple[str, bytes]:
    """(the final URL, the body) of a GET and its redirects within the presigned URL's origin, all within the
    request's deadline, or Failed with the HTTP status (of that origin only) or the exception's type."""
    session.begin()
    try:
        request = urllib.request.Request(url, method="GET", headers={"Accept": "application/json"})
        with opener.open(request, timeout=session.timeout) as resp:
            final, body = str(resp.geturl()), resp.read(MAX_BODY + 1)
        if session.expired():  # cut at the deadline: what arrived may look whole (headers end at EOF) but is not
            raise _late(session, what)
        return final, body
    except OffOrigin:
        raise Failed(OFF_ORIGIN, f"{what} redirected away from its own host ({OFF_ORIGIN_WHY}): not followed") from None
    except urllib.error.HTTPError as exc:
        code = exc.code
        exc.close()
        if code in (401, 403):
            raise Failed(REFUSED, f"{what}: HTTP {code}: {door.refused_fix}") from None
        raise Failed(UNREACHABLE, f"{what}: HTTP {code}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException, Cut) as exc:
        if session.expired():
            raise _late(session, what) from None
        raise Failed(UNREACHABLE, f"{what}: {type(exc).__name__}") from None
    finally:
        session.end()


def _late(session: Session, what: str) -> Failed:
    """A request cut at its deadline: its own (unreachable), or the budget's end (not reached)."""
    if session.cutter.closed or session.deadline >= session.cutter.end:
        return Failed(NOT_REACHED, f"{what}: the sweep's time for Jupyter reads ended first")
    return Failed(UNREACHABLE, f"{what}: no whole answer within {session.timeout:.0f} s")


def _hop(opener: urllib.request.OpenerDirector, session: Session, door: Door, url: str) -> str:
    """Follow the presigned URL; the Jupyter server's base URL (ending in "/") is where the hop lands, on the
    presigned URL's own origin (redirects elsewhere were refused on the way)."""
    final, _ = _open(opener, session, url, door.what, door)
    parts = urlsplit(final)
    if door.landing is None:
        return f"{parts.scheme}://{parts.netloc}/"
    if not parts.path.endswith("/" + door.landing):
        raise Failed(UNREADABLE, f"{door.what} did not land on the app's Jupyter server (a Studio page or the sign-in page?)")
    return f"{parts.scheme}://{parts.netloc}{parts.path[: -len(door.landing)]}"


def _get(opener: urllib.request.OpenerDirector, session: Session, base: str, path: str, door: Door, missing: Any = None) -> Any:
    what = f"GET {path.split('?')[0]}"
    try:
        _, body = _open(opener, session, base + path, what, door)
    except Failed as exc:
        if missing is not None and exc.text.startswith(f"{what}: HTTP 404"):
            return missing  # no terminals enabled on this server: there are none
        raise
    if len(body) > MAX_BODY:
        raise Failed(UNREADABLE, f"{what}: answer larger than {MAX_BODY} bytes")
    try:
        return json.loads(body)
    except ValueError:
        raise Failed(UNREADABLE, f"{what}: not JSON (a sign-in page?)") from None


def _stamp(value: Any, what: str) -> datetime:
    stamp = _iso(value)
    if stamp is None or stamp.tzinfo is None:
        raise Failed(UNREADABLE, f"{what} is not an ISO 8601 UTC time")
    return stamp


def _iso(value: Any) -> datetime | None:
    """An ISO 8601 string as Jupyter writes it (`...Z`), or None for anything else."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _count(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise Failed(UNREADABLE, f"{what} is not a count")
    return value


def parse(status: Any, kernels: Any, terminals: Any) -> JupyterReading:
    """The reading from the three answers, each held to the Jupyter Server REST API's models."""
    if not isinstance(status, dict) or not isinstance(kernels, list) or not isinstance(terminals, list):
        raise Failed(UNREADABLE, "the Jupyter server's answers are not the documented models")
    found: list[JupyterKernel] = []
    for k in kernels:
        if not isinstance(k, dict) or not isinstance(k.get("execution_state"), str):
            raise Failed(UNREADABLE, "a kernel without execution_state")
        found.append(
            JupyterKernel(
                k["execution_state"],
                _stamp(k.get("last_activity"), "a kernel's last_activity"),
                _count(k.get("connections"), "a kernel's connections"),
            )
        )
    terms = tuple(_stamp(t.get("last_activity") if isinstance(t, dict) else None, "a terminal's last_activity") for t in terminals)
    return JupyterReading(
        started=_stamp(status.get("started"), "/api/status started"),
        kernels=tuple(found),
        terminals=terms,
        connections=_count(status.get("connections"), "/api/status connections"),
    )

"""The Jupyter server's own record of activity, for running notebooks without the agent (JupyterReads=on).

The way the console's "Open JupyterLab" reaches it: CreatePresignedNotebookInstanceUrl (the shortest
session the API allows, 1,800 s), then the URL followed as a browser follows it (its redirects, with
the cookies they set, in a cookie jar of this one reading), then three read-only GETs of the Jupyter
Server REST API on the origin the hop lands on:

- /api/status: `started` and `connections` (its `last_activity` also moves with REST API requests,
  an open browser tab's polling included, so it is neither activity nor idleness here);
- /api/kernels: each kernel's `execution_state`, `last_activity`, `connections`;
- /api/terminals: each terminal's `last_activity` (404 when the server has no terminals enabled).

/api/status does not count itself as activity, and `no_track_activity` keeps the other two reads out
of the server's API activity; a kernel's or terminal's `last_activity` moves only with what it sends,
never with a REST read (docs/jupyter-reads.md, docs/aws-assumptions.md).

Safety: GETs only. The presigned URL, the URL the hop lands on and the cookies live in this module's
locals for one reading and are never logged, stored, returned or put in an exception's text: a failure
is described by its HTTP status or its exception type only. Every failure is a reading with a stable
`unknown` code, never an exception out of `read_all`, and never idleness.

Concurrency: WORKERS readings at a time (botocore's default pool is 10 connections per client), each
request with a REQUEST_TIMEOUT, and a BUDGET for all of them: notebooks not read by then are unknown
("jupyter-not-reached"), so 1,000 notebooks fit a sweep and a slow account cannot stall it.
"""

from __future__ import annotations

import json
import logging
import ssl
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import datetime
from http.cookiejar import CookieJar
from typing import Any
from urllib.parse import urlsplit

from botocore.exceptions import ClientError

from reaper.aws.faults import error_code
from reaper.kinds.notebook.model import JupyterKernel, JupyterReading

PERMISSION = "sagemaker:CreatePresignedNotebookInstanceUrl"
SESSION_SECONDS = 1_800  # SessionExpirationDurationInSeconds: 1,800 to 43,200 (API_CreatePresignedNotebookInstanceUrl)
WORKERS = 10
REQUEST_TIMEOUT = 10.0  # seconds, each request
BUDGET = 90.0  # seconds for every reading of a sweep
MAX_BODY = 2_000_000  # bytes of one API answer

# unknown codes (stable: `reaper coverage` groups by them)
REFUSED = "url-refused"
UNREACHABLE = "jupyter-unreachable"
UNREADABLE = "jupyter-unreadable"
NOT_REACHED = "jupyter-not-reached"

REFUSED_FIX = (
    "the account refuses the reaper the notebook's URL (CreatePresignedNotebookInstanceUrl or the URL itself is denied, "
    "e.g. by an aws:SourceIp or aws:sourceVpce condition): exclude the notebook function's role from that Deny "
    "(aws:PrincipalArn), or attach the activity agent"
)


class _NoPresignedUrl(logging.Filter):
    """Drops botocore's DEBUG records that would carry the presigned URL: its parser logs every response
    body ("Response body: ... AuthorizedUrl ...") when DEBUG logging is on."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return "AuthorizedUrl" not in text and "authToken" not in text


_FILTER = _NoPresignedUrl()
for _name in ("botocore.parsers", "botocore.endpoint", "botocore.hooks", "botocore.retryhandler", "botocore.retries.standard"):
    if _FILTER not in logging.getLogger(_name).filters:
        logging.getLogger(_name).addFilter(_FILTER)


class _Failed(Exception):
    """A reading that failed, with a text that holds no URL, token or cookie."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code, self.text = code, text


def read_all(
    sagemaker: Any, names: Sequence[str], *, workers: int = WORKERS, timeout: float = REQUEST_TIMEOUT, budget: float = BUDGET
) -> dict[str, JupyterReading]:
    """{notebook: its reading}, for every name (a reading that failed or was not reached says why)."""
    if not names:
        return {}
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(names))), thread_name_prefix="jupyter-read")
    futures: dict[Future[JupyterReading], str] = {pool.submit(read_one, sagemaker, name, timeout): name for name in names}
    done, _ = wait(futures, timeout=budget)
    pool.shutdown(wait=False, cancel_futures=True)  # those still running end within their own timeouts
    late = JupyterReading(unreadable=f"its Jupyter server was not read within the sweep's {budget:.0f} s for them", unknown=NOT_REACHED)
    return {name: (future.result() if future in done else late) for future, name in futures.items()}


def read_one(sagemaker: Any, name: str, timeout: float = REQUEST_TIMEOUT) -> JupyterReading:
    """One notebook's reading; never raises."""
    try:
        return _read(sagemaker, name, timeout)
    except _Failed as exc:
        return JupyterReading(unreadable=exc.text, unknown=exc.code)
    except Exception as exc:  # noqa: BLE001 - any failure is unknown; the type only (an exception's text may hold the URL)
        return JupyterReading(unreadable=f"reading its Jupyter server failed ({type(exc).__name__})", unknown=UNREACHABLE)


def _read(sagemaker: Any, name: str, timeout: float) -> JupyterReading:
    opener = _opener()
    origin = _hop(opener, _presign(sagemaker, name), timeout)
    status = _get(opener, origin, "/api/status", timeout)
    kernels = _get(opener, origin, "/api/kernels?no_track_activity=1", timeout)
    terminals = _get(opener, origin, "/api/terminals?no_track_activity=1", timeout, missing=[])
    return parse(status, kernels, terminals)


def _presign(sagemaker: Any, name: str) -> str:
    try:
        answer = sagemaker.create_presigned_notebook_instance_url(
            NotebookInstanceName=name, SessionExpirationDurationInSeconds=SESSION_SECONDS
        )
    except ClientError as exc:
        code = error_code(exc)
        if code in ("AccessDenied", "AccessDeniedException"):
            raise _Failed(REFUSED, f"CreatePresignedNotebookInstanceUrl: {code}: {REFUSED_FIX}") from None
        raise _Failed(UNREACHABLE, f"CreatePresignedNotebookInstanceUrl failed ({code})") from None
    url = answer.get("AuthorizedUrl")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("https", "http"):
        raise _Failed(UNREADABLE, "CreatePresignedNotebookInstanceUrl answered no http(s) URL")
    return url


def _opener() -> urllib.request.OpenerDirector:
    """Only what a browser's hop needs: HTTP(S), redirects among http(s) URLs, this reading's own cookies;
    no proxy from the environment, no file: or ftp: URLs."""
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(context=ssl.create_default_context()),
        urllib.request.HTTPCookieProcessor(CookieJar()),
        urllib.request.HTTPRedirectHandler(),
        urllib.request.HTTPErrorProcessor(),
        urllib.request.HTTPDefaultErrorHandler(),  # a status >= 400 raises HTTPError
    ):
        opener.add_handler(handler)
    return opener


def _open(opener: urllib.request.OpenerDirector, url: str, timeout: float, what: str) -> tuple[str, bytes]:
    """(the final URL, the body) of a GET, or _Failed with the HTTP status or the exception's type."""
    try:
        with opener.open(urllib.request.Request(url, method="GET", headers={"Accept": "application/json"}), timeout=timeout) as resp:
            return str(resp.geturl()), resp.read(MAX_BODY + 1)
    except urllib.error.HTTPError as exc:
        code = exc.code
        exc.close()
        if code in (401, 403):
            raise _Failed(REFUSED, f"{what}: HTTP {code}: {REFUSED_FIX}") from None
        raise _Failed(UNREACHABLE, f"{what}: HTTP {code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise _Failed(UNREACHABLE, f"{what}: {type(exc).__name__}") from None


def _hop(opener: urllib.request.OpenerDirector, url: str, timeout: float) -> str:
    """Follow the presigned URL; the origin (scheme://host[:port]) the hop lands on is the Jupyter server's."""
    final, _ = _open(opener, url, timeout, "the notebook's presigned URL")
    parts = urlsplit(final)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise _Failed(UNREADABLE, "the notebook's presigned URL did not land on an http(s) page")
    return f"{parts.scheme}://{parts.netloc}"


def _get(opener: urllib.request.OpenerDirector, origin: str, path: str, timeout: float, missing: Any = None) -> Any:
    what = f"GET {path.split('?')[0]}"
    try:
        _, body = _open(opener, origin + path, timeout, what)
    except _Failed as exc:
        if missing is not None and exc.text.startswith(f"{what}: HTTP 404"):
            return missing  # no terminals enabled on this server: there are none
        raise
    if len(body) > MAX_BODY:
        raise _Failed(UNREADABLE, f"{what}: answer larger than {MAX_BODY} bytes")
    try:
        return json.loads(body)
    except ValueError:
        raise _Failed(UNREADABLE, f"{what}: not JSON (a sign-in page?)") from None


def _stamp(value: Any, what: str) -> datetime:
    stamp = _iso(value)
    if stamp is None or stamp.tzinfo is None:
        raise _Failed(UNREADABLE, f"{what} is not an ISO 8601 UTC time")
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
        raise _Failed(UNREADABLE, f"{what} is not a count")
    return value


def parse(status: Any, kernels: Any, terminals: Any) -> JupyterReading:
    """The reading from the three answers, each held to the Jupyter Server REST API's models."""
    if not isinstance(status, dict) or not isinstance(kernels, list) or not isinstance(terminals, list):
        raise _Failed(UNREADABLE, "the Jupyter server's answers are not the documented models")
    found: list[JupyterKernel] = []
    for k in kernels:
        if not isinstance(k, dict) or not isinstance(k.get("execution_state"), str):
            raise _Failed(UNREADABLE, "a kernel without execution_state")
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

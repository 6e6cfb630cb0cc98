"""The HTTP client of a Jupyter reading (reaper.aws.jupyter): one origin, one deadline per request, and no
connection left open when the readings' budget ends (docs/jupyter-reads.md, docs/safety.md).

One origin. A reading follows redirects only within the origin (scheme, host, port) of the presigned URL
AWS gave for it: CreatePresignedNotebookInstanceUrl's URL is the notebook's own host
(`NAME.notebook.REGION.sagemaker.aws`), CreatePresignedDomainUrl's the domain's. What answers there, behind
the hop, is the user's Jupyter server, which anyone who can open the notebook can change: a redirect to
another host, another port, plain http, or a name with userinfo (`http://good@evil/`) is never requested
(`OffOrigin`), so no answer from elsewhere can be taken for the notebook's, and the reaper sends no request
to a host a user names (inside a VPC, an internal one). The one change allowed is http to https on the
same host at the default ports. A host is compared as ASCII, case-insensitively; anything else in a
redirect's authority (userinfo, percent-encoding, a non-ASCII name) is refused, not normalised.

One deadline per request. A GET and its redirects have `timeout` seconds in all, whatever the server sends
meanwhile (a server dripping a byte a second is cut at the deadline, not at a per-read timeout), and never
past the budget's end. `Cutter` watches every connection the readings open and shuts it down at its
deadline; `close()` shuts down every one still open and refuses new ones, so the threads reading them
return at once (a host name's DNS lookup is the one wait it cannot cut: the resolver's own timeout bounds it).
"""

from __future__ import annotations

import contextlib
import http.client
import re
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable
from http.cookiejar import CookieJar
from typing import Any, NamedTuple
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
_AUTHORITY = re.compile(r"^(?P<host>[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?$")


class OffOrigin(Exception):
    """A redirect away from the presigned URL's origin: not followed. Holds no URL."""


class Cut(Exception):
    """The budget is over: no new connection is opened."""


class Origin(NamedTuple):
    scheme: str
    host: str
    port: int


def origin(url: str) -> Origin | None:
    """(scheme, host, port) of an http(s) URL whose authority is a plain ASCII host and optional port, or None
    (userinfo, percent-encoding, a non-ASCII or empty host, a bad port, another scheme)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    found = _AUTHORITY.match(parts.netloc)
    if scheme not in DEFAULT_PORTS or found is None:
        return None
    port = int(found["port"]) if found["port"] else DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        return None
    return Origin(scheme, found["host"].lower(), port)


def same_origin(start: Origin, url: str) -> bool:
    """Whether `url` stays on `start`: the same scheme, host and port, or http to https on the same host at
    the default ports."""
    there = origin(url)
    if there is None or there.host != start.host:
        return False
    if there == start:
        return True
    return (start.scheme, start.port, there.scheme, there.port) == ("http", 80, "https", 443)


class Cutter:
    """Shuts down every connection of a set of readings at its request's deadline, and all of them at `close()`
    (the budget's end); a connection asked for after `close()` is refused (`Cut`). Its watchdog thread runs
    from `start()` to `close()`."""

    def __init__(self, end: float) -> None:
        self.end = end  # time.monotonic() at which the budget ends
        self.closed = False
        self._cond = threading.Condition()
        self._open: dict[socket.socket, float] = {}
        self._watchdog = threading.Thread(target=self._watch, name="jupyter-read-cutter", daemon=True)

    def start(self) -> Cutter:
        self._watchdog.start()
        return self

    def track(self, sock: socket.socket, deadline: float) -> None:
        with self._cond:
            if self.closed:
                _shut(sock)
                raise Cut
            self._open[sock] = deadline
            self._cond.notify()

    def forget(self, socks: list[socket.socket]) -> None:
        with self._cond:
            for sock in socks:
                self._open.pop(sock, None)

    def close(self) -> None:
        """Shut down every connection still open, refuse new ones, and wait for the watchdog to end."""
        with self._cond:
            self.closed = True
            self._cond.notify()
        if self._watchdog.is_alive():
            self._watchdog.join()

    def _watch(self) -> None:
        with self._cond:
            while not self.closed:
                now = time.monotonic()
                for sock in [s for s, deadline in self._open.items() if deadline <= now]:
                    del self._open[sock]
                    _shut(sock)
                self._cond.wait(min(self._open.values()) - now if self._open else None)
            for sock in self._open:
                _shut(sock)
            self._open.clear()


def _shut(sock: socket.socket) -> None:
    """Shut the connection down under whatever reads it (a TLS socket too: the OS-level call, not TLS's)."""
    with contextlib.suppress(OSError):  # already closed: nothing to cut
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class Session:
    """One reading's connections: each request gets `timeout` seconds in all (never past the cutter's end)."""

    def __init__(self, cutter: Cutter, timeout: float) -> None:
        self.cutter, self.timeout = cutter, timeout
        self.deadline = cutter.end
        self._socks: list[socket.socket] = []

    def begin(self) -> None:
        """A new request (and its redirects): its deadline starts now."""
        if self.cutter.closed:
            raise Cut
        self.deadline = min(time.monotonic() + self.timeout, self.cutter.end)

    def end(self) -> None:
        self.cutter.forget(self._socks)
        self._socks.clear()

    def expired(self) -> bool:
        return self.cutter.closed or time.monotonic() >= self.deadline

    def track(self, sock: socket.socket) -> None:
        self._socks.append(sock)
        self.cutter.track(sock, self.deadline)

    def connect(self, address: tuple[str, int], timeout: Any = None, source_address: Any = None) -> socket.socket:
        """socket.create_connection within the request's deadline, the socket watched by the cutter."""
        left = self.deadline - time.monotonic()
        if left <= 0 or self.cutter.closed:
            raise Cut
        sock = socket.create_connection(address, left, source_address)
        self.track(sock)
        return sock


def _http_connection(session: Session) -> Callable[..., http.client.HTTPConnection]:
    def make(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(*args, **kwargs)
        conn._create_connection = session.connect  # type: ignore[attr-defined]  # http.client's own hook
        return conn

    return make


class WatchedHTTPSConnection(http.client.HTTPSConnection):
    """The TLS socket is watched from before its handshake (a dripped handshake is cut too)."""

    session: Session
    tls: ssl.SSLContext

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        tls = self.tls.wrap_socket(self.sock, server_hostname=self.host, do_handshake_on_connect=False)
        self.sock = tls
        self.session.track(tls)
        tls.do_handshake()


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_http_connection(self.session), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session, self.tls = session, ssl.create_default_context()

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        def make(*args: Any, **kwargs: Any) -> http.client.HTTPSConnection:
            conn = WatchedHTTPSConnection(*args, context=self.tls, **kwargs)
            conn.session, conn.tls = self.session, self.tls
            conn._create_connection = self.session.connect  # type: ignore[attr-defined]
            return conn

        return self.do_open(make, req)


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within `start`; any other is refused before a byte is sent there."""

    def __init__(self, start: Origin) -> None:
        super().__init__()
        self.start = start

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if not same_origin(self.start, newurl):
            fp.close()
            raise OffOrigin
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def opener(start: Origin, session: Session) -> urllib.request.OpenerDirector:
    """Only what a browser's hop needs: HTTP(S) within `start`, this reading's own cookies; no proxy from the
    environment, no file: or ftp: URLs; every connection under `session`'s deadline."""
    built = urllib.request.OpenerDirector()
    for handler in (
        _HTTPHandler(session),
        _HTTPSHandler(session),
        urllib.request.HTTPCookieProcessor(CookieJar()),
        _SameOrigin(start),
        urllib.request.HTTPErrorProcessor(),
        urllib.request.HTTPDefaultErrorHandler(),  # a status >= 400 raises HTTPError
    ):
        built.add_handler(handler)
    return built

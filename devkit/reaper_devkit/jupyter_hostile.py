"""Hostile servers for the Jupyter reader's tests (docs/safety.md, "Jupyter reads: one host, one deadline").

Each is a real HTTP server on 127.0.0.1 (a free port), plain or TLS, that records every request it gets:

- `FakeJupyter` answers the Jupyter Server REST API's three reads with an idle server (started a day ago, no
  kernel, no terminal), or, for the paths a test names, a redirect to the Location it names: what a user who
  controls the notebook's Jupyter server (a server extension, another process on its port) can send.
- `Dripper` answers one byte every `every` seconds for ever (in the status line and headers, or in a body it
  announced as long), until the client goes away: a slow or hostile server the reader must cut.

`tls_files()` makes a self-signed certificate for 127.0.0.1 (a test trusts it with SSL_CERT_FILE), so the
reader's https path is exercised too.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

STARTED = "2026-01-01T00:00:00.000000Z"
IDLE = {
    "/api/status": {"started": STARTED, "last_activity": STARTED, "connections": 0, "kernels": 0},
    "/api/kernels": [],
    "/api/terminals": [],
}


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = 128  # forty readers connecting at once are not left to a SYN retry
    daemon_threads = True


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 in a daemon thread, plain or TLS; `requests` holds (Host, path) of each."""

    scheme = "http"

    def __init__(self, handler: type[BaseHTTPRequestHandler], tls: tuple[str, str] | None = None) -> None:
        self.requests: list[tuple[str, str]] = []
        self.httpd = _HTTPServer(("127.0.0.1", 0), handler)
        self.httpd.owner = self  # type: ignore[attr-defined]
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.port = int(self.httpd.server_address[1])
        self.origin = f"{self.scheme}://127.0.0.1:{self.port}"
        self.stopped = threading.Event()
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def foreign(self) -> list[tuple[str, str]]:
        """The requests whose Host header is not this server's own 127.0.0.1:port (another name for it)."""
        return [(host, path) for host, path in self.requests if host != f"127.0.0.1:{self.port}"]

    def close(self) -> None:
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def owner(self) -> Any:
        return self.server.owner  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return


class FakeJupyter(_Server):
    """An idle Jupyter server's three answers; `redirects[path] = location` answers that path with a 302; each
    answer `delay` seconds after its request (a slow network: the reach bench, bench/jupyter_reach.py)."""

    base = "/"  # where it serves, and its token: so that the kit's PresignedHop can serve it as a notebook's server
    token = "fake-jupyter-token"

    def __init__(self, tls: tuple[str, str] | None = None, delay: float = 0.0) -> None:
        self.redirects: dict[str, str] = {}
        self.delay = delay

        class Handler(_Handler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                owner: FakeJupyter = self.owner
                path = urlsplit(self.path).path
                owner.requests.append((self.headers.get("Host", ""), path))
                if owner.delay:
                    owner.stopped.wait(owner.delay)
                if path in owner.redirects:
                    self._send(302, b"", {"Location": owner.redirects[path]})
                elif path in IDLE:
                    self._send(200, json.dumps(IDLE[path]).encode(), {"Content-Type": "application/json"})
                else:
                    self._send(200, b"<html>a notebook page</html>", {"Content-Type": "text/html"})

            def _send(self, code: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(code)
                for key, value in {**headers, "Content-Length": str(len(body)), "Connection": "close"}.items():
                    self.send_header(key, value.encode().decode("latin-1"))  # a non-ASCII Location goes as UTF-8 bytes
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler, tls)
        self.url = self.origin


class Dripper(_Server):
    """One byte every `every` seconds, for `limit` seconds (so that a reader that never cuts it ends, in a test,
    instead of hanging): in the headers (`where="headers"`) or in the body ("body"). `cut` counts the
    connections the client closed under it."""

    def __init__(self, where: str = "headers", every: float = 0.2, tls: tuple[str, str] | None = None, limit: float = 120.0) -> None:
        self.cut = 0
        self.lock = threading.Lock()

        class Handler(_Handler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                owner: Dripper = self.owner
                owner.requests.append((self.headers.get("Host", ""), urlsplit(self.path).path))
                head = b"HTTP/1.1 200 OK\r\n" + (b"Content-Length: 100000000\r\n\r\n" if where == "body" else b"X-Slow: ")
                try:
                    self.wfile.write(head)
                    until = time.monotonic() + limit
                    while not owner.stopped.is_set() and time.monotonic() < until:
                        self.wfile.write(b"a")
                        self.wfile.flush()
                        time.sleep(every)
                except OSError:
                    with owner.lock:
                        owner.cut += 1
                self.close_connection = True

        super().__init__(Handler, tls)


def tls_files(directory: str | None = None) -> tuple[str, str]:
    """(certificate, key) PEM files of a self-signed certificate for IP 127.0.0.1, valid for a day."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    where = Path(directory or tempfile.mkdtemp(prefix="reaper-tls-"))
    cert_file, key_file = where / "cert.pem", where / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return str(cert_file), str(key_file)

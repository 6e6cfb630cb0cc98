"""A real Jupyter server behind a local stand-in for a SageMaker notebook's presigned hop (tests, demo).

`JupyterServer` runs `python -m jupyter_server` (the pip package, with ipykernel for real kernels) on
127.0.0.1, a free port, a random token, no browser, in a temporary directory, until closed.

`PresignedHop` plays the part of `https://NAME.notebook.REGION.sagemaker.aws?authToken=TOKEN`: the URL
moto's CreatePresignedNotebookInstanceUrl answers (moto_ext/sagemaker_presigned.py) points here. A GET
checks the token as SageMaker does (issued for that notebook, used once, within its 5 minutes: "If you
try to use the URL after the 5-minute limit expires, you are directed to the AWS console sign-in page"),
then sets the hop's session cookie and redirects, on its own origin, to the notebook's Jupyter API with the
server's own token in the URL, so that Jupyter sets its login cookie and the client holds a session, as a
browser does after the console's "Open JupyterLab". The Jupyter server is reached through the hop's origin
only (requests with the session cookie are passed to it): on AWS the notebook's Jupyter is served on the
presigned URL's own host (DescribeNotebookInstance `Url`), and the reader refuses any redirect off it.
A notebook in `refused` gets HTTP 403 instead ("IAM authorization policies for this API are also enforced
for every HTTP request and WebSocket frame that attempts to connect to the notebook instance": e.g. a Deny on aws:SourceIp).
API_CreatePresignedNotebookInstanceUrl.html, both quotes.

It plays a Studio domain's hop too: `https://DOMAIN.studio.REGION.sagemaker.aws/auth?token=TOKEN`, the URL
moto's CreatePresignedDomainUrl answers. A GET checks the token the same way (its domain, used once, within
its ExpiresInSeconds, else the sign-in page), then follows the LandingUri ("app:JupyterLab:relative/path:
Directs users to the relative path in the JupyterLab application"; app:JupyterServer for Studio Classic):
to the relative path under the Jupyter server serving that space (or user profile), on the hop's own origin
(a session cookie routes it, as above), with the server's token, when that app is InService. Without a
LandingUri it lands on a Studio page (HTML). AWS does not document what opening the URL of an app that is
not running does; a browser's Studio may start it, so the stand-in records such an opening in `started`
(a test asserts the reaper never causes one) and answers a Studio page. An app in `refused_apps` gets HTTP
403 ("IAM authorization policies for this API are also enforced for every HTTP request and WebSocket frame
that attempts to connect to the app").
API_CreatePresignedDomainUrl.html.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from reaper_devkit.moto_ext import sagemaker_studio
from reaper_devkit.moto_ext.sagemaker_presigned import IssuedDomain, store

ACCOUNT = "123456789012"
SESSION_COOKIE = "hop-session"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class JupyterServer:
    """A jupyter_server process; `api()` drives it as a user's browser would (start kernels, terminals)."""

    def __init__(self, start_timeout: float = 180.0, base_url: str = "/") -> None:
        """`base_url`: where the server serves (a Studio JupyterLab app serves under its own path)."""
        self.dir = tempfile.TemporaryDirectory(prefix="reaper-jupyter-")
        root = Path(self.dir.name)
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
        self.url = self.origin + self.base.rstrip("/")  # + "/api/..."
        self.runtime = root / "runtime"
        env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(self.runtime), "JUPYTER_CONFIG_DIR": str(root / "config")}
        args = [sys.executable, "-m", "jupyter_server", f"--ServerApp.port={self.port}", "--ServerApp.ip=127.0.0.1"]
        args += [f"--IdentityProvider.token={self.token}", "--ServerApp.open_browser=False", f"--ServerApp.root_dir={root}"]
        args += [f"--ServerApp.base_url={self.base}", "--ServerApp.port_retries=0"] + (
            ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        )
        self.log = open(root / "server.log", "wb")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(args, env=env, cwd=root, stdout=self.log, stderr=subprocess.STDOUT)
        self._wait(start_timeout)

    def _wait(self, timeout: float) -> None:
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter_server exited: {Path(self.dir.name, 'server.log').read_text()[-2000:]}")
            try:
                self.api("GET", "/api/status")
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("jupyter_server did not answer in time")

    def api(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def kernel_client(self, kernel_id: str) -> Any:
        """A jupyter_client client of a kernel the server started (its connection file), to run code in it."""
        from jupyter_client import BlockingKernelClient

        client = BlockingKernelClient()
        client.load_connection_file(str(self.runtime / f"kernel-{kernel_id}.json"))
        # jupyter_client calls a kernel dead after one heartbeat missed by 1 s; on a loaded machine (two test workers,
        # their Jupyter servers and kernels on two cores) a live kernel can miss one ("Kernel died before replying")
        client.hb_channel.time_to_dead = 10.0
        client.start_channels()
        # Wait until the kernel answers on its channels: output sent before iopub is subscribed is lost,
        # and a client that runs a cell at once can wait for it for ever.
        client.wait_for_ready(timeout=120)
        return client

    def wait_for(self, path: str, ok: Any, timeout: float = 120.0) -> Any:
        """The answer of GET `path` once `ok(answer)` holds."""
        until = time.monotonic() + timeout
        while True:
            answer = self.api("GET", path)
            if ok(answer) or time.monotonic() > until:
                return answer
            time.sleep(0.2)

    def reset(self) -> None:
        """No kernels, no terminals: as the server started."""
        for k in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{k['id']}")
        for t in self.api("GET", "/api/terminals"):
            self.api("DELETE", f"/api/terminals/{t['name']}")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        self.dir.cleanup()


class PresignedHop:
    """The stand-in for the presigned hop; `serve(name, server)` routes a notebook to a Jupyter server."""

    def __init__(self, region: str = "us-east-1", account: str = ACCOUNT) -> None:
        self.region, self.account = region, account
        self.servers: dict[str, JupyterServer] = {}
        self.refused: set[str] = set()
        self.hits: list[str] = []  # the notebooks (and Studio spaces or user profiles) whose URL was followed
        self.apps: dict[tuple[str, str], JupyterServer] = {}  # (domain, space or user profile) -> its app's server
        self.refused_apps: set[tuple[str, str]] = set()
        self.started: list[tuple[str, str]] = []  # URLs opened for an app that was not InService (could start it)
        self.sessions: dict[str, JupyterServer] = {}  # the hop's session cookie -> the Jupyter server it reaches
        self.proxied: list[str] = []  # the paths passed on to a Jupyter server
        self.signins: list[str] = []  # requests the console's sign-in page received (on its own host, as on AWS)
        hop = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                hop._answer(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                return  # the hop's URLs hold tokens: nothing printed

        class SignIn(Handler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                hop.signins.append(self.path)
                hop._status(self, 200, "<html>Sign in to the AWS console</html>")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.signin_httpd = ThreadingHTTPServer(("127.0.0.1", 0), SignIn)
        self.signin = f"http://127.0.0.1:{self.signin_httpd.server_address[1]}/signin"  # another host's page
        for httpd in (self.httpd, self.signin_httpd):
            threading.Thread(target=httpd.serve_forever, daemon=True).start()

    def serve(self, name: str, server: JupyterServer) -> None:
        self.servers[name] = server
        store(self._backend()).hops[name] = self.origin

    def refuse(self, name: str) -> None:
        """The account denies this notebook's URL (the hop answers 403), as an aws:SourceIp Deny does."""
        self.refused.add(name)
        store(self._backend()).hops.setdefault(name, self.origin)

    def refuse_presign(self, name: str) -> None:
        """The account denies CreatePresignedNotebookInstanceUrl itself for this notebook (AccessDeniedException)."""
        store(self._backend()).refused.add(name)

    def serve_app(self, domain: str, owner: str, server: JupyterServer) -> None:
        """The Jupyter server of the app in this space (or, Studio Classic, of this user profile)."""
        self.apps[(domain, owner)] = server
        store(self._backend()).studio_hops[domain] = self.origin

    def refuse_app(self, domain: str, owner: str) -> None:
        """The account denies the URL of this space's (user profile's) app: the hop answers 403."""
        self.refused_apps.add((domain, owner))
        store(self._backend()).studio_hops.setdefault(domain, self.origin)

    def refuse_presign_app(self, domain: str, owner: str) -> None:
        """The account denies CreatePresignedDomainUrl itself for this space or user profile (AccessDeniedException)."""
        store(self._backend()).refused_apps.add((domain, owner))

    def _backend(self) -> Any:
        from moto.sagemaker.models import sagemaker_backends

        return sagemaker_backends[self.account][self.region]

    def _answer(self, req: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(req.path)
        query = parse_qs(parts.query)
        name = parts.path.strip("/")
        if name.startswith("studio/"):
            return self._studio(req, name.split("/"), (query.get("token") or [""])[0])
        if "authToken" not in query:
            return self._proxy(req)
        token = query["authToken"][0]
        issued = store(self._backend()).tokens.pop(token, None)  # used once
        self.hits.append(name)
        if name in self.refused:
            return self._status(req, 403, "Forbidden")
        if issued is None or issued.notebook != name or issued.expires < datetime.now(UTC) or name not in self.servers:
            return self._redirect(req, self.signin)  # the console's sign-in page
        server = self.servers[name]
        return self._redirect(req, f"{server.base}api/status?token={server.token}", self._session(server))

    def _studio(self, req: BaseHTTPRequestHandler, path: list[str], token: str) -> None:
        if len(path) != 3 or path[2] != "auth":
            return self._status(req, 200, "<html>SageMaker Studio</html>")  # a Studio page (its app is JavaScript)
        issued = store(self._backend()).studio_tokens.pop(token, None)  # used once
        if issued is None or issued.domain != path[1] or issued.expires < datetime.now(UTC):
            return self._redirect(req, self.signin)
        key = (issued.domain, issued.owner)
        self.hits.append(issued.owner)
        if key in self.refused_apps:
            return self._status(req, 403, "Forbidden")
        app_type, _, relative = (issued.landing or "").removeprefix("app:").partition(":")
        if not issued.landing or not issued.landing.startswith("app:") or key not in self.apps:
            return self._redirect(req, f"{self.origin}/studio/{issued.domain}/home")
        if not self._in_service(issued, app_type):
            self.started.append(key)
            return self._redirect(req, f"{self.origin}/studio/{issued.domain}/starting")
        server = self.apps[key]
        return self._redirect(req, f"{self.origin}{server.base}{relative.lstrip('/')}?token={server.token}", self._session(server))

    def _session(self, server: JupyterServer) -> str:
        """The hop's session cookie: which Jupyter server this client's later requests on the hop's origin reach."""
        session = secrets.token_hex(16)
        self.sessions[session] = server
        return f"{SESSION_COOKIE}={session}; Path=/; HttpOnly"

    def _proxy(self, req: BaseHTTPRequestHandler) -> None:
        """A request on the hop's origin with a session: passed to its Jupyter server, the answer passed back."""
        cookies = SimpleCookie(req.headers.get("Cookie", ""))
        session = cookies[SESSION_COOKIE].value if SESSION_COOKIE in cookies else ""
        server = self.sessions.get(session)
        if server is None:
            return self._redirect(req, self.signin)  # no session: sign in first
        self.proxied.append(urlsplit(req.path).path)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            headers = {k: v for k, v in req.headers.items() if k.lower() in ("cookie", "accept", "host")}
            conn.request("GET", req.path, headers=headers)
            answer = conn.getresponse()
            body = answer.read()
        finally:
            conn.close()
        req.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() in ("content-type", "set-cookie", "location"):
                req.send_header(key, value.replace(server.origin, self.origin))
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        req.wfile.write(body)

    def _in_service(self, issued: IssuedDomain, app_type: str) -> bool:
        apps = sagemaker_studio.store(self._backend()).apps
        arn = f"arn:aws:sagemaker:{self.region}:{self.account}:app/{issued.domain}/{issued.owner}/{app_type}/default"
        app = apps.get(arn)
        return app is not None and app.status == "InService"

    @staticmethod
    def _redirect(req: BaseHTTPRequestHandler, location: str, cookie: str | None = None) -> None:
        req.send_response(302)
        req.send_header("Location", location)
        if cookie:
            req.send_header("Set-Cookie", cookie)
        req.send_header("Content-Length", "0")
        req.end_headers()

    @staticmethod
    def _status(req: BaseHTTPRequestHandler, code: int, text: str) -> None:
        body = text.encode()
        req.send_response(code)
        req.send_header("Content-Type", "text/plain")
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        req.wfile.write(body)

    def close(self) -> None:
        for httpd in (self.httpd, self.signin_httpd):
            httpd.shutdown()
            httpd.server_close()


@contextmanager
def jupyter_server(base_url: str = "/") -> Iterator[JupyterServer]:
    server = JupyterServer(base_url=base_url)
    try:
        yield server
    finally:
        server.close()

"""A local stand-in for Slack's Web API (bot mode) and its response_url endpoints (buttons).

Serves what the reaper calls: `users.lookupByEmail` (from `users`, {e-mail: member ID}),
`chat.postMessage` (recorded in `posts`, each with the `ts` it was given), and POSTs to
`/respond/<anything>` (recorded in `responses`: what a button click answered in its thread).
Answers as Slack does (https://api.slack.com/web): HTTP 200 with `{"ok": false, "error": ...}`
for a refused call, 429 with Retry-After when `rate_limit` is set. `calls` lists every method hit.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class SlackApi:
    def __init__(self, users: dict[str, str] | None = None) -> None:
        self.users = {k.lower(): v for k, v in (users or {}).items()}
        self.posts: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []
        self.calls: list[str] = []
        self.rate_limit: float | None = None  # seconds: every call answers 429 while set
        self.down = False  # every call answers 503
        lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, body: bytes) -> None:
                url = urlsplit(self.path)
                params: dict[str, Any] = {k: v[0] for k, v in parse_qs(url.query).items()}
                if body:
                    kind = self.headers.get("Content-Type", "")
                    if "json" in kind:
                        params.update(json.loads(body))
                    else:
                        params.update({k: v[0] for k, v in parse_qs(body.decode()).items()})
                with lock:
                    method = url.path.rsplit("/", 1)[-1]
                    api.calls.append(method)
                    if api.down:
                        return self._answer(503, {"ok": False, "error": "service_unavailable"})
                    if api.rate_limit is not None:
                        return self._answer(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": f"{api.rate_limit:g}"})
                    if url.path.startswith("/respond/"):
                        api.responses.append({"path": url.path, **params})
                        return self._answer(200, {"ok": True})
                    if method == "users.lookupByEmail":
                        user = api.users.get(str(params.get("email", "")).lower())
                        if user is None:
                            return self._answer(200, {"ok": False, "error": "users_not_found"})
                        return self._answer(200, {"ok": True, "user": {"id": user}})
                    if method == "chat.postMessage":
                        if not params.get("channel"):
                            return self._answer(200, {"ok": False, "error": "channel_not_found"})
                        ts = f"{1700000000 + len(api.posts)}.000100"
                        api.posts.append({**params, "ts": ts})
                        return self._answer(200, {"ok": True, "channel": params["channel"], "ts": ts})
                return self._answer(200, {"ok": False, "error": "unknown_method"})

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._handle(b"")

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self._handle(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def response_url(self, name: str = "click") -> str:
        return f"{self.url}/respond/{name}"

    def posts_to(self, channel: str) -> list[dict[str, Any]]:
        return [p for p in self.posts if p.get("channel") == channel]

    def __enter__(self) -> SlackApi:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

"""A local stand-in for a Slack incoming webhook: records what is posted (demo and tests)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SlackReceiver:
    """Answers 200 "ok" like Slack, or plays a fault:

    - `fail_with` (e.g. 500): every post refused, nothing recorded (an outage);
    - `script`: answers for the next posts, in order, each (status, headers); a 429 is not recorded;
    - `delay`: seconds to wait *after recording* a post before answering (a slow Slack that
      did post the message, but answers after the client gave up).
    `requests` counts every POST that arrived, `times` when each did.
    """

    def __init__(self, path: str = "/services/T000/B000/demo") -> None:
        self.path = path
        self.messages: list[dict[str, Any]] = []
        self.fail_with: int | None = None
        self.script: list[tuple[int, dict[str, str]]] = []
        self.delay: float = 0.0
        self.requests = 0
        self.times: list[float] = []
        lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with lock:
                    receiver.requests += 1
                    receiver.times.append(time.monotonic())
                    status, headers = receiver.script.pop(0) if receiver.script else (receiver.fail_with or 200, {})
                    if status == 200:
                        receiver.messages.append(json.loads(body or b"{}"))
                if receiver.delay:
                    time.sleep(receiver.delay)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(b"ok" if status == 200 else b"rate_limited" if status == 429 else b"service_unavailable")

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}{self.path}"

    def __enter__(self) -> SlackReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

"""A local stand-in for a Slack incoming webhook: records what is posted (demo and tests)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SlackReceiver:
    """Answers 200 "ok" like Slack, or `fail_with` (e.g. 500) to play an outage."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.fail_with: int | None = None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if receiver.fail_with:
                    self.send_response(receiver.fail_with)
                    self.end_headers()
                    self.wfile.write(b"service_unavailable")
                    return
                receiver.messages.append(json.loads(body or b"{}"))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/services/T000/B000/demo"

    def __enter__(self) -> SlackReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

"""The built manual as a reader's browser sees it (`make docs-check`, after `mkdocs build`).

1. The search index is there and holds the home page and every kind page.
2. In headless Chromium, served over HTTP as a reader gets it: search initialises and a query
   finds pages (Material's search runs in a web worker; a page that says "Initializing search"
   for good has none), and a screenshot of the home page and of a kind page is written to
   .site/_screenshots/ for a person to look at.

Without Chromium (Debian's `chromium` package) step 2 is skipped with a message saying so, never
passed in silence. Standard library only; Chromium is driven over --remote-debugging-pipe.

    .venv/bin/python scripts/site_check.py [--site .site] [--query restore]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"home": "", "kind": "kinds/notebook/"}  # the screenshots
SEARCH_SECONDS = 60.0
RESULTS_JS = (
    "JSON.stringify({items: document.querySelectorAll('.md-search-result__item').length,"
    " meta: (document.querySelector('.md-search-result__meta') || {textContent: ''}).textContent.trim()})"
)


def index_problems(site: Path) -> list[str]:
    """What the search index lacks: the file, the home page, a kind page."""
    index = site / "search" / "search_index.json"
    if not index.exists():
        return [f"{index} is missing: the search plugin did not run"]
    locations = {doc["location"].split("#", 1)[0] for doc in json.loads(index.read_text())["docs"]}
    kinds = sorted(p.stem for p in (ROOT / "docs" / "kinds").glob("*.md") if p.stem != "index")
    wanted = ["", *(f"kinds/{k}/" for k in kinds)]
    return [f"the search index has no page {w or '(home)'!r}" for w in wanted if w not in locations]


def serve(site: Path) -> tuple[ThreadingHTTPServer, str]:
    """The site over HTTP on the loopback (a web worker cannot start from file://)."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """No access log: the check prints only what it finds (http.server logs every request to stderr)."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def browser_args(chromium: str) -> list[str]:
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,900"]


def screenshot(chromium: str, url: str, out: Path) -> str | None:
    """Write a PNG of the page; the problem in one line, or None."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    done = subprocess.run([*browser_args(chromium), f"--screenshot={out}", url], capture_output=True, text=True, timeout=120)
    if done.returncode or not out.exists() or out.stat().st_size < 1000:
        return f"no screenshot of {url} (exit {done.returncode})"
    return None


class Pipe:
    """Chrome DevTools Protocol over --remote-debugging-pipe: JSON messages ended by NUL."""

    def __init__(self, chromium: str) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds() -> None:  # Chromium reads commands on fd 3 and writes answers on fd 4
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [*browser_args(chromium), "--remote-debugging-pipe", "about:blank"],
            close_fds=False,  # keeps the dup2'd fds 3 and 4; os.pipe()'s own fds are not inheritable (PEP 446)
            preexec_fn=fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self._buffer = b""

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 65536)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        found: dict[str, Any] = json.loads(raw)
        return found

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self._to_chrome)
        os.close(self._from_chrome)


def search_problem(chromium: str, base: str, query: str) -> str | None:
    """Open the site with ?q=QUERY and wait for Material's search to list results; the problem, or None."""
    pipe = Pipe(chromium)
    try:
        target = pipe.call("Target.createTarget", {"url": f"{base}?q={query}"})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        seen: dict[str, Any] = {}
        deadline = time.monotonic() + SEARCH_SECONDS
        while time.monotonic() < deadline:
            value = pipe.call("Runtime.evaluate", {"expression": RESULTS_JS, "returnByValue": True}, session)
            seen = json.loads(value.get("result", {}).get("value") or "{}")
            if seen.get("items", 0) > 0:
                return None
            time.sleep(0.5)
        return f"search for {query!r} listed nothing within {SEARCH_SECONDS:.0f} s (it said {seen.get('meta', '')!r})"
    finally:
        pipe.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--site", default=str(ROOT / ".site"))
    p.add_argument("--query", default="restore")
    args = p.parse_args(argv)
    site = Path(args.site)
    problems = index_problems(site)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("site-check: SKIPPED the browser checks (search in a browser, screenshots): no chromium on PATH (apt-get install chromium)")
    else:
        server, base = serve(site)
        try:
            for name, path in PAGES.items():
                problems += [x for x in [screenshot(chromium, base + path, site / "_screenshots" / f"{name}.png")] if x]
            problems += [x for x in [search_problem(chromium, base, args.query)] if x]
        finally:
            server.shutdown()
    for problem in problems:
        print(f"site-check: {problem}", file=sys.stderr)
    if not problems:
        shots = f"; screenshots in {site / '_screenshots'}" if chromium else ""
        print(f"site-check: search index whole{'; search finds ' + repr(args.query) + ' in Chromium' if chromium else ''}{shots}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

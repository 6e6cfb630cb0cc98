"""A local AWS account: moto's server in this process, with the moto extensions applied."""

from __future__ import annotations

import logging
import os
import socket
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from moto.server import ThreadedMotoServer

from reaper_devkit import moto_ext

FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "demo",
    "AWS_SECRET_ACCESS_KEY": "demo",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class _KeptServer:
    """The server `kept_server()` keeps for its block: started by the first local_account() in it."""

    active = False
    server: ThreadedMotoServer | None = None
    url = ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start() -> tuple[ThreadedMotoServer, str]:
    moto_ext.apply()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return server, f"http://127.0.0.1:{port}"


def reset(url: str) -> None:
    """Empty every backend of the server at `url` (moto's reset endpoint)."""
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=30).read()


@contextmanager
def kept_server() -> Iterator[None]:
    """Inside this block every local_account() reuses one server (started on first use, reset on
    each use) instead of starting its own: one server per test run (per xdist worker). A nested
    block keeps its own server and hands the outer one back."""
    outer = (_KeptServer.active, _KeptServer.server, _KeptServer.url)
    _KeptServer.active, _KeptServer.server, _KeptServer.url = True, None, ""
    try:
        yield
    finally:
        if _KeptServer.server is not None:
            _KeptServer.server.stop()
        _KeptServer.active, _KeptServer.server, _KeptServer.url = outer


@contextmanager
def local_account() -> Iterator[str]:
    """Start moto's server (or reuse the kept one); point boto3 at it through AWS_ENDPOINT_URL;
    yield the URL."""
    if _KeptServer.active:
        if _KeptServer.server is None:
            _KeptServer.server, _KeptServer.url = _start()
        server, url, own = _KeptServer.server, _KeptServer.url, False
    else:
        (server, url), own = _start(), True
    # moto's backends live in this process and outlive a server: start from an empty account
    reset(url)
    saved = {k: os.environ.get(k) for k in [*FAKE_ENV, "AWS_ENDPOINT_URL", "AWS_PROFILE"]}
    os.environ.update(FAKE_ENV)
    os.environ["AWS_ENDPOINT_URL"] = url
    os.environ.pop("AWS_PROFILE", None)
    try:
        yield url
    finally:
        if own:
            server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def session() -> boto3.session.Session:
    return boto3.session.Session(region_name=os.environ.get("AWS_REGION", "us-east-1"))

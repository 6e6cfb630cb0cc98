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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def local_account() -> Iterator[str]:
    """Start moto's server; point boto3 at it through AWS_ENDPOINT_URL; yield the URL."""
    moto_ext.apply()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    # moto's backends live in this process and outlive a server: start from an empty account
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=30).read()
    saved = {k: os.environ.get(k) for k in [*FAKE_ENV, "AWS_ENDPOINT_URL", "AWS_PROFILE"]}
    os.environ.update(FAKE_ENV)
    os.environ["AWS_ENDPOINT_URL"] = url
    os.environ.pop("AWS_PROFILE", None)
    try:
        yield url
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def session() -> boto3.session.Session:
    return boto3.session.Session(region_name=os.environ.get("AWS_REGION", "us-east-1"))

"""AWS clients, made in one place and handed in (tests hand in moto-backed ones).

boto3 honours AWS_ENDPOINT_URL, AWS_PROFILE and AWS_REGION itself, so the CLI and the
functions need nothing special to run against a local moto server.
"""

from __future__ import annotations

import os
from typing import Any

import boto3
from botocore.config import Config

from reaper.aws.pricing import Pricer

# Few attempts and short timeouts: under heavy throttling a sweep must still reach its end within
# the Lambda timeout (8 attempts spent 200+ s of 300 s at 30 % throttling); what is not reached is said.
# The pool holds a connection for each of the Jupyter readers' presign calls made at once (aws/jupyter.py:
# WORKERS), instead of botocore's 10 (a reader past them would open and discard one of its own).
RETRY_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=5, read_timeout=15, max_pool_connections=40)


class Clients:
    """Lazily made, cached boto3 clients for one region."""

    def __init__(self, region: str, session: boto3.session.Session | None = None, pricer: Pricer | None = None) -> None:
        self.region = region
        self._session = session or boto3.session.Session()
        self._cache: dict[str, object] = {}  # boto3 clients (botocore ships no types)
        # list prices: the runtime's one Pricer (reaper.wiring); a bare Clients asks the API itself, memory only
        self.pricer = pricer or Pricer.for_session(self._session)

    def __call__(self, service: str) -> Any:
        client = self._cache.get(service)
        if client is None:
            client = self._session.client(service, region_name=self.region, config=RETRY_CONFIG)
            self._cache[service] = client
        return client

    def credentials(self) -> Any:
        """The session's credentials, frozen (a request signed outside boto3: kinds/mlflow/tracking_api.py); None without."""
        found = self._session.get_credentials()
        return None if found is None else found.get_frozen_credentials()


def default_region(session: boto3.session.Session | None = None) -> str | None:
    """The session's region, else AWS_REGION (which Lambda sets and some botocore versions ignore)."""
    return (session or boto3.session.Session()).region_name or os.environ.get("AWS_REGION") or None

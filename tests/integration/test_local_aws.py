"""The local moto server that the CLI tests and `make demo` use: kept for a whole run, emptied
between uses, and the environment handed back as it was."""

from __future__ import annotations

import os
import urllib.error
import urllib.request

import pytest

from reaper_devkit import local_aws
from reaper_devkit.local_aws import kept_server, local_account, session


def serving(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/moto-api/data.json", timeout=5).read()
    except (urllib.error.URLError, ConnectionError):
        return False
    return True


def test_a_kept_server_is_reused_and_emptied_between_uses():
    # Given a block that keeps one server (what the session fixture does), inside the run's own
    outer = (local_aws._KeptServer.active, local_aws._KeptServer.server)
    with kept_server():
        with local_account() as first:
            session().client("sqs").create_queue(QueueName="left-behind")
        # When a second local account is opened in the same block
        with local_account() as second:
            queues = session().client("sqs").list_queues().get("QueueUrls", [])
        # Then it is the same server, still serving between uses, and it starts empty
        assert second == first and serving(first)
        assert queues == []
    # And the server stops with the block, and the run's own is handed back
    assert not serving(first)
    assert (local_aws._KeptServer.active, local_aws._KeptServer.server) == outer


def test_without_a_kept_server_each_account_has_its_own_and_stops_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(local_aws._KeptServer, "active", False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://before.invalid")
    with local_account() as url:
        assert os.environ["AWS_ENDPOINT_URL"] == url and serving(url)
    assert not serving(url)
    assert os.environ["AWS_ENDPOINT_URL"] == "http://before.invalid"

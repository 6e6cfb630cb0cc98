"""A slow server must not outlive the sweep nor starve the others (issue 33, item 2).

Each request (with its redirects) has one deadline in all, not a timeout per socket read: a server dripping
a byte at a time is cut there. When `read_all` returns, no reader thread is alive and no reading function is
still running: the budget's end cuts every connection still open. Real HTTP servers on 127.0.0.1
(reaper_devkit.jupyter_hostile). No test here asserts a duration: they count threads, readings and
connections.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from reaper.aws import jupyter as reader
from reaper.core.jupyter_verdict import JupyterReading
from reaper_devkit.jupyter_hostile import Dripper, FakeJupyter, tls_files

DOOR = reader.Door("CreatePresignedNotebookInstanceUrl", "the notebook's presigned URL", "no fix")


def eventually(check: Callable[[], bool], tries: int = 200) -> bool:
    """Whether `check` holds within `tries` polls (a server notices a closed connection at its next write)."""
    for _ in range(tries):
        if check():
            return True
        threading.Event().wait(0.05)
    return check()


def readers_alive() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("jupyter-read") and t.is_alive()]


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many calls of the reading function have started and how many have returned."""
    count = {"started": 0, "returned": 0}
    real = reader.read_one
    lock = threading.Lock()

    def counted(*args: Any, **kwargs: Any) -> JupyterReading:
        with lock:
            count["started"] += 1
        try:
            return real(*args, **kwargs)
        finally:
            with lock:
                count["returned"] += 1

    monkeypatch.setattr(reader, "read_one", counted)
    return count


@pytest.fixture
def servers() -> Iterator[Callable[..., Any]]:
    made: list[Any] = []

    def make(kind: type, **kwargs: Any) -> Any:
        made.append(kind(**kwargs))
        return made[-1]

    yield make
    for server in made:
        server.close()


def url(server: Any) -> Callable[[], str]:
    return lambda: f"{server.origin}/?authToken=T"


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_dripping_server_is_cut_at_its_deadline_and_no_reader_outlives_read_all(servers, running, where):
    # Given a server that answers one byte every 0.2 s for ever (a per-read timeout of 1 s never fires)
    drip = servers(Dripper, where=where)
    # When it is read with 1 s a request and a budget far longer
    readings = reader.read_all(DOOR, {"slow": url(drip)}, timeout=1, budget=120)
    # Then its reading was cut at the request's deadline (unreachable, not "not reached" at the budget's end)
    assert readings["slow"].unknown == reader.UNREACHABLE, readings
    assert "no whole answer within 1 s" in (readings["slow"].unreadable or "")
    # and nothing of the reading runs any more
    assert readers_alive() == [] and running == {"started": 1, "returned": 1}


def test_drippers_among_good_servers_leave_every_good_server_read(servers, running):
    # Given 10 drippers read first in the turn, then 30 well-behaved servers, 10 readers at a time
    drip, good = servers(Dripper), servers(FakeJupyter)
    presigns = {f"a-drip-{i:02d}": url(drip) for i in range(10)} | {f"b-good-{i:02d}": url(good) for i in range(30)}
    assert reader.reading_order(list(presigns), 0)[:10] == [f"a-drip-{i:02d}" for i in range(10)]
    # When read with 3 s a request
    readings = reader.read_all(DOOR, presigns, workers=10, timeout=3, budget=60, turn=0)
    # Then every good server was read, every dripper is unreachable, and no reader is left
    assert all(readings[k].started is not None for k in presigns if k.startswith("b-good")), readings
    assert {readings[k].unknown for k in presigns if k.startswith("a-drip")} == {reader.UNREACHABLE}
    assert readers_alive() == [] and running["started"] == running["returned"] == 40
    assert eventually(lambda: drip.cut == 10)  # each dripper's connection was closed by the reader, none left open


def test_the_budgets_end_cuts_every_reading_still_running(servers, running):
    # Given drippers and a request timeout longer than the whole budget
    drip = servers(Dripper, where="body")
    presigns = {f"slow-{i}": url(drip) for i in range(3)}
    # When the budget ends first
    readings = reader.read_all(DOOR, presigns, workers=3, timeout=600, budget=1)
    # Then each is "not reached", every connection was closed under its reader, and no reader is alive
    assert {r.unknown for r in readings.values()} == {reader.NOT_REACHED}
    assert readers_alive() == [] and running == {"started": 3, "returned": 3}
    assert len(drip.requests) == 3 and eventually(lambda: drip.cut == 3)


def test_readings_queued_behind_the_budget_are_never_started(servers, running):
    # Given one reader and five drippers, with a budget that ends inside the first
    drip = servers(Dripper)
    readings = reader.read_all(DOOR, {f"slow-{i}": url(drip) for i in range(5)}, workers=1, timeout=600, budget=1)
    # Then only the first connected; the other four never opened a connection after the budget
    assert {r.unknown for r in readings.values()} == {reader.NOT_REACHED}
    assert len(drip.requests) == 1 and readers_alive() == [] and running["started"] == running["returned"]


def test_a_tls_server_dripping_is_cut_too(servers, running, monkeypatch, tmp_path):
    # Given an https server (a certificate the reader trusts) dripping its body
    files = tls_files(str(tmp_path))
    monkeypatch.setenv("SSL_CERT_FILE", files[0])
    drip, good = servers(Dripper, where="body", tls=files), servers(FakeJupyter, tls=files)
    good.redirects["/"] = "/api/status"
    # When read with 1 s a request
    readings = reader.read_all(DOOR, {"slow": url(drip), "good": url(good)}, timeout=1, budget=60)
    # Then the dripper is cut at its deadline, the good one read, and nothing left running
    assert readings["slow"].unknown == reader.UNREACHABLE and readings["good"].started is not None
    assert readers_alive() == [] and running == {"started": 2, "returned": 2}


def test_one_reading_alone_is_cut_too_and_leaves_nothing_running(servers):
    # Given a dripper read by read_one alone (its own watchdog, as the notebook kind's read_one does)
    drip = servers(Dripper, where="body", limit=20)
    reading = reader.read_one(DOOR, url(drip), timeout=1)
    # Then it is cut at its deadline and neither a reader nor the watchdog is left
    assert reading.unknown == reader.UNREACHABLE and "no whole answer within 1 s" in (reading.unreadable or "")
    assert readers_alive() == []

"""JupyterReads reaches 1,000 servers a sweep at 0.5 s a request (issue 35, item 6), with its concurrency bounded.

A reading is one presign call and about five requests, one after another (docs/performance.md): at 0.5 s
each, 3 s. Within BUDGET one reader makes BUDGET // 3 readings, so 1,000 need ceil(1,000 / that) readers at
once. The test does not time anything: the presigns wait at a barrier that opens only when that many
readers are inside it together, so the servers are read only if that many readings run at once; and no
more than WORKERS ever run at once. (Measured reach: bench/jupyter_reach.py.)
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator

import pytest

from reaper.aws import jupyter as reader
from reaper_devkit.jupyter_hostile import FakeJupyter

DOOR = reader.Door("CreatePresignedNotebookInstanceUrl", "the notebook's presigned URL", "no fix")
TARGET, REQUEST_S, STEPS = 1_000, 0.5, 6  # servers, seconds a request, calls and requests of one reading


@pytest.fixture
def server() -> Iterator[FakeJupyter]:
    s = FakeJupyter()
    yield s
    s.close()


def test_enough_readings_run_at_once_to_reach_1000_servers_at_half_a_second_a_request_and_never_more_than_workers(server):
    # Given the readers needed at once to read 1,000 servers at 0.5 s a request within the budget
    needed = math.ceil(TARGET / (reader.BUDGET // (STEPS * REQUEST_S)))
    barrier = threading.Barrier(needed, timeout=30)
    lock, running, most = threading.Lock(), [0], [0]

    def presign() -> str:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            barrier.wait()  # opens only once `needed` readings are here together
        finally:
            with lock:
                running[0] -= 1
        return f"{server.origin}/?authToken=T"

    presigns: dict[str, Callable[[], str]] = {f"nb-{i:04d}": presign for i in range(needed)}
    # When they are read with the reader's own concurrency
    readings = reader.read_all(DOOR, presigns, timeout=10, budget=60)
    # Then every one was read (that many ran at once), never more than WORKERS at once, and no reader is left
    assert all(r.started is not None for r in readings.values()), {k: r.unknown for k, r in readings.items() if r.started is None}
    assert needed <= most[0] <= reader.WORKERS
    assert [t for t in threading.enumerate() if t.name.startswith("jupyter-read") and t.is_alive()] == []

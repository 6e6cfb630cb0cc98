"""Capture every action-log entry the code writes, as stored (a pytest plugin, off by default).

    CAPTURE_LOG_TO=/tmp/entries pytest -p tests.plugins.log_capture tests/integration/...
    python tests/plugins/log_capture.py /tmp/entries tests/fixtures/log_entries_before_model.jsonl

writes one JSON line per distinct entry shape to <dir>/<worker>.jsonl: where it was written (`member`:
a member's ActionLog.record; `central`: the organisation's table, reaper.org.central.take) and the
entry's JSON text exactly as stored. The merge step keeps one entry per shape and adds what the code
of that day made of each (`reaper log`'s text line, JSON and CSV row) and of all of them together
(`reaper report`, the digest, the coverage view), so tests/unit/test_log_entry_seam.py holds entries
and renderings captured from the code before the LogEntry model (issue 35), not written by hand.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

OUT = os.environ.get("CAPTURE_LOG_TO")
PER_SHAPE = 2

_seen: dict[str, int] = {}


def _keep(source: str, text: str) -> None:
    data = json.loads(text)
    shape = json.dumps([source, data.get("type"), data.get("kind"), data.get("verdict"), data.get("action"), sorted(data)], default=str)
    if _seen.get(shape, 0) >= PER_SHAPE:
        return
    _seen[shape] = _seen.get(shape, 0) + 1
    assert OUT
    Path(OUT).mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with (Path(OUT) / f"{worker}-{os.getpid()}.jsonl").open("a") as f:  # as it goes: a run cut short keeps what it saw
        f.write(json.dumps({"source": source, "entry": text}, sort_keys=True) + "\n")


def _install() -> None:
    from reaper.org import central
    from reaper.record.actionlog import ActionLog

    record = ActionLog.record

    def spy_record(self: Any, entry: Any, *args: Any, **kw: Any) -> Any:
        chained = self.copy_to

        def copy(body: Any) -> None:
            _keep("member", json.dumps(body, default=str))
            if chained is not None:
                chained(body)

        self.copy_to = copy
        try:
            return record(self, entry, *args, **kw)
        finally:
            self.copy_to = chained

    take = central.take

    def spy_take(dynamodb: Any, table: str, event: Any) -> Any:
        class Spy:
            def __getattr__(self, name: str) -> Any:
                return getattr(dynamodb, name)

            def put_item(self, **kw: Any) -> Any:
                _keep("central", kw["Item"]["entry"]["S"])
                return dynamodb.put_item(**kw)

        return take(Spy(), table, event)

    ActionLog.record = spy_record  # type: ignore[method-assign]
    central.take = spy_take


def merge(folder: str, out: str) -> None:
    """The workers' files as one fixture, one entry per shape, each with the renderings of the code of the day."""
    from tests.helpers.log_renderings import each, together

    lines = sorted({line for f in sorted(Path(folder).glob("*.jsonl")) for line in f.read_text().splitlines() if line}, key=len)
    shapes: set[str] = set()
    kept: list[dict[str, Any]] = []
    for line in lines:
        d = json.loads(line)
        e = json.loads(d["entry"])
        shape = json.dumps([d["source"], e.get("type"), e.get("kind"), e.get("verdict"), e.get("action"), sorted(e)], default=str)
        if shape in shapes:
            continue
        shapes.add(shape)
        kept.append(d)
    kept.sort(key=lambda d: (d["source"], json.loads(d["entry"]).get("logged_at") or "", d["entry"]))
    for d in kept:
        d["rendered"] = each(d["entry"])
    head = {"together": together([d["entry"] for d in kept])}
    Path(out).write_text("".join(json.dumps(d, sort_keys=True) + "\n" for d in [head, *kept]))


if __name__ == "__main__":  # python tests/plugins/log_capture.py <capture dir> <fixture>
    merge(sys.argv[1], sys.argv[2])
elif OUT:
    _install()

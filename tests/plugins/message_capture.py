"""Capture every Slack message body the code hands on, as it goes on the wire (a pytest plugin, off by default).

    CAPTURE_MESSAGES_TO=/tmp/bodies pytest -p tests.plugins.message_capture tests/integration/...

writes one JSON line per distinct body shape to <dir>/<worker>.jsonl: where it was seen (`sqs`: a
SendMessageBatch body; `unposted`: the action log's copy kept until queued; `direct`: the CLI's
Slack outlets; `digest`: the daily digest the notifier builds), the body exactly as written (a
string), and what the renderer of that day made of it. tests/fixtures/messages_before_typed_seam.jsonl
was written by this plugin at the commit before the typed message seam (issue 22), so the seam's
replay test (tests/unit/test_message_seam.py) holds old bodies captured from the old code, not
written by hand.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

OUT = os.environ.get("CAPTURE_MESSAGES_TO")
PER_SHAPE = 2  # bodies kept per (source, type, kind, verdict, mode, keys)

_seen: dict[str, int] = {}
_lines: list[str] = []


def _wire(body: Any) -> str:
    """A body as it crosses: the text, or the JSON of what the code handed on."""
    if isinstance(body, str):
        return body
    dump = getattr(body, "model_dump_json", None)
    return str(dump()) if callable(dump) else json.dumps(body, default=str)


def _render(text: str) -> dict[str, Any]:
    """What the renderer of the day makes of the body: through the typed seam, or (before it) from the dict."""
    try:
        message = _rendered(text)
    except Exception as exc:  # noqa: BLE001 - recorded: the replay test expects the same refusal
        return {"error": type(exc).__name__}
    return {"text": message.text, "blocks_sha256": blocks_sha256(message.blocks), "cut": list(message.cut)}


def _rendered(text: str) -> Any:
    try:
        from reaper.record.message import parse_body
        from reaper.slack.render import render_for
    except ImportError:  # the code before the typed seam (commit 6970d45) rendered the dict
        from reaper.slack.notifier import render_for as render_dict

        return render_dict(json.loads(text))
    return render_for(parse_body(text))


def blocks_sha256(blocks: Any) -> str:
    """The rendered blocks, as a digest (the fixture keeps the bodies whole, the renderings short)."""
    return hashlib.sha256(json.dumps(blocks, sort_keys=True).encode()).hexdigest()


def _keep(source: str, body: Any) -> None:
    text = _wire(body)
    data = json.loads(text)
    shape = json.dumps(
        [source, data.get("type"), data.get("kind"), data.get("verdict"), data.get("mode"), data.get("what"), sorted(data)], default=str
    )
    if _seen.get(shape, 0) >= PER_SHAPE:
        return
    _seen[shape] = _seen.get(shape, 0) + 1
    _lines.append(json.dumps({"source": source, "body": text, "rendered": _render(text)}, sort_keys=True))


def _install() -> None:
    from reaper.record.actionlog import ActionLog
    from reaper.record.outbox import QueueOutbox
    from reaper.slack import digest
    from reaper.slack.direct import DirectBot, DirectSlack

    queue_send = QueueOutbox.send

    def send(self: Any, payloads: Any) -> Any:
        real = self.sqs

        class Spy:
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            def send_message_batch(self, **kw: Any) -> Any:
                for entry in kw.get("Entries", []):
                    _keep("sqs", entry["MessageBody"])
                return real.send_message_batch(**kw)

        self.sqs = Spy()
        try:
            return queue_send(self, payloads)
        finally:
            self.sqs = real

    put_unposted = ActionLog.put_unposted

    def unposted(self: Any, body: Any, *args: Any, **kw: Any) -> Any:
        _keep("unposted", body)
        return put_unposted(self, body, *args, **kw)

    def direct(cls: Any) -> None:
        original = cls.send

        def spy(self: Any, payloads: Any) -> Any:
            for p in payloads:
                _keep("direct", p)
            return original(self, payloads)

        cls.send = spy

    build = digest.build

    def built(*args: Any, **kw: Any) -> Any:
        payload = build(*args, **kw)
        _keep("digest", payload)
        return payload

    QueueOutbox.send = send  # type: ignore[method-assign]
    ActionLog.put_unposted = unposted  # type: ignore[method-assign]
    direct(DirectSlack)
    direct(DirectBot)
    digest.build = built  # type: ignore[assignment]


def _write() -> None:
    assert OUT
    Path(OUT).mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (Path(OUT) / f"{worker}.jsonl").write_text("".join(line + "\n" for line in _lines))


def merge(folder: str, out: str) -> None:
    """The workers' files as one fixture: one body per shape (two sources of one type both kept), smallest first kept."""
    lines = sorted({line for f in sorted(Path(folder).glob("*.jsonl")) for line in f.read_text().splitlines() if line}, key=len)
    shapes: set[str] = set()
    sources: set[tuple[str, str]] = set()
    kept: list[dict[str, Any]] = []
    for line in lines:
        d = json.loads(line)
        b = json.loads(d["body"])
        shape = json.dumps(
            [b.get(k) for k in ("type", "kind", "verdict", "mode", "what", "action")]
            + [bool(b.get("unconfirmed")), b.get("past") is None, str(b.get("title", ""))[:12]]
        )
        where = (d["source"], str(b.get("type")))
        if shape in shapes and where in sources:
            continue
        shapes.add(shape)
        sources.add(where)
        if "blocks" in d["rendered"]:  # written by the first version of this plugin
            d["rendered"]["blocks_sha256"] = blocks_sha256(d["rendered"].pop("blocks"))
        kept.append(d)
    kept.sort(key=lambda d: (d["source"], str(json.loads(d["body"]).get("type")), str(json.loads(d["body"]).get("kind") or ""), d["body"]))
    Path(out).write_text("".join(json.dumps(d, sort_keys=True) + "\n" for d in kept))


if __name__ == "__main__":  # python tests/plugins/message_capture.py <capture dir> <fixture>
    merge(sys.argv[1], sys.argv[2])
elif OUT:
    _install()
    atexit.register(_write)

"""Slack's message limits, checked on what we post (shared by unit and integration tests)."""

from __future__ import annotations

import re
from typing import Any

from slack_sdk.models.blocks import Block

ENTITY = re.compile(r"&(?!amp;|lt;|gt;)")


def texts(blocks: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for b in blocks:
        if "text" in b:
            out.append(b["text"]["text"])
        out += [f["text"] for f in b.get("fields", [])]
        # a context element's text is a string; a button's is a text object
        out += [e["text"]["text"] if isinstance(e["text"], dict) else e["text"] for e in b.get("elements", []) if "text" in e]
    return out


def assert_within_limits(message: dict[str, Any]) -> None:
    """Limits from https://api.slack.com/reference/block-kit/blocks; slack-sdk re-validates each block."""
    blocks = message["blocks"]
    assert 0 < len(blocks) <= 50
    assert len(message["text"]) <= 3000
    for b in blocks:
        Block.parse(b).to_dict()  # type: ignore[union-attr]  # raises SlackObjectFormationError over a limit
        if b["type"] == "section":
            assert "text" not in b or len(b["text"]["text"]) <= 3000
            assert len(b.get("fields", [])) <= 10 and all(len(f["text"]) <= 2000 for f in b.get("fields", []))
        if b["type"] == "header":
            assert len(b["text"]["text"]) <= 150
        if b["type"] == "context":
            assert len(b["elements"]) <= 10 and all(len(e["text"]) <= 3000 for e in b["elements"])
    for t in texts(blocks) + [message["text"]]:
        assert not ENTITY.search(t), f"a bare or broken entity in {t[-80:]!r}"
        assert t.count("```") % 2 == 0, "an unclosed code block"

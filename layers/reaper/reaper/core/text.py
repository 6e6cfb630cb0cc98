"""Plain-text helpers shared by the CLI's tables and the report."""

from __future__ import annotations


def cut(text: str, width: int) -> str:
    """One line (AWS messages may hold newlines), cut to `width` with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"

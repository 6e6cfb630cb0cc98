"""Progress of a long sweep on a terminal: one line on stderr, rewritten in place as each kind in each
region is found, read and decided (docs/cli.md, "Progress"). Nothing when stderr is not a terminal (a pipe,
a file, CI) or with `--output json`: what a script reads stays what it asked for.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterator
from typing import TextIO

from reaper.core.text import cut

ERASE = "\r\x1b[K"  # back to the line's start, erase to its end (ECMA-48 CR, EL)


class ProgressLine:
    """Call it with a line to show; `clear()` before anything else is written to the terminal, and at the end."""

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.shown = False

    def __call__(self, line: str) -> None:
        if not self.enabled:
            return
        width = shutil.get_terminal_size((80, 24)).columns
        self.stream.write(ERASE + cut("… " + " ".join(line.split()), max(width - 1, 10)))
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write(ERASE)
            self.stream.flush()
            self.shown = False


_active: ProgressLine | None = None


def on_terminal(quiet: bool) -> ProgressLine:
    """A progress line on stderr, shown only when stderr is a terminal and the output is not for a program."""
    stream = sys.stderr
    tty = False
    with contextlib.suppress(AttributeError, ValueError):  # stderr replaced or closed
        tty = stream.isatty()
    return ProgressLine(stream, enabled=tty and not quiet)


@contextlib.contextmanager
def showing(line: ProgressLine) -> Iterator[ProgressLine]:
    """The line is the active one while the sweep runs, and erased when it ends (or fails)."""
    global _active
    _active = line
    try:
        yield line
    finally:
        line.clear()
        _active = None


def clear_active() -> None:
    """Erase the progress line (if one is shown) so a warning printed now starts on a clean line."""
    if _active is not None:
        _active.clear()

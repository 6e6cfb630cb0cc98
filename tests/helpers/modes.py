"""The mode a test sweeps in, set the way the stack sets it: by the function's environment."""

from __future__ import annotations

import pytest


def enforce_mode(monkeypatch: pytest.MonkeyPatch, grace: int = 0) -> None:
    """REAPER_MODE=enforce, with GraceMinutes `grace` (0: act at once)."""
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", str(grace))

"""policy.kill_date: only a keep changes, and only to what the kind picks."""

from __future__ import annotations

from datetime import UTC, datetime

from reaper.core.model import Decision, Verdict
from reaper.core.policy import TagView, kill_date
from reaper.core.settings import Settings

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)
PAST = TagView(kill_after=datetime(2026, 12, 1, tzinfo=UTC))


def stop(reason: str) -> Decision:
    return Decision(Verdict.ACT, reason, action="stop")


def test_a_keep_past_the_date_becomes_the_kinds_action_with_evidence() -> None:
    d = kill_date(Decision(Verdict.KEEP, "active 5 m ago", evidence={"x": 1}), PAST, Settings(), NOW, stop)
    assert (d.verdict, d.action) == (Verdict.ACT, "stop")
    assert d.evidence == {"x": 1, "kill_after": "2026-12-01T00:00:00Z", "policy": "kill-date"}
    assert "active 5 m ago" in d.reason and "reaper:kill-after" in d.reason


def test_errors_warnings_exemptions_and_acts_are_never_replaced() -> None:
    for verdict in (Verdict.ERROR, Verdict.EXEMPT, Verdict.WARN, Verdict.ACT):
        original = Decision(verdict, "as the rule said", action="delete")
        assert kill_date(original, PAST, Settings(), NOW, stop) is original


def test_before_the_date_or_without_one_nothing_changes() -> None:
    keep = Decision(Verdict.KEEP, "busy")
    exactly = TagView(kill_after=NOW)
    assert kill_date(keep, TagView(), Settings(), NOW, stop) is keep
    assert kill_date(keep, TagView(kill_after=datetime(2026, 12, 3, tzinfo=UTC)), Settings(), NOW, stop) is keep
    assert kill_date(keep, exactly, Settings(), NOW, stop).verdict is Verdict.ACT  # the date itself is past


def test_nothing_to_do_in_its_state_keeps_and_says_so() -> None:
    d = kill_date(Decision(Verdict.KEEP, "not running (Stopped)"), PAST, Settings(), NOW, lambda _r: None)
    assert d.verdict is Verdict.KEEP and "nothing to do in its current state" in d.reason


def test_every_kind_declares_a_kill_date_action_it_has() -> None:
    from reaper import kinds

    for kind in kinds.all_kinds():
        assert kind.declaration.default_action in kind.actions, kind.name

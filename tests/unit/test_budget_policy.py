"""policy.over_budget and policy.experiment_gap: pure."""

from __future__ import annotations

from datetime import UTC, datetime

from reaper.core.model import Decision, ProjectSpend, Verdict
from reaper.core.policy import TagView, experiment_gap, over_budget
from reaper.core.settings import Settings

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)
VISION = TagView(project="vision")


def spend(actual: float, limit: float = 500.0, enforceable: bool = True) -> dict[str, ProjectSpend]:
    """The admin's budget (enforceable) unless said otherwise."""
    return {"vision": ProjectSpend("vision", "mlreaper-vision", limit, actual, enforceable)}


def stop(reason: str) -> Decision:
    return Decision(Verdict.ACT, reason, action="stop")


def test_under_80_percent_or_another_project_or_no_project_changes_nothing() -> None:
    keep = Decision(Verdict.KEEP, "busy")
    assert over_budget(keep, VISION, Settings(), spend(399.99), NOW, stop) is keep
    assert over_budget(keep, TagView(project="speech"), Settings(), spend(900), NOW, stop) is keep
    assert over_budget(keep, TagView(), Settings(), spend(900), NOW, stop) is keep


def test_80_percent_tells_once_a_month_and_never_acts() -> None:
    d = over_budget(Decision(Verdict.KEEP, "busy"), VISION, Settings(budget_enforce=True), spend(400), NOW, stop)
    assert (d.verdict, d.notify, d.notify_key) == (Verdict.KEEP, True, "budget-80:mlreaper-vision:2026-12")


def test_100_percent_acts_only_with_the_opt_in_and_never_replaces_an_error_or_an_exemption() -> None:
    keep = Decision(Verdict.KEEP, "busy")
    told = over_budget(keep, VISION, Settings(), spend(500.01), NOW, stop)
    assert told.verdict is Verdict.KEEP and told.notify_key == "budget-100:mlreaper-vision:2026-12" and "would stop" in told.reason
    acted = over_budget(keep, VISION, Settings(budget_enforce=True), spend(500.01), NOW, stop)
    assert (acted.verdict, acted.action, acted.evidence["policy"]) == (Verdict.ACT, "stop", "budget")
    for verdict in (Verdict.ERROR, Verdict.EXEMPT, Verdict.WARN):
        d = Decision(verdict, "x")
        assert over_budget(d, VISION, Settings(budget_enforce=True), spend(900), NOW, stop) is d


def test_a_budget_no_admin_made_or_confirmed_only_notifies_even_with_the_opt_in() -> None:
    keep = Decision(Verdict.KEEP, "busy")
    told = over_budget(keep, VISION, Settings(budget_enforce=True), spend(900, enforceable=False), NOW, stop)
    assert told.verdict is Verdict.KEEP and told.notify and "only notifies until an admin confirms it" in told.reason
    early = over_budget(keep, VISION, Settings(budget_enforce=True), spend(400, enforceable=False), NOW, stop)
    assert "a notice (mlreaper-vision only notifies" in early.reason


def test_a_zero_limit_budget_is_never_over() -> None:
    keep = Decision(Verdict.KEEP, "busy")
    assert over_budget(keep, VISION, Settings(budget_enforce=True), spend(10, limit=0), NOW, stop) is keep


def test_the_creation_notice_skips_dated_budgeted_exempt_and_production_resources() -> None:
    s = Settings(project_budgets={"vision": 500})
    assert experiment_gap(TagView(project="speech"), s) is not None
    assert experiment_gap(VISION, s) is None
    assert experiment_gap(TagView(kill_after=NOW), s) is None
    assert experiment_gap(TagView(budget_usd=50), s) is None
    assert experiment_gap(TagView(exempt=True), s) is None
    assert experiment_gap(TagView(stage="prod"), s) is None

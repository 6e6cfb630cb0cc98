"""Strong evidence warns a notebook early, so the grace ends at its threshold; weak evidence never does."""

from __future__ import annotations

from reaper.core.model import Verdict
from reaper.core.settings import Settings
from reaper.kinds.notebook.settings import NotebookSettings
from reaper.sweep.pipeline import decide as pipeline_decide
from tests.helpers.notebook_rules import KIND, NOW, decide, nb, signal

ENFORCE = Settings(mode="enforce")  # threshold 60 min, grace 60 min: warned after one quiet sample (5 minutes)


def test_complete_quiet_samples_warn_early_in_enforce_so_the_grace_ends_at_the_threshold():
    # Given every sample of the last hour, the last 30 minutes without activity
    d = decide(nb(), signal([0] * 6 + [1] * 6), ENFORCE)
    # Then the rule finds it reapable early, and the pipeline makes that the warning
    assert d.verdict is Verdict.ACT and d.evidence["early_warning"] and d.evidence["early_span_minutes"] == 5
    warned, _view = pipeline_decide(KIND, nb(), signal([0] * 6 + [1] * 6), ENFORCE, NOW)
    assert warned.verdict is Verdict.WARN and warned.newly_warned


def test_less_quiet_than_the_early_span_keeps():
    # the latest sample still shows activity: no warning while the owner may be at work
    assert decide(nb(), signal([1] + [0] * 11), ENFORCE).verdict is Verdict.KEEP


def test_a_missing_sample_anywhere_in_the_window_is_not_strong_evidence():
    # Given 30 quiet minutes, but one sample of the hour missing
    d = decide(nb(), signal([0] * 6 + [1] * 5 + [None]), ENFORCE)
    # Then it is kept as active (the early warning needs every sample)
    assert d.verdict is Verdict.KEEP and "early_warning" not in d.evidence


def test_no_early_warning_in_dry_run_with_grace_zero_or_when_turned_off():
    for settings in (
        Settings(),
        Settings(mode="enforce", grace_minutes=0),
        Settings(mode="enforce").with_kind(NotebookSettings(notebook_early_warning=False)),
    ):
        assert decide(nb(), signal([0] * 6 + [1] * 6), settings).verdict is Verdict.KEEP


def test_a_grace_shorter_than_half_the_threshold_warns_at_threshold_less_grace():
    # Given grace 15 min: warned after 45 quiet minutes, so the stop falls at 60
    settings = Settings(mode="enforce", grace_minutes=15)
    assert decide(nb(), signal([0] * 8 + [1] * 4), settings).verdict is Verdict.KEEP
    assert decide(nb(), signal([0] * 9 + [1] * 3), settings).evidence["early_span_minutes"] == 45

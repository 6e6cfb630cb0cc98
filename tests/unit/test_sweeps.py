"""The median stopping rule, pure."""

from __future__ import annotations

from reaper.kinds.training_job.sweeps import median_check

SIBS = {"a": [0.9, 0.6], "b": [1.0, 0.7], "c": [0.8, 0.5]}


def test_worse_than_the_median_at_the_same_evaluation_is_losing() -> None:
    check = median_check("hpo", "validation:loss", "Minimize", [1.1, 0.75], SIBS)
    assert check is not None and check.losing and check.median == 0.6 and check.evaluation == 2
    assert "0.75 at evaluation 2 is higher (worse) than the median 0.6 of 3 siblings" in check.text()


def test_equal_to_the_median_is_not_losing_and_maximize_reverses_the_sense() -> None:
    tie = median_check("hpo", "validation:loss", "Minimize", [0.6, 0.6], SIBS)
    assert tie is not None and not tie.losing
    acc = median_check("hpo", "validation:accuracy", "Maximize", [0.55], {"a": [0.7], "b": [0.6], "c": [0.9]})
    assert acc is not None and acc.losing and "lower (worse)" in acc.text()


def test_fewer_than_three_siblings_at_that_evaluation_is_not_judged() -> None:
    check = median_check("hpo", "validation:loss", "Minimize", [9.0, 9.0, 9.0], SIBS)  # nobody reached evaluation 3
    assert check is not None and not check.losing and check.median is None and check.siblings == ()


def test_nothing_reported_or_an_unknown_direction_gives_no_check() -> None:
    assert median_check("hpo", "m", "Minimize", [], SIBS) is None
    assert median_check("hpo", "m", "Sideways", [1.0], SIBS) is None

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


def test_the_best_child_so_far_is_never_losing() -> None:
    # worse than the median at its latest evaluation, but its 0.2 is the best value any child reported
    check = median_check("hpo", "validation:loss", "Minimize", [0.2, 0.75], SIBS)
    assert check is not None and not check.losing and check.leading and check.median == 0.6


def test_the_child_sagemaker_names_best_training_job_is_never_losing() -> None:
    check = median_check("hpo", "validation:loss", "Minimize", [1.1, 0.75], SIBS, child="d", best_child="d")
    assert check is not None and not check.losing and check.leading
    other = median_check("hpo", "validation:loss", "Minimize", [1.1, 0.75], SIBS, child="d", best_child="a")
    assert other is not None and other.losing and not other.leading


def test_an_objective_read_longer_than_its_page_budget_is_refused() -> None:
    from datetime import UTC, datetime, timedelta

    import pytest

    from reaper.aws.metrics import MetricQuery, MetricReadTruncated, fetch

    class Endless:
        calls = 0

        def get_metric_data(self, **_: object) -> dict[str, object]:
            self.calls += 1
            return {"MetricDataResults": [], "NextToken": f"t{self.calls}"}

    cw = Endless()
    end = datetime(2026, 1, 2, tzinfo=UTC)
    query = MetricQuery("k", "/aws/sagemaker/TrainingJobs", "validation:loss", (("TrainingJobName", "a"),), "Average", 60)
    with pytest.raises(MetricReadTruncated):
        fetch(cw, [query], end - timedelta(days=1), end, max_pages=3)
    assert cw.calls == 3

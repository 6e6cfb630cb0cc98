"""The divergence rules as pure functions: metric runs, the mirror rule, nan/inf in log lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reaper.kinds.training_job.divergence import MAX, MIN, direction_of, diverged, nan_loss

HEALTHY_NOISY_LOSS = [3.1, 2.4, 2.6, 2.1, 2.3, 1.9, 2.0, 1.7, 1.9, 1.6, 1.75, 1.5, 1.62, 1.45, 1.5, 1.4]
DIVERGED_LOSS = [3.0, 2.0, 1.5, 1.2, 1.0, 1.3, 1.7, 2.2, 3.1, 4.5]  # 5 rises, ends at 4.5x the minimum


def test_healthy_noisy_loss_is_not_diverged():
    # Given a loss that wobbles up and down on its way down
    # When the rule runs with the defaults (5 points, 2x)
    # Then nothing is found
    assert diverged("train:loss", HEALTHY_NOISY_LOSS, MIN, 5, 2.0) is None


def test_loss_that_rose_five_points_to_more_than_twice_its_minimum_is_diverged():
    f = diverged("train:loss", DIVERGED_LOSS, MIN, 5, 2.0)
    assert f is not None
    assert (f.run, f.last, f.best) == (5, 4.5, 1.0)
    assert f.text() == "train:loss rose 5 points in a row to 4.5 (4.5x its minimum 1)"


def test_four_rises_are_not_enough_and_the_count_is_a_setting():
    four = [3.0, 2.0, 1.0, 1.5, 2.2, 3.0, 4.0]
    assert diverged("loss", four, MIN, 5, 2.0) is None
    assert diverged("loss", four, MIN, 4, 2.0) is not None


def test_five_rises_that_stay_under_the_ratio_are_not_diverged():
    # Given a warm-up bump: five rises, but only to 1.3x the minimum
    creeping = [2.0, 1.0, 1.05, 1.1, 1.15, 1.2, 1.3]
    assert diverged("loss", creeping, MIN, 5, 2.0) is None
    assert diverged("loss", creeping, MIN, 5, 1.25) is not None


def test_a_loss_that_came_back_is_not_diverged():
    # Given a spike that rose 5 points past 2x, then recovered below 2x its minimum
    recovered = DIVERGED_LOSS + [1.6, 1.1, 0.9]
    assert diverged("loss", recovered, MIN, 5, 2.0) is None


def test_a_loss_that_rose_then_stayed_high_is_still_diverged():
    plateau = DIVERGED_LOSS + [4.5, 4.4, 4.6]
    f = diverged("loss", plateau, MIN, 5, 2.0)
    assert f is not None and f.last == 4.5


def test_rising_accuracy_is_healthy_and_falling_accuracy_is_diverged():
    rising = [0.2, 0.35, 0.5, 0.48, 0.6, 0.7, 0.72, 0.8, 0.79, 0.85]
    falling = [0.2, 0.5, 0.8, 0.9, 0.7, 0.55, 0.4, 0.3, 0.2]
    assert diverged("validation:accuracy", rising, MAX, 5, 2.0) is None
    f = diverged("validation:accuracy", falling, MAX, 5, 2.0)
    assert f is not None and f.direction == MAX and f.best == 0.9 and f.last == 0.2
    assert "fell 5 points in a row to 0.2" in f.text()


def test_the_ratio_means_nothing_for_non_positive_values():
    negative_elbo = [-10.0, -12.0, -13.0, -12.5, -11.0, -9.0, -7.0, -5.0]
    assert diverged("neg_loss", negative_elbo, MIN, 5, 2.0) is None


def test_nan_and_inf_values_in_a_series_are_ignored():
    assert diverged("loss", [1.0, float("nan"), 2.0, float("inf")], MIN, 2, 2.0) is None


@pytest.mark.parametrize(
    ("name", "direction"),
    [
        ("train:loss", MIN), ("val_loss", MIN), ("Validation:Loss", MIN), ("validation:accuracy", MAX), ("train_acc", MAX),
        ("auc", MAX), ("f1-score", MAX), ("precision", MAX), ("recall@10", MAX), ("mAP", MAX), ("learning_rate", None),
        ("throughput", None),
    ],
)  # fmt: skip
def test_direction_from_the_metric_name(name, direction):
    assert direction_of(name) == direction


@pytest.mark.parametrize(
    "line",
    [
        "epoch 3 step 200 loss: nan", "'loss': nan, 'lr': 0.001", "train_loss=inf", "val_loss=-inf", "Loss is NaN",
        "loss tensor(nan, device='cuda:0')", "[1,  2000] loss: Infinity",
    ],
)  # fmt: skip
def test_nan_and_inf_losses_in_log_lines_are_found(line):
    assert nan_loss(line) is not None


@pytest.mark.parametrize(
    "line",
    [
        "epoch 3 loss: 0.431",
        "loss=1.2e-3 information follows",
        "NaN values dropped from the dataset",
        "inf-norm of gradients 3.2",
        "accuracy: nan",
    ],
)
def test_lines_without_a_nan_or_inf_loss_are_not_found(line):
    assert nan_loss(line) is None


@given(st.lists(st.floats(min_value=0.01, max_value=100.0), min_size=1, max_size=60))
def test_a_loss_that_never_rises_never_diverges(values):
    # Property: a non-increasing loss has no run of rises, whatever its values
    assert diverged("loss", sorted(values, reverse=True), MIN, 5, 2.0) is None


@given(st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=1, max_size=60))
def test_an_accuracy_that_never_falls_never_diverges(values):
    assert diverged("accuracy", sorted(values), MAX, 5, 2.0) is None

"""When is a training run diverged? Pure rules on a metric's recent values and on log lines.

Metric rule (thresholds are settings): a metric that should fall (its name contains `loss`)
diverged when it rose for `points` datapoints in a row to more than `ratio` times its minimum,
and has not come back since. Metrics that should rise (names with acc, auc, f1, precision,
recall, map) use the mirror rule: fell `points` in a row to below 1/`ratio` of their maximum.
The ratio is only meaningful on positive values, so a minimum (or maximum) <= 0 never counts.
Healthy noise does not trip it: it needs an unbroken run *and* a large distance from the best.

Log rule: a line that reports a loss of nan or inf.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MIN, MAX = "min", "max"
RISING_NAMES = ("acc", "auc", "f1", "precision", "recall", "map")

# `loss: nan`, `'val_loss': inf`, `train_loss=-inf`, `Loss is NaN`, `loss tensor(nan, ...)`
NAN_LOSS = re.compile(r"loss\w*\W{0,4}(?:is\s+)?(?:tensor\()?[-+]?(nan|inf(?:inity)?)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    metric: str
    direction: str  # MIN (should fall) or MAX (should rise)
    run: int  # datapoints in the worsening run
    last: float
    best: float  # the minimum (MIN) or maximum (MAX) so far

    @property
    def factor(self) -> float:
        if self.direction == MIN:
            return self.last / self.best
        return self.best / self.last if self.last > 0 else math.inf

    def text(self) -> str:
        if self.direction == MIN:
            return f"{self.metric} rose {self.run} points in a row to {self.last:.4g} ({self.factor:.1f}x its minimum {self.best:.4g})"
        return f"{self.metric} fell {self.run} points in a row to {self.last:.4g} (its maximum was {self.best:.4g})"


def direction_of(metric: str) -> str | None:
    """Which way is better for a metric, from its name; None when the name does not say."""
    name = metric.lower()
    if "loss" in name:
        return MIN
    if any(word in name for word in RISING_NAMES):
        return MAX
    return None


def diverged(metric: str, values: Sequence[float], direction: str, points: int, ratio: float) -> Finding | None:
    """The latest run of `points` or more worsening values that ends past `ratio` from the best, if the
    metric is still that far off now; else None."""
    vals = [v for v in values if math.isfinite(v)]
    if len(vals) <= points:
        return None
    worse: Callable[[float, float], bool] = (lambda a, b: b > a) if direction == MIN else (lambda a, b: b < a)
    best_so_far = vals[0]
    run = 0
    found: Finding | None = None
    for i in range(1, len(vals)):
        run = run + 1 if worse(vals[i - 1], vals[i]) else 0
        best_so_far = min(best_so_far, vals[i - 1]) if direction == MIN else max(best_so_far, vals[i - 1])
        if run >= points and _far(vals[i], best_so_far, direction, ratio):
            found = Finding(metric, direction, run, vals[i], best_so_far)
    if found is None:
        return None
    overall = min(vals) if direction == MIN else max(vals)
    if not _far(vals[-1], overall, direction, ratio):
        return None  # it came back: recovered, not diverged
    return found


def _far(value: float, best: float, direction: str, ratio: float) -> bool:
    if best <= 0:
        return False
    return value > ratio * best if direction == MIN else value < best / ratio


def nan_loss(message: str) -> str | None:
    """The offending part of a log line that reports a nan or inf loss, else None."""
    m = NAN_LOSS.search(message)
    return m.group(0) if m else None

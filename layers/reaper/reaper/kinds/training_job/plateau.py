"""Converged and flat runs, pure: an objective that stopped improving keeps billing (docs/kinds/training-job.md).

An evaluation is one value of the watched metric as CloudWatch keeps it (its 1-minute average, so a
run that evaluates less often than once a minute has one value per evaluation). The values are
smoothed by a running median of SMOOTH, so that a single lucky or unlucky value neither starts
nor ends a plateau. A smoothed value is an improvement when it beats the best so far by more
than `min_improvement` of that best (relative). A run is:

- converged: no improvement in its last `patience` evaluations (or more); the plateau began at
  its last improvement;
- flat: the same, and it never improved at all since its first evaluations, which were read (the
  run started inside the metric window): the data or the labels are the usual suspects.

A run whose first evaluations are older than the metric window and that never improved inside it is
converged, its plateau began at or before the window's start ("at least"). Advice by default: the
run is stopped only with an opt-in (tag reaper:early-stop=converged, or ConvergedJobAction=stop).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from reaper.core.timeutil import human_duration, iso
from reaper.kinds.training_job.divergence import MIN

SMOOTH = 5


@dataclass(frozen=True)
class Plateau:
    metric: str
    direction: str
    flat: bool  # never improved since its first evaluations
    since: datetime  # the last improvement's time (flat: the first smoothed value's)
    evaluations: int  # evaluations since then
    best: float  # the smoothed best
    last: float  # the smoothed latest
    first: float  # the smoothed first value read
    at_least: bool  # the plateau began at or before the window's first value
    patience: int
    min_improvement: float

    def text(self, hourly_usd: float | None, now: datetime) -> str:
        hours = max(0.0, (now - self.since).total_seconds() / 3600.0)
        bound = "at least " if self.at_least else ""
        if hourly_usd is None:
            money = "cost since then not judged (no list price for its instance type)"
        else:
            money = f"{bound}${hours * hourly_usd:,.2f} billed since then (${hourly_usd:,.2f}/h list price)"
        better = "lower" if self.direction == MIN else "higher"
        curve = (
            f"{self.metric} went from {self.first:.4g} to {self.last:.4g}, best {self.best:.4g}; "
            f"no value {self.min_improvement:.1%} {better} than the best in its last {self.evaluations} evaluations "
            f"(patience {self.patience}), since {iso(self.since)}, {bound}{human_duration(hours * 60)} ago"
        )
        if self.flat:
            return f"flat from the start (check the data: labels, shuffling, learning rate): {curve}; {money}"
        return f"converged and still billing: {curve}; {money}"


def plateau(
    metric: str,
    points: Sequence[tuple[datetime, float]],
    direction: str,
    patience: int,
    min_improvement: float,
    saw_start: bool,
) -> Plateau | None:
    """The plateau the run is on, when it has lasted `patience` evaluations or more; else None."""
    pts = [(t, v) for t, v in points if math.isfinite(v)]
    if len(pts) < patience + SMOOTH:
        return None
    smooth = [(pts[i][0], statistics.median(v for _, v in pts[i - SMOOTH + 1 : i + 1])) for i in range(SMOOTH - 1, len(pts))]
    sign = 1.0 if direction == MIN else -1.0
    best, last_gain = smooth[0][1], 0
    for i in range(1, len(smooth)):
        value = smooth[i][1]
        if sign * (best - value) > min_improvement * abs(best):
            best, last_gain = value, i
    waited = len(smooth) - 1 - last_gain
    if waited < patience:
        return None
    never = last_gain == 0
    return Plateau(
        metric=metric,
        direction=direction,
        flat=never and saw_start,
        since=smooth[last_gain][0],
        evaluations=waited,
        best=best,
        last=smooth[-1][1],
        first=smooth[0][1],
        at_least=never and not saw_start,
        patience=patience,
        min_improvement=min_improvement,
    )

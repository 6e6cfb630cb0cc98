"""Labelled training curves for the converged/flat replay (docs/kinds/training-job.md#converged-and-flat-runs).

Each run is a loss series, one value a minute, oldest first, labelled by construction:

- plateaued (wasted): falls steeply, then holds at a floor with small noise; its plateau starts at
  `plateau_at` (the first value on the floor);
- flat (wasted): never moves from its first value but for small noise (broken data: shuffled
  labels, a learning rate of 0): its plateau starts at its first value;
- healthy (kept): falls slowly but steadily, a few times the minimum improvement per patience;
- noisy (kept): falls, with noise ten times the healthy run's: a noisy run that improves must not
  be told.

`told_by` is the number of values after which the run must have been told: its plateau has then
lasted `patience` evaluations, plus the smoothing window the rule reads (reaper.kinds.training_job.plateau.SMOOTH).
Seeded: the same seed gives the same runs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

LABELS = ("plateaued", "flat", "healthy", "noisy")
WASTED = ("plateaued", "flat")


@dataclass(frozen=True)
class Run:
    name: str
    label: str
    values: tuple[float, ...]
    plateau_at: int | None  # index of the first value of the plateau (wasted runs only)

    @property
    def wasted(self) -> bool:
        return self.label in WASTED

    def told_by(self, patience: int, smooth: int) -> int | None:
        return None if self.plateau_at is None else self.plateau_at + patience + smooth


def plateaued(rng: random.Random, length: int, plateau_at: int) -> list[float]:
    floor = rng.uniform(0.2, 0.6)
    start = floor * rng.uniform(3.0, 6.0)
    out: list[float] = []
    for t in range(length):
        if t < plateau_at:
            out.append(start - (start - floor) * t / plateau_at)  # at least 3 % a minute: every minute improves
        else:
            out.append(floor * (1 + rng.gauss(0, 0.002)))
    return out


def flat(rng: random.Random, length: int) -> list[float]:
    level = rng.choice((2.3026, 0.6931, 4.6052))  # ln(10), ln(2), ln(100): chance on 10, 2 or 100 classes
    return [level * (1 + rng.gauss(0, 0.003)) for _ in range(length)]


def healthy(rng: random.Random, length: int) -> list[float]:
    start, rate = rng.uniform(1.0, 3.0), rng.uniform(0.0015, 0.003)  # 4.5-9 % per 30 evaluations
    return [start * (1 - rate) ** t * (1 + rng.gauss(0, 0.001)) for t in range(length)]


def noisy(rng: random.Random, length: int) -> list[float]:
    start, rate = rng.uniform(1.0, 3.0), rng.uniform(0.003, 0.005)
    return [start * (1 - rate) ** t * (1 + rng.gauss(0, 0.02)) for t in range(length)]


def runs(seed: int, per_label: int, patience: int, smooth: int, lag: int) -> list[Run]:
    """`per_label` runs of each label. A wasted run is `lag` values past its `told_by` (0 <= lag < one sweep)."""
    rng = random.Random(seed)
    out: list[Run] = []
    for label in LABELS:
        for k in range(per_label):
            name = f"{label}-{k:02d}"
            extra = rng.randrange(lag) if lag > 0 else 0
            if label == "plateaued":
                at = rng.randrange(20, 50)
                out.append(Run(name, label, tuple(plateaued(rng, at + patience + smooth + extra, at)), at))
            elif label == "flat":
                out.append(Run(name, label, tuple(flat(rng, patience + smooth + extra)), 0))
            elif label == "healthy":
                out.append(Run(name, label, tuple(healthy(rng, rng.randrange(60, 150))), None))
            else:
                out.append(Run(name, label, tuple(noisy(rng, rng.randrange(60, 150))), None))
    return out

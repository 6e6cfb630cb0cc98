"""The training-job kind's own settings (docs/kinds/training-job.md), read from their REAPER_* variables
(reaper.core.settings). The ceilings themselves (REAPER_MAX_HOURS, REAPER_MAX_USD) stay shared: the
tag reader and `reaper report` read them too."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from reaper.core.settings import KindSettings


class TrainingJobSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {
        "REAPER_TRAINING_DEFAULT_CEILINGS_ACT": "training_default_ceilings_act",
        "REAPER_STALLED_MINUTES": "stalled_minutes",
        "REAPER_STALLED_JOB_ACTION": "stalled_job_action",
        "REAPER_CONVERGED_PATIENCE": "converged_patience",
        "REAPER_CONVERGED_MIN_IMPROVEMENT": "converged_min_improvement",
        "REAPER_CONVERGED_JOB_ACTION": "converged_job_action",
        "REAPER_SPOT_WITHOUT_CHECKPOINTS": "spot_without_checkpoints",
        "REAPER_WARM_POOL_MAX_MINUTES": "warm_pool_max_minutes",
        "REAPER_CEILING_WARN_PERCENT": "ceiling_warn_percent",
        "REAPER_DIVERGENCE_POINTS": "divergence_points",
        "REAPER_DIVERGENCE_RATIO": "divergence_ratio",
        "REAPER_GPU_IDLE_PERCENT": "gpu_idle_percent",
        "REAPER_GPU_IDLE_MINUTES": "gpu_idle_minutes",
    }

    # the ceilings (REAPER_MAX_HOURS, REAPER_MAX_USD) apply to jobs without a ceiling tag: notify-only unless the admin opts in
    training_default_ceilings_act: bool = False
    # stalled jobs: no new log event and no CPU or GPU use for this long; stopped (after a
    # warning and the grace) only when the admin opts in, like the default ceilings
    stalled_minutes: int = Field(default=60, ge=15, le=10_080)
    stalled_job_action: str = Field(default="notify", pattern="^(notify|stop)$")
    # converged and flat training runs (docs/kinds/training-job.md#converged-and-flat-runs): told after
    # `converged_patience` evaluations without a relative gain of `converged_min_improvement` (the
    # tags reaper:patience and reaper:min-improvement override them per job); stopped (after a warning
    # and the grace) only when the admin opts in, or the job carries reaper:early-stop=converged
    converged_patience: int = Field(default=30, ge=1, le=10_080)
    converged_min_improvement: float = Field(default=0.01, ge=0, le=0.5)
    converged_job_action: str = Field(default="notify", pattern="^(notify|stop)$")
    # a managed spot training job without CheckpointConfig: told to its owner, or stopped (admin opt-in)
    spot_without_checkpoints: str = Field(default="notify", pattern="^(notify|stop)$")
    # managed warm pools kept longer than this (billed wall-clock minutes) are ended, after a warning
    warm_pool_max_minutes: int = Field(default=30, ge=1, le=60)
    ceiling_warn_percent: float = Field(default=80.0, gt=0, lt=100)  # warn the owner once a job passes this share of a ceiling
    divergence_points: int = Field(default=5, ge=2, le=1_000)  # consecutive worsening datapoints that count as diverging
    divergence_ratio: float = Field(default=2.0, gt=1, le=1_000)  # ... ending this far past the metric's best value
    gpu_idle_percent: float = Field(default=70.0, gt=0, le=100)  # GPU advisory below this average utilisation
    gpu_idle_minutes: int = Field(default=30, ge=10, le=10_080)  # ... over this long

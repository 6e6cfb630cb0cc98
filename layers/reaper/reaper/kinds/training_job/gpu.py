"""The GPU advisory: a training job whose GPUs stayed below a threshold is probably waiting on
its data loader. Advice only, never an action. Pure.

SageMaker publishes GPUUtilization per instance (dimension Host = JOB/algo-N) as 0-100 times
the number of GPUs on the instance, so the published value is divided by the GPU count. For a
type not in the table the published value is compared as it is: a sum below the threshold
means an average below it too, so the advisory can be missed but never wrongly given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from reaper.aws.metrics import Series

PERIOD = timedelta(minutes=5)

GPUS_PER_INSTANCE = {
    "ml.g4dn.xlarge": 1, "ml.g4dn.2xlarge": 1, "ml.g4dn.4xlarge": 1, "ml.g4dn.8xlarge": 1, "ml.g4dn.16xlarge": 1, "ml.g4dn.12xlarge": 4,
    "ml.g5.xlarge": 1, "ml.g5.2xlarge": 1, "ml.g5.4xlarge": 1, "ml.g5.8xlarge": 1, "ml.g5.16xlarge": 1,
    "ml.g5.12xlarge": 4, "ml.g5.24xlarge": 4, "ml.g5.48xlarge": 8,
    "ml.g6.xlarge": 1, "ml.g6.2xlarge": 1, "ml.g6.4xlarge": 1, "ml.g6.8xlarge": 1, "ml.g6.16xlarge": 1,
    "ml.g6.12xlarge": 4, "ml.g6.24xlarge": 4, "ml.g6.48xlarge": 8,
    "ml.p3.2xlarge": 1, "ml.p3.8xlarge": 4, "ml.p3.16xlarge": 8, "ml.p3dn.24xlarge": 8,
    "ml.p4d.24xlarge": 8, "ml.p4de.24xlarge": 8, "ml.p5.48xlarge": 8, "ml.p5e.48xlarge": 8, "ml.p5en.48xlarge": 8,
}  # fmt: skip


@dataclass(frozen=True)
class GpuAdvice:
    mean: float  # average utilisation per GPU over the window, percent
    highest: float  # the highest 5-minute average of any host
    hosts: int
    minutes: int
    per_gpu: bool  # False: GPU count unknown, figures are as published

    def text(self, threshold: float) -> str:
        scale = "" if self.per_gpu else " (as published, summed over the instance's GPUs)"
        return (
            f"its GPUs averaged {self.mean:.0f}% over the last {self.minutes} min{scale}, never above "
            f"{self.highest:.0f}% in any 5 minutes on {self.hosts} host(s), under the {threshold:g}% mark: the data loader is "
            "the likely bottleneck"
        )


def idle_gpus(
    gpu: Mapping[str, Series], instance_type: str | None, window_end: datetime, minutes: int, threshold: float
) -> GpuAdvice | None:
    """Advice when every host has every 5-minute average of the window and all are under the threshold."""
    if not gpu:
        return None
    gpus = GPUS_PER_INSTANCE.get(instance_type or "")
    needed = math.ceil(minutes / 5)
    slots = {window_end - PERIOD * (k + 1) for k in range(needed)}
    values: list[float] = []
    for series in gpu.values():
        in_window = {ts: v for ts, v in series if ts in slots}
        if set(in_window) != slots:
            return None  # a gap: unknown, and unknown is no advice
        values.extend(v / gpus if gpus else v for v in in_window.values())
    if not values or max(values) >= threshold:
        return None
    return GpuAdvice(sum(values) / len(values), max(values), len(gpu), needed * 5, per_gpu=gpus is not None)

"""The EC2 kind's own settings (docs/kinds/ec2.md), read from their REAPER_* variables (reaper.core.settings)."""

from __future__ import annotations

from typing import ClassVar

from reaper.core.settings import KindSettings


class Ec2Settings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {"REAPER_EC2_CPU_ONLY": "cpu_only", "REAPER_GPU_SSM_READS": "gpu_ssm_reads"}

    # Ec2CpuOnly: let CPU and network alone decide when an instance publishes no GPU metric
    cpu_only: bool = False
    # GpuSsmReads: one nvidia-smi sample through Systems Manager for GPU boxes without a GPU metric
    # (docs/ssm-gpu-reads.md); `reaper coverage` says whether it is on (reaper.kinds.setting_of)
    gpu_ssm_reads: bool = False

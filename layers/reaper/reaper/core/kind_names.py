"""The kinds' names and packages: plain data, so `reaper --help` can list `--kind`'s choices without
importing a kind (reaper/kinds/__init__.py is the registry that loads them)."""

from __future__ import annotations

KIND_PACKAGES: dict[str, str] = {
    "notebook": "reaper.kinds.notebook",
    "endpoint": "reaper.kinds.endpoint",
    "training-job": "reaper.kinds.training_job",
    "fsx": "reaper.kinds.fsx",
    "studio-app": "reaper.kinds.studio_app",
    "ec2": "reaper.kinds.ec2",
    # capacity reservations, Capacity Blocks, training plans
    "capacity": "reaper.kinds.capacity",
    "bedrock-pt": "reaper.kinds.bedrock_pt",
    # SageMaker managed MLflow tracking servers
    "mlflow": "reaper.kinds.mlflow",
    # storage left behind: the reaper's own FSx backups, unattached ML volumes (docs/kinds/storage.md)
    "storage": "reaper.kinds.storage",
}
KIND_NAMES: tuple[str, ...] = tuple(sorted(KIND_PACKAGES))

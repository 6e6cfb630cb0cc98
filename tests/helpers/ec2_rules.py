"""One EC2 GPU box as the ec2 rules judge it: its facts, its CPU, network and accelerator series, and
decide() at a fixed Wednesday afternoon."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.core.model import Resource
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.ec2.model import GPU_SERIES, PERIOD, Ec2Facts, Ec2Signal, window_end
from reaper.kinds.ec2.rules import decide

NOW = datetime(2026, 12, 2, 14, 3, tzinfo=UTC)  # a Wednesday afternoon
FACTS = Ec2Facts("gpu", "1 x NVIDIA T4g", "ebs", 0, "on-demand", None, None, False, NOW - timedelta(hours=6))


def series(values: list[float | None], now: datetime = NOW) -> list[tuple[datetime, float]]:
    end = window_end(now) + PERIOD
    return sorted((end - PERIOD * (k + 1), v) for k, v in enumerate(values) if v is not None)


def signal(cpu=None, net=None, gpu=None, neuron=None) -> Ec2Signal:
    acc = {}
    if gpu is not None:
        acc = {GPU_SERIES: series(gpu)}
    if neuron is not None:
        acc = {"neuroncore_utilization": series(neuron)}
    return Ec2Signal(series(cpu or [1.0] * 36), series(net or [1000.0] * 36), acc, window_end(NOW))


def run(facts: Ec2Facts = FACTS, sig: Ec2Signal | None = None, tags: dict[str, str] | None = None, settings: Settings | None = None):
    settings = settings or Settings()
    r = Resource("ec2", "i-0abc", "arn:aws:ec2:us-east-1:1:instance/i-0abc", "us-east-1", "running", tags or {}, facts=facts)
    return decide(r, sig, read_tags(r.tags, settings), settings, NOW)

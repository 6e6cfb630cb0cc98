"""CPU, network and accelerator metrics for every instance that could be stopped, in GetMetricData batches.

Four queries per instance (CPU, network in, network out, and the accelerator: for a GPU one
`MAX(SEARCH(...))` over every per-GPU series the CloudWatch agent publishes, for Neuron its
per-instance metric), at most 100 searches to a call: 1,000 GPU instances cost 10 calls. Instances kept whatever their use (managed,
instance-store root, Spot that cannot stop) are not queried at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from reaper.aws.clients import Clients
from reaper.aws.metrics import MetricQuery, Series, fetch
from reaper.core.model import Resource
from reaper.core.policy import is_production, read_tags, screen
from reaper.core.settings import Settings
from reaper.kinds.ec2 import ssm
from reaper.kinds.ec2.model import (
    AGENT_NAMESPACE,
    EC2_NAMESPACE,
    GPU_SERIES,
    KIND,
    LOOKBACK_MINUTES,
    NEURON_METRIC,
    PERIOD,
    Ec2Facts,
    Ec2Signal,
    GpuSample,
    align,
    gpu_search,
    window_end,
)
from reaper.kinds.ec2.settings import Ec2Settings

PERIOD_SECONDS = int(PERIOD.total_seconds())


def worth_reading(r: Resource) -> bool:
    """Could this instance be stopped if it were idle? Only those are read."""
    facts = r.facts_as(Ec2Facts)
    return r.state == "running" and facts.managed_by is None and facts.root_device_type == "ebs" and facts.spot_stop is None


def accelerator_metrics(facts: Ec2Facts) -> tuple[str, ...]:
    return (GPU_SERIES,) if facts.accelerator == "gpu" else (NEURON_METRIC,)


def queries_for(r: Resource) -> list[MetricQuery]:
    dims = (("InstanceId", r.id),)
    out = [
        MetricQuery(f"{r.id}|cpu", EC2_NAMESPACE, "CPUUtilization", dims, stat="Maximum", period=PERIOD_SECONDS),
        MetricQuery(f"{r.id}|in", EC2_NAMESPACE, "NetworkIn", dims, stat="Sum", period=PERIOD_SECONDS),
        MetricQuery(f"{r.id}|out", EC2_NAMESPACE, "NetworkOut", dims, stat="Sum", period=PERIOD_SECONDS),
    ]
    if r.facts_as(Ec2Facts).accelerator == "gpu":
        search = gpu_search(r.id, PERIOD_SECONDS)
        out.append(MetricQuery(f"{r.id}|acc|{GPU_SERIES}", AGENT_NAMESPACE, GPU_SERIES, dims, period=PERIOD_SECONDS, expression=search))
    else:
        out.append(MetricQuery(f"{r.id}|acc|{NEURON_METRIC}", AGENT_NAMESPACE, NEURON_METRIC, dims, stat="Maximum", period=PERIOD_SECONDS))
    return out


def signals(clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, Ec2Signal]:
    readable = [r for r in resources if worth_reading(r)]
    if not readable:
        return {}
    end = align(now) + PERIOD  # up to now: activity in the newest, still-filling period counts too
    longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in readable])
    start = window_end(now) - timedelta(minutes=max(longest, LOOKBACK_MINUTES))
    series = fetch(clients("cloudwatch"), [q for r in readable for q in queries_for(r)], start, end)
    out: dict[str, Ec2Signal] = {}
    samples = _ssm_samples(clients, readable, series, settings, now)
    for r in readable:
        sample = samples.get(r.id)
        accelerator = {m: series.get(f"{r.id}|acc|{m}", []) for m in accelerator_metrics(r.facts_as(Ec2Facts))}
        out[r.id] = Ec2Signal(
            cpu=series.get(f"{r.id}|cpu", []),
            network=network_sum(series.get(f"{r.id}|in", []), series.get(f"{r.id}|out", [])),
            accelerator={m: s for m, s in accelerator.items() if s},
            window_end=window_end(now),
            gpu_sample=sample if sample is not None and _no_gpu_series(r, series) else None,
            store=sample.store if sample is not None and _has_store(r) else None,
        )
    return out


def _no_gpu_series(r: Resource, series: Mapping[str, Series]) -> bool:
    return r.facts_as(Ec2Facts).accelerator == "gpu" and not series.get(f"{r.id}|acc|{GPU_SERIES}")


def _has_store(r: Resource) -> bool:
    return r.facts_as(Ec2Facts).instance_store_gib > 0


def _ssm_samples(
    clients: Clients, readable: list[Resource], series: Mapping[str, Series], settings: Settings, now: datetime
) -> dict[str, GpuSample]:
    """GpuSsmReads=on: one command (nvidia-smi, and the instance store) for the GPU boxes without a GPU series and
    the boxes with an instance store that is not tagged disposable, except those the reaper may not change
    (exempt, snoozed, bad tag, production stage): IAM denies SendCommand on them too, and their verdict does
    not depend on it."""
    if not settings.of(Ec2Settings).gpu_ssm_reads:
        return {}
    candidates = [r.id for r in readable if _asked(r, series, settings, now)]
    return ssm.read(clients("ssm"), candidates) if candidates else {}


def _asked(r: Resource, series: Mapping[str, Series], settings: Settings, now: datetime) -> bool:
    view = read_tags(r.tags, settings)
    if screen(view, settings, now) is not None or is_production(view, settings):
        return False
    return _no_gpu_series(r, series) or (_has_store(r) and not view.disposable)


def network_sum(inbound: Series, outbound: Series) -> Series:
    """In + out per period; a period where only one direction was reported is left out (a gap)."""
    outs = {align(ts): v for ts, v in outbound}
    summed = [(align(ts), v + outs[align(ts)]) for ts, v in inbound if align(ts) in outs]
    return sorted(summed)

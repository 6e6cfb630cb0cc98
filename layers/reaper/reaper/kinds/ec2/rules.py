"""The ec2 decision, pure: (instance, metrics, tags, settings, now) -> Decision.

In order: not running; managed by something else; instance-store root; a Spot instance that cannot
stop; off-hours; started too recently; then the evidence — every signal under its threshold in
every period of the window, or it is kept. Last, a stop that would erase instance-store data waits
for the owner's `reaper:disposable=true` or their "Stop anyway" in Slack; with GpuSsmReads the box's
instance store is read, and one that holds nothing is stopped like any other (docs/kinds/ec2.md).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from reaper.aws.metrics import Series
from reaper.core.model import CONSENT, Decision, Resource, Verdict
from reaper.core.policy import TagView, off_hours_stop
from reaper.core.settings import Settings
from reaper.core.timeutil import human_duration, iso
from reaper.kinds.ec2 import ActionName
from reaper.kinds.ec2.managed import managed_by
from reaper.kinds.ec2.model import (
    AGENT_CONFIG_HINT,
    CPU_IDLE_PERCENT,
    GPU_IDLE_PERCENT,
    GPU_METRICS,
    GPU_SERIES,
    KIND,
    NETWORK_IDLE_BYTES,
    NEURON_IDLE_PERCENT,
    NEURON_METRIC,
    PERIOD,
    Ec2Facts,
    Ec2Signal,
    GpuSample,
    StoreReading,
    align,
    window_end,
)
from reaper.kinds.ec2.settings import Ec2Settings

MB = 1024 * 1024
# Evidence key on a keep whose evidence could not be read (a gap, no GPU metric): a sweep keeps it, and
# so does a Stop-now click (`guard`); a kill date acts whatever the activity, so it does not look at it.
UNKNOWN = "unknown_evidence"

# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_StopInstances.html
# "You can't stop or hibernate instance store-backed instances."
# Evidence keys of the instance store, as GpuSsmReads read it this sweep (kinds/ec2/ssm.py): nothing on it (the
# stop loses nothing), or what is on it (GB and where). The Slack button reads STORE_USED_GB.
STORE_EMPTY = "instance_store_empty"
STORE_USED_GB = "instance_store_used_gb"
STORE_MOUNTS = "instance_store_mounts"
GB = 1_000_000_000
# A consent covers the figure it was shown: a fresh reading above it by more than this refuses the stop.
CONSENT_SLACK = 1.10
CONSENT_SLACK_GB = 1.0

INSTANCE_STORE_ROOT = "instance-store root device: it cannot be stopped, only terminated, and the reaper never terminates"


def idle_window(view: TagView, settings: Settings) -> int:
    return view.idle_minutes or settings.idle_for(KIND)


def decide(resource: Resource, signal: Ec2Signal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    facts = resource.facts_as(Ec2Facts)
    if resource.state != "running":
        return Decision(Verdict.KEEP, f"not running ({resource.state})")
    if facts.managed_by:
        return Decision(Verdict.KEEP, f"{facts.managed_by}: left to what manages it", evidence={"managed_by": facts.managed_by})
    if facts.root_device_type != "ebs":
        return Decision(Verdict.KEEP, INSTANCE_STORE_ROOT)
    if facts.spot_stop:
        return Decision(Verdict.KEEP, facts.spot_stop)

    decision = off_hours_stop(view, settings, now, ActionName.STOP) or _evidence(resource, facts, signal, view, settings, now)
    if decision.verdict is Verdict.ACT and facts.instance_store_gib and not view.disposable:
        return _instance_store(resource, facts, decision, settings, signal.store if signal else None)
    return decision


def guard(resource: Resource, view: TagView, settings: Settings, ruled: Decision | None = None) -> str | None:
    """Why this instance is not changed whatever asks (a sweep, a kill date, a budget, a Stop-now click),
    or None. Read on the tags as they are now (the gate passes them read again just before the stop).
    With `ruled` (the rule's fresh decision, for a click; the decision about to be carried out, at the gate),
    unknown evidence keeps it too, and an instance store is let through when this sweep read it empty or the
    owner (or an admin) consented to losing what is on it."""
    facts = resource.facts_as(Ec2Facts)
    managed = managed_by(resource.tags) or facts.managed_by
    if managed:
        return f"{managed}: left to what manages it"
    if facts.root_device_type != "ebs":
        return INSTANCE_STORE_ROOT
    if facts.spot_stop:
        return facts.spot_stop
    if facts.instance_store_gib and not view.disposable:
        why = _store_refusal(facts, settings, ruled)
        if why is not None:
            return why
    if ruled is not None and ruled.verdict is Verdict.KEEP and ruled.evidence.get(UNKNOWN):
        return ruled.reason
    return None


def _store_refusal(facts: Ec2Facts, settings: Settings, ruled: Decision | None) -> str | None:
    """Why the instance store still keeps it, or None: read empty this sweep, or a consent that covers what is on it."""
    evidence = ruled.evidence if ruled is not None else {}
    if evidence.get(STORE_EMPTY) is True:
        return None
    consent = evidence.get(CONSENT)
    if not isinstance(consent, dict):
        return (
            f"a stop erases its {facts.instance_store_gib} GB instance store (local NVMe): "
            f"tag {settings.tag('disposable')}=true to let the reaper stop it"
        )
    shown, now = float(consent.get("gb") or 0.0), evidence.get(STORE_USED_GB)
    if isinstance(now, int | float) and now > shown * CONSENT_SLACK + CONSENT_SLACK_GB:
        return f"its instance store now holds {now:,.1f} GB, more than the {shown:,.1f} GB consented to: the next message asks again"
    return None


def _evidence(resource: Resource, facts: Ec2Facts, signal: Ec2Signal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    window = idle_window(view, settings)
    end = signal.window_end if signal and signal.window_end else window_end(now)
    start = end - timedelta(minutes=window)
    # the figures behind the reason (Decision.evidence): free-form by design, written here and shown as JSON
    evidence: dict[str, object] = {"idle_window_minutes": window}
    if facts.launched_at is not None and facts.launched_at > start:
        return Decision(
            Verdict.KEEP,
            f"started {human_duration(max(now - facts.launched_at, timedelta(0)))} ago: not yet {window} min of evidence",
            evidence={**evidence, "launched_at": facts.launched_at},
        )
    slots = [end - PERIOD * (k + 1) for k in range(math.ceil(window / 5))]
    cpu, network = (signal.cpu, signal.network) if signal else ([], [])
    accelerator = signal.accelerator if signal else {}
    # Activity anywhere from the window's start to now keeps it, whatever else is missing.
    busy = _busiest(start, cpu, network, accelerator)
    if busy is not None:
        ts, what = busy
        ago = human_duration(max(now - (ts + PERIOD), timedelta(0)))
        return Decision(Verdict.KEEP, f"in use {ago} ago ({what}; idle window {window} min)", evidence={**evidence, "last_active": ts})

    sample = _usable_sample(signal, accelerator, settings)
    sampled = _sample_decision(resource, sample, evidence)
    if sampled is not None:
        return sampled

    for name, series in (("CPUUtilization", cpu), ("NetworkIn/NetworkOut", network)):
        missing = _missing(series, slots)
        if missing:
            what = f"no {name} data" if missing == len(slots) else f"gap in {name} data ({missing} of {len(slots)} periods missing)"
            if sample is not None:
                return _sample_only(sample, f"{what} in the last {window} min", {**evidence, "missing_periods": missing})
            return Decision(
                Verdict.KEEP,
                f"{what} in the last {window} min: unknown is not idle",
                evidence={**evidence, "missing_periods": missing, UNKNOWN: True},
                unknown="metric-gap",
            )

    metric_names = (GPU_SERIES,) if facts.accelerator == "gpu" else (NEURON_METRIC,)
    if not accelerator and sample is not None:
        evidence.update(accelerator_metric="nvidia-smi sample (GpuSsmReads)", gpu_sample=_figures(sample))
    elif not accelerator:
        if not settings.of(Ec2Settings).cpu_only:
            return _no_accelerator_metric(resource, facts, metric_names, evidence)
        evidence["accelerator_metric"] = "none (REAPER_EC2_CPU_ONLY: CPU and network decide)"
    else:
        primary = metric_names[0]
        missing = _missing(accelerator.get(primary, []), slots)
        if missing:
            return Decision(
                Verdict.KEEP,
                f"gap in {_label(primary)} data ({missing} of {len(slots)} periods missing) in the last {window} min: unknown is not idle",
                evidence={**evidence, "missing_periods": missing, UNKNOWN: True},
                unknown="metric-gap",
            )

    return _idle(evidence, cpu, network, accelerator, start, now, sample)


def _idle(
    evidence: dict[str, object],
    cpu: Series,
    network: Series,
    accelerator: dict[str, Series],
    start: datetime,
    now: datetime,
    sample: GpuSample | None = None,
) -> Decision:
    """Every period of the window was quiet: stop it, saying the peaks it stayed under."""
    evidence = {
        **evidence,
        "cpu_max_percent": _peak(cpu, start),
        "network_max_mb_per_5min": round(_peak(network, start) / MB, 2),
        **{f"{m}_max": _peak(s, start) for m, s in accelerator.items()},
    }
    first = min((ts for ts, _ in cpu), default=start)
    shown = [f"CPU ≤ {evidence['cpu_max_percent']:.1f} %", f"network ≤ {evidence['network_max_mb_per_5min']:.2f} MB per 5 min"]
    shown += [f"{_label(m)} ≤ {evidence[f'{m}_max']:.0f} %" for m in accelerator]
    if not accelerator and sample is None:
        shown.append("no GPU metric (CPU-only policy)")
    now_too = f"; nvidia-smi reads 0 % on all {len(sample.gpus)} GPU(s) now" if not accelerator and sample is not None else ""
    return Decision(
        Verdict.ACT,
        f"idle for at least {human_duration(now - min(first, start))}: {', '.join(shown)} in every 5-minute period{now_too}",
        action=ActionName.STOP,
        evidence=evidence,
    )


def _usable_sample(signal: Ec2Signal | None, accelerator: dict[str, Series], settings: Settings) -> GpuSample | None:
    """The nvidia-smi sample, where it stands in for a GPU series. Without a reading, the CPU-only policy
    (the admin's choice) still lets CPU and network decide."""
    sample = signal.gpu_sample if signal and not accelerator else None
    if sample is not None and sample.status != "read" and settings.of(Ec2Settings).cpu_only:
        return None
    return sample


def _sample_decision(resource: Resource, sample: GpuSample | None, evidence: dict[str, object]) -> Decision | None:
    """Keep on the sample alone (a busy GPU, no reading, a reading neither busy nor 0 %); None = go on:
    an all-0 % sample still needs CPU and network idle over the whole window."""
    if sample is None:
        return None
    if sample.status == "no-agent":
        return Decision(
            Verdict.KEEP,
            "no GPU metric, and no online SSM Agent to read nvidia-smi (GpuSsmReads): unknown is not idle. "
            "Install the CloudWatch agent's nvidia_gpu section, or start SSM Agent with AmazonSSMManagedInstanceCore",
            evidence={**evidence, "accelerator_metric": None, UNKNOWN: True},
            unknown="no-ssm-agent",
        )
    if sample.status != "read":
        return Decision(
            Verdict.KEEP,
            f"no GPU metric, and the nvidia-smi reading failed ({sample.detail}): unknown is not idle",
            evidence={**evidence, "accelerator_metric": None, UNKNOWN: True},
            unknown="ssm-read-failed",
        )
    busiest = max(util for util, _ in sample.gpus)
    if busiest >= GPU_IDLE_PERCENT:
        return Decision(
            Verdict.KEEP,
            f"in use now (nvidia-smi: busiest GPU at {busiest:.0f} %)",
            evidence={**evidence, "gpu_sample": _figures(sample)},
        )
    if busiest > 0:
        return _sample_only(sample, f"nvidia-smi reads {busiest:.0f} % on its busiest GPU, neither busy nor idle", evidence)
    return None


def _sample_only(sample: GpuSample, why: str, evidence: dict[str, object]) -> Decision:
    return Decision(
        Verdict.KEEP,
        f"{why}: one nvidia-smi sample alone is not evidence of idleness, so it is kept",
        evidence={**evidence, "gpu_sample": _figures(sample), UNKNOWN: True},
        unknown="gpu-sample-only",
    )


def _figures(sample: GpuSample) -> list[dict[str, float]]:
    return [{"utilization_gpu_percent": u, "memory_used_mib": m} for u, m in sample.gpus]


def _busiest(start: datetime, cpu: Series, network: Series, accelerator: dict[str, Series]) -> tuple[datetime, str] | None:
    """The latest period at or after `start` where any signal was over its threshold."""
    hits: list[tuple[datetime, str]] = []
    hits += [(align(ts), f"CPU {v:.0f} %") for ts, v in cpu if align(ts) >= start and v >= CPU_IDLE_PERCENT]
    hits += [(align(ts), f"network {v / MB:.1f} MB in 5 min") for ts, v in network if align(ts) >= start and v >= NETWORK_IDLE_BYTES]
    for metric, series in accelerator.items():
        limit = NEURON_IDLE_PERCENT if metric == NEURON_METRIC else GPU_IDLE_PERCENT
        label = _label(metric)
        hits += [(align(ts), f"{label} {v:.0f} %") for ts, v in series if align(ts) >= start and v >= limit]
    return max(hits, key=lambda h: h[0]) if hits else None


def _label(metric: str) -> str:
    if metric == GPU_SERIES:
        return "GPU utilization (busiest GPU)"
    return metric.removeprefix("nvidia_smi_")


def _missing(series: Series, slots: list[datetime]) -> int:
    have = {align(ts) for ts, _ in series}
    return sum(1 for s in slots if s not in have)


def _peak(series: Series, start: datetime) -> float:
    return max((v for ts, v in series if align(ts) >= start), default=0.0)


def _no_accelerator_metric(resource: Resource, facts: Ec2Facts, metrics: tuple[str, ...], evidence: dict[str, object]) -> Decision:
    if facts.accelerator == "gpu":
        how = (
            "install the CloudWatch agent with its nvidia_gpu section (one series per GPU is enough), e.g. "
            f"`{AGENT_CONFIG_HINT}` (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch-Agent-NVIDIA-GPU.html)"
        )
        shown = " / ".join(GPU_METRICS)
    else:
        how = f"publish neuron-monitor's NeuronCore utilisation as CWAgent/{NEURON_METRIC} with dimension InstanceId"
        shown = " / ".join(metrics)
    return Decision(
        Verdict.KEEP,
        f"no {shown} data: GPU use cannot be seen, so it is kept (a GPU box at 2 % CPU can be training flat out). "
        f"To let the reaper see it, {how}",
        evidence={**evidence, "accelerator_metric": None, UNKNOWN: True},
        notify=True,
        notify_key=f"ec2-no-accelerator-metric:{resource.id}",  # told once, not every sweep
        unknown="no-gpu-metric",
    )


def _instance_store(resource: Resource, facts: Ec2Facts, decision: Decision, settings: Settings, store: StoreReading | None) -> Decision:
    """A stop the evidence asks for, on a box with an instance store: stopped when this sweep read nothing on it;
    kept with the figure and where when it holds files; kept as today without a reading."""
    if store is None or store.status != "read" or not store.disks:
        # no reading, or one that found no device naming itself instance storage on a type that has some: the
        # model string is how the box tells them apart (docs/aws-assumptions.md, I-1), so without it, today's rule
        return _instance_store_kept(resource, facts, decision, settings)
    if not store.with_data:
        where = ", ".join(f"{m.mount} (no files)" for m in store.mounts) or "nothing mounted"
        return decision.with_(
            reason=f"{decision.reason}; its {facts.instance_store_gib} GB instance store holds nothing ({where}): the stop loses nothing",
            evidence={**decision.evidence, STORE_EMPTY: True, "instance_store_gib": facts.instance_store_gib},
        )
    used = round(store.used_bytes / GB, 1)
    where = ", ".join(f"{m.mount} ({m.used_bytes / GB:,.1f} GB)" for m in store.with_data)
    return Decision(
        Verdict.KEEP,
        f"would stop ({decision.reason}), but its instance store holds {used:,.1f} GB of files at {where}, and a stop "
        f"erases it: the owner (or an admin) can stop it anyway from Slack, or tag {settings.tag('disposable')}=true",
        evidence={
            **decision.evidence,
            "instance_store_gib": facts.instance_store_gib,
            STORE_USED_GB: used,
            STORE_MOUNTS: [m.mount for m in store.with_data],
        },
        notify=True,
        notify_key=f"ec2-instance-store-data:{resource.id}:{iso(facts.launched_at) if facts.launched_at else '-'}",
    )


def _instance_store_kept(resource: Resource, facts: Ec2Facts, decision: Decision, settings: Settings) -> Decision:
    # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/InstanceStorage.html: instance-store data
    # is lost when the instance is stopped, hibernated or terminated.
    return Decision(
        Verdict.KEEP,
        f"would stop ({decision.reason}), but a stop erases its {facts.instance_store_gib} GB instance store (local NVMe): "
        f"tag {settings.tag('disposable')}=true to let the reaper stop it anyway",
        evidence={**decision.evidence, "instance_store_gib": facts.instance_store_gib},
        notify=True,
        notify_key=f"ec2-instance-store:{resource.id}:{iso(facts.launched_at) if facts.launched_at else '-'}",
    )


def kill_decision(
    resource: Resource, signal: Ec2Signal | None, view: TagView, settings: Settings, now: datetime, reason: str
) -> Decision | None:
    """Past its kill date: stopped, unless it cannot be (instance store root, Spot that cannot stop) or
    something else manages it; instance-store data still waits for `reaper:disposable=true`."""
    facts = resource.facts_as(Ec2Facts)
    if resource.state != "running" or facts.managed_by or facts.root_device_type != "ebs" or facts.spot_stop:
        return None
    decision = Decision(Verdict.ACT, reason, action=ActionName.STOP)
    if facts.instance_store_gib and not view.disposable:
        return _instance_store(resource, facts, decision, settings, signal.store if signal else None)
    return decision

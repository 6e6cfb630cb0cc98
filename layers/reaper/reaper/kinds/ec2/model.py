"""Plain data for the ec2 kind: what discovery knows of an instance, the signals read for it, thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from reaper.aws.metrics import Series
from reaper.core.timeutil import as_utc

KIND = "ec2"
PERIOD = timedelta(minutes=5)  # basic monitoring publishes EC2 metrics every 5 minutes
# EC2 metrics arrive a few minutes late: the idle window ends one period before the current one, so
# a period whose datapoint is still on its way is not a gap. Activity seen after it still counts.
LAG = timedelta(minutes=5)
LOOKBACK_MINUTES = 180  # read at least this much history, to say how long an instance has been idle

# Idle means every 5-minute period of the window is under each of these.
CPU_IDLE_PERCENT = 5.0  # AWS/EC2 CPUUtilization, Maximum of the period
NETWORK_IDLE_BYTES = 5 * 1024 * 1024  # NetworkIn + NetworkOut, Sum of the period (~17 KB/s: an idle SSH/Jupyter session)
GPU_IDLE_PERCENT = 5.0  # nvidia_smi_utilization_gpu / nvidia_smi_utilization_memory, Maximum of the period
NEURON_IDLE_PERCENT = 5.0  # neuroncore_utilization, Maximum of the period

EC2_NAMESPACE = "AWS/EC2"
# The CloudWatch agent's namespace and its NVIDIA metric names (section "nvidia_gpu"):
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch-Agent-NVIDIA-GPU.html
# utilization_gpu = % of time a kernel ran; utilization_memory = % of time device memory was read or
# written. Both measure work. nvidia_smi_memory_used is not read: a model loaded in an idle notebook
# holds memory for days, so occupancy says nothing about use.
AGENT_NAMESPACE = "CWAgent"
GPU_METRICS = ("nvidia_smi_utilization_gpu", "nvidia_smi_utilization_memory")
# Inferentia/Trainium: neuron-monitor's per-core utilisation, published as one per-instance series
# (aggregated on InstanceId) under the agent's namespace.
NEURON_METRIC = "neuroncore_utilization"

# The agent publishes one series per GPU by default, with dimensions it adds (index, name, host, and
# arch or pci_bus_id by version) beside InstanceId from append_dimensions; with aggregation_dimensions
# [["InstanceId"]] it also publishes one per instance. One search finds all of them, whatever the
# dimension set, and MAX over them is the busiest GPU in each period: idle only when every GPU is.
# Property terms (Namespace="...", a dimension name="value") are exact matches:
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/search-expression-syntax.html
GPU_SERIES = "gpu_busiest"  # the key of that series in Ec2Signal.accelerator


def gpu_search(instance_id: str, period: int) -> str:
    """MAX over every nvidia_smi_utilization_gpu / _memory series of this instance (one series)."""
    metrics = " OR ".join(f'MetricName="{m}"' for m in GPU_METRICS)
    return f"MAX(SEARCH('Namespace=\"{AGENT_NAMESPACE}\" ({metrics}) InstanceId=\"{instance_id}\"', 'Maximum', {period}))"


# The agent configuration the owner is pointed at: the nvidia_gpu section, in its usual form.
AGENT_CONFIG_HINT = (
    '{"metrics": {"append_dimensions": {"InstanceId": "${aws:InstanceId}"}, '
    '"metrics_collected": {"nvidia_gpu": {"measurement": ["utilization_gpu", "utilization_memory"], '
    '"metrics_collection_interval": 60}}}}'
)


@dataclass(frozen=True)
class Ec2Facts:
    accelerator: str  # "gpu", "neuron" or "inference" (which accelerator metric applies)
    accelerator_detail: str  # e.g. "1 x NVIDIA A10G", for messages
    root_device_type: str  # "ebs" or "instance-store"
    instance_store_gib: int  # local instance-store capacity of the type: erased by a stop
    lifecycle: str  # "on-demand", "spot", "capacity-block", "scheduled"
    managed_by: str | None  # what else manages it (Auto Scaling group, EKS, ...), with the tag that says so
    spot_stop: str | None  # for Spot: why it cannot be stopped, None when it can (persistent + stop/hibernate)
    hibernation_configured: bool
    launched_at: datetime | None  # the last start (EC2's LaunchTime)


@dataclass(frozen=True)
class GpuSample:
    """GpuSsmReads: one nvidia-smi reading through Systems Manager (kinds/ec2/ssm.py), or why there is none."""

    status: str  # "read", "no-agent" (no online SSM Agent), "failed" (not delivered, not finished, not parseable)
    gpus: tuple[tuple[float, float], ...] = ()  # per GPU: (utilization.gpu %, memory.used MiB)
    detail: str = ""  # why there is no reading; never the command's raw output
    store: StoreReading | None = None  # the instance store, read by the same command (None: not asked)


@dataclass(frozen=True)
class StoreMount:
    """A mounted filesystem on the instance store (a store disk, its partition, or a RAID/LVM device over it)."""

    device: str  # e.g. "nvme1n1", "md0"
    mount: str  # where it is mounted, e.g. "/opt/dlami/nvme"
    used_bytes: int  # df's Used: the filesystem's own overhead included
    has_files: bool  # anything at its top but lost+found: data a stop would erase


@dataclass(frozen=True)
class StoreReading:
    """GpuSsmReads: the instance store as the box sees it (kinds/ec2/ssm.py), read in the same command as nvidia-smi.

    `status` "read" or "failed" (no reading: today's rule, kept). An instance-store NVMe device names itself
    in /sys/block/*/device/model as "Amazon EC2 NVMe Instance Storage" (docs/aws-assumptions.md, I-1)."""

    status: str
    disks: tuple[str, ...] = ()  # the instance-store NVMe devices found
    mounts: tuple[StoreMount, ...] = ()  # the filesystems mounted on them
    detail: str = ""  # why there is no reading; never the command's raw output

    @property
    def with_data(self) -> tuple[StoreMount, ...]:
        return tuple(m for m in self.mounts if m.has_files)

    @property
    def used_bytes(self) -> int:
        return sum(m.used_bytes for m in self.with_data)


@dataclass(frozen=True)
class Ec2Signal:
    cpu: Series  # CPUUtilization, Maximum per period
    network: Series  # NetworkIn + NetworkOut, Sum per period (only periods where both were reported)
    accelerator: dict[str, Series] = field(default_factory=dict)  # metric name -> Maximum per period
    window_end: datetime | None = None  # end of the last period the idle window covers
    gpu_sample: GpuSample | None = None  # GpuSsmReads, for a GPU box without a GPU series; None = not read
    store: StoreReading | None = None  # GpuSsmReads, for a box with an instance store; None = not read


def align(now: datetime) -> datetime:
    """The start of the 5-minute period `now` falls in."""
    now = as_utc(now)
    return now.replace(minute=now.minute - now.minute % 5, second=0, microsecond=0)


def window_end(now: datetime) -> datetime:
    return align(now) - LAG

"""What a GPU-starved training job is told beyond "its GPUs wait" (docs/kinds/training-job.md#gpu-advisory). Pure.

- Its input: each channel's InputMode (the channel's own, else AlgorithmSpecification.TrainingInputMode:
  "If you don't set a value for InputMode, SageMaker uses the value set for TrainingInputMode",
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Channel.html) and its DataSource
  (S3DataSource, or FileSystemDataSource with FileSystemType EFS | FSxLustre,
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DataSource.html). A job reading S3 in
  File or Pipe mode is named FastFile mode and FSx for Lustre; one already on FSx or FastFile is not.
- Its size: GPUs under a quarter busy are told a smaller GPU family with as many GPUs, and the
  hourly difference from list prices (reaper.aws.pricing); with a price missing, no dollar figure,
  and it says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from reaper.aws import pricing
from reaper.aws.sagemaker_shapes import AlgorithmSpecification, DataSource, TrainingJob
from reaper.kinds.training_job.gpu import GPUS_PER_INSTANCE
from reaper.kinds.training_job.model import Channel

QUARTER = 25.0
# A family with the same GPU count and a cheaper, smaller GPU: V100 and A100/H100 -> A10G, A10G/L4 -> T4.
SMALLER = {"p5": "p4d", "p5e": "p4d", "p5en": "p4d", "p4d": "g5", "p4de": "g5", "p3": "g5", "p3dn": "g5", "g5": "g4dn", "g6": "g4dn"}


def channels(job: TrainingJob) -> tuple[Channel, ...]:
    """The channels of a TrainingJob (Search or DescribeTrainingJob): name, effective input mode, source."""
    default = (job.get("AlgorithmSpecification") or AlgorithmSpecification()).get("TrainingInputMode") or "File"
    out: list[Channel] = []
    for c in job.get("InputDataConfig") or []:
        source = c.get("DataSource") or DataSource()
        fs = source.get("FileSystemDataSource")
        kind = str(fs.get("FileSystemType") or "file system") if fs else "S3" if source.get("S3DataSource") else "other"
        out.append(Channel(str(c.get("ChannelName") or "?"), str(c.get("InputMode") or default), kind))
    return tuple(out)


def input_advice(inputs: Sequence[Channel]) -> str:
    copied = [c for c in inputs if c.source == "S3" and c.mode in ("File", "Pipe")]
    if copied:
        named = ", ".join(f"{c.name} ({c.mode} mode)" for c in copied)
        return (
            f"it reads {named} from S3: FastFile mode streams the same S3 objects on demand, and FSx for Lustre "
            "(a FileSystemDataSource) serves them at file-system speed over many epochs"
        )
    if inputs:
        used = ", ".join(sorted({"FastFile mode" if c.mode == "FastFile" else f"{c.source}" for c in inputs}))
        return f"its input is already on {used}: look at the DataLoader workers, prefetching and the batch size"
    return "more DataLoader workers, prefetching, FastFile input mode or a larger batch usually help"


def smaller_family(instance_type: str | None, count: int, region: str, mean: float) -> str | None:
    """A smaller GPU family with as many GPUs, and the hourly difference, when its GPUs stay under a quarter busy."""
    if mean >= QUARTER or not instance_type or instance_type not in GPUS_PER_INSTANCE:
        return None
    family = instance_type.split(".")[1]
    target = SMALLER.get(family)
    if target is None:
        return None
    gpus = GPUS_PER_INSTANCE[instance_type]
    options = sorted(t for t, n in GPUS_PER_INSTANCE.items() if t.split(".")[1] == target and n == gpus)
    if not options:
        return None
    now = pricing.hourly(pricing.TRAINING, region, instance_type, count)
    priced = [(p, t) for t in options if (p := pricing.hourly(pricing.TRAINING, region, t, count)) is not None]
    head = f"its GPUs stay under a quarter busy: a smaller GPU family with {gpus} GPU(s) each would do"
    if not priced:
        return f"{head} ({options[0]}); no list price for {', '.join(options)} in {region}, so the difference is not given"
    price, cheapest = min(priced)
    if now is None:
        unknown = f"no list price for {instance_type} in {region}, so the difference is not given"
        return f"{head} ({count} x {cheapest} at ${price:,.2f}/h); {unknown}"
    if price >= now:
        return None
    return (
        f"{head}: {count} x {cheapest} at ${price:,.2f}/h instead of ${now:,.2f}/h list price, "
        f"${now - price:,.2f}/h less (${24 * (now - price):,.2f} a day)"
    )

"""Spot advice, pure: a long on-demand training job is told, once, what managed spot would save.

Managed spot training bills the Spot price of the instances: AWS says it "can optimize the cost of
training models up to 90% over on-demand instances"
(https://docs.aws.amazon.com/sagemaker/latest/dg/model-managed-spot-training.html). Spot prices
move, so the estimate assumes a more modest SPOT_DISCOUNT and says so. A job that cannot survive an
interruption loses its progress on spot, so the advice says first whether it checkpoints
(CheckpointConfig, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CheckpointConfig.html).
Advice only: it never stops a job.
"""

from __future__ import annotations

from dataclasses import dataclass

from reaper.kinds.training_job.model import JobFacts

SPOT_DISCOUNT = 0.70  # assumed saving of managed spot over on-demand (AWS: "up to 90%")
LONG_LIMIT_HOURS = 4.0  # a MaxRuntimeInSeconds above this: expected to run for hours ...
LONG_LIMIT_MIN_ELAPSED_HOURS = 0.5  # ... once past its start (a short job is done by then)
LONG_ELAPSED_HOURS = 2.0  # or already this long in
SDK_DEFAULT_LIMIT_S = 86_400  # the SageMaker Python SDK's default max_run: no sign the owner expects a long run


@dataclass(frozen=True)
class SpotAdvice:
    text: str
    evidence: dict[str, object]


def spot_advice(facts: JobFacts, hourly_usd: float | None, elapsed_hours: float) -> SpotAdvice | None:
    """One advisory for a running on-demand training job expected to run for hours, else None."""
    if facts.job_type != "training" or facts.spot or facts.tuning_job_arn:
        return None  # a tuning job's children are set up by its definition: not advised one by one
    limit_h = facts.max_runtime_s / 3600 if facts.max_runtime_s else None
    chosen_limit = limit_h is not None and facts.max_runtime_s != SDK_DEFAULT_LIMIT_S
    long_limit = chosen_limit and limit_h is not None and limit_h > LONG_LIMIT_HOURS and elapsed_hours >= LONG_LIMIT_MIN_ELAPSED_HOURS
    if not (long_limit or elapsed_hours >= LONG_ELAPSED_HOURS):
        return None
    # Expected length: its own limit when the owner chose one, else what it has run so far (a lower bound).
    expected_h = max(limit_h, elapsed_hours) if chosen_limit and limit_h is not None else elapsed_hours
    evidence: dict[str, object] = {
        "expected_hours": round(expected_h, 2),
        "assumed_spot_discount": SPOT_DISCOUNT,
        "checkpointing": facts.checkpoint_s3 is not None,
    }
    pct = f"{SPOT_DISCOUNT * 100:.0f} %"
    length = f"up to its {limit_h:g} h limit" if chosen_limit and limit_h is not None else f"{elapsed_hours:.1f} h so far"
    if hourly_usd is not None:
        saving = round(hourly_usd * expected_h * SPOT_DISCOUNT, 2)
        evidence["estimated_saving_usd"] = saving
        money = (
            f"at ${hourly_usd:,.2f}/h on demand for {length}, managed spot would save about ${saving:,.2f} (assuming {pct} off; AWS "
            "quotes up to 90 %)"
        )
    else:
        money = f"running on demand for {length}; managed spot is typically {pct} cheaper (no list price for its instances, so no figure)"
    if facts.checkpoint_s3:
        how = f"it checkpoints to {facts.checkpoint_s3}, so next time set EnableManagedSpotTraining=true with a MaxWaitTimeInSeconds"
    else:
        how = ("it has no CheckpointConfig: add checkpointing first (save to /opt/ml/checkpoints and set CheckpointConfig.S3Uri), "
               "then EnableManagedSpotTraining=true, or an interruption loses its progress")  # fmt: skip
    return SpotAdvice(f"{money}; {how}. Advice only: the job is not stopped", evidence)

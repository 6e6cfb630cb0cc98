"""Managed warm pools, pure: an ended training job whose instances SageMaker keeps for reuse bills
them ("Billable time refers to the absolute wall-clock time. Multiply ResourceRetainedBillableTimeInSeconds
by the number of instances (InstanceCount)", https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_WarmPoolStatus.html).

A pool kept past the stack's `WarmPoolMaxMinutes`, or whose job's dollars so far (its run plus the
retained time) are past its own `reaper:max-usd`, is ended: its owner is warned first, and a later
sweep sets KeepAlivePeriodInSeconds to 0 ("To manually terminate a warm pool, set the
KeepAlivePeriodInSeconds value to 0", https://docs.aws.amazon.com/sagemaker/latest/dg/train-warm-pools-how-to-use.html).
Ending a pool loses nothing but a faster start of the next matching job.
"""

from __future__ import annotations

from datetime import datetime

from reaper.core.model import Decision, Resource, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import human_duration
from reaper.kinds.training_job import ActionName
from reaper.kinds.training_job.cost import estimate
from reaper.kinds.training_job.model import JobFacts, WarmPool
from reaper.kinds.training_job.settings import TrainingJobSettings
from reaper.kinds.training_job.stalled import warned_first

ACTION = ActionName.END_WARM_POOL


def retained_usd(resource: Resource, pool: WarmPool) -> float | None:
    """The pool's cost so far: retained seconds x the cluster's hourly list price (which counts its instances)."""
    return None if resource.hourly_usd is None else round(pool.retained_s / 3600.0 * resource.hourly_usd, 2)


def warm_pool_decision(resource: Resource, facts: JobFacts, view: TagView, settings: Settings, now: datetime) -> Decision:
    pool = facts.warm_pool
    assert pool is not None
    kept = pool.retained_s / 60.0
    max_minutes = settings.of(TrainingJobSettings).warm_pool_max_minutes
    pool_usd = retained_usd(resource, pool)
    run_usd = estimate(facts.spans, now)
    total = None if pool_usd is None or run_usd is None else round(pool_usd + run_usd, 2)
    evidence: dict[str, object] = {
        "warm_pool": {"status": pool.status, "retained_seconds": pool.retained_s, "keep_alive_seconds": pool.keep_alive_s},
        "warm_pool_usd": pool_usd,
        "estimated_usd": total,
        "max_minutes": max_minutes,
    }
    cost = f" (${pool_usd:,.2f} at list price)" if pool_usd is not None else ""
    why: list[str] = []
    if kept >= max_minutes:
        why.append(f"its warm pool has been kept {human_duration(kept)}{cost}, past the stack's {max_minutes} min (WarmPoolMaxMinutes)")
    if view.max_usd is not None and total is not None and total >= view.max_usd:
        why.append(f"with its warm pool the job has cost ${total:,.2f}, past its ${view.max_usd:,.2f} ceiling ({settings.tag('max-usd')})")
    if not why:
        return Decision(
            Verdict.KEEP,
            f"warm pool kept {human_duration(kept)}{cost}, within {max_minutes} min",
            evidence=evidence,
        )
    reason = "; ".join(why) + ": the instances idle until a matching job reuses them"
    return warned_first(
        reason, ACTION, "unless a matching job reuses it", evidence, view, settings.grace_for("training-job"), now, always=True
    )

"""Checkpoints as a guard, pure: a managed spot training job without CheckpointConfig loses all its
work at an interruption, and a running job whose newest checkpoint is old loses that much at a stop.

- Spot without CheckpointConfig: told (the admission event tells the owner at once, the sweep is the
  backstop), or with `SpotWithoutCheckpoints=stop` stopped before it bills much. Managed spot "can be
  interrupted", and SageMaker copies checkpoints "from the local path to Amazon S3" only when
  CheckpointConfig is set (https://docs.aws.amazon.com/sagemaker/latest/dg/model-checkpoints.html).
- A job with a checkpoint location whose newest object is older than `reaper:checkpoint-minutes`
  (default 30), or that has saved none that long after its start: its owner is told. Only on a
  complete listing: a listing cut short proves nothing about the newest object.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, iso
from reaper.kinds.training_job.checkpoints import DEFAULT_MINUTES
from reaper.kinds.training_job.model import CheckpointAge, JobFacts
from reaper.kinds.training_job.settings import TrainingJobSettings


def checkpoint_checks(
    evidence: dict[str, object],
    stop: list[str],
    notes: list[tuple[str, str]],
    facts: JobFacts,
    age: CheckpointAge | None,
    view: TagView,
    settings: Settings,
    now: datetime,
) -> None:
    if facts.spot and not facts.checkpoint_s3:
        evidence["spot_without_checkpoints"] = True
        text = (
            "managed spot without CheckpointConfig: an interruption restarts it from scratch and bills the lost hours again"
            " (save to /opt/ml/checkpoints and set CheckpointConfig.S3Uri)"
        )
        if settings.of(TrainingJobSettings).spot_without_checkpoints == "stop":
            stop.append(f"{text}; stopped before it bills much (SpotWithoutCheckpoints=stop)")
        else:
            notes.append(("spot-no-checkpoints", text))
    if age is None:
        return
    limit = view.checkpoint_minutes or DEFAULT_MINUTES
    evidence["checkpoint"] = {
        "uri": age.uri, "newest": iso(age.newest) if age.newest else None, "objects": age.objects, "complete": age.complete,
        "error": age.error, "limit_minutes": limit, "text": age.age_text(now),
    }  # fmt: skip
    if age.error is not None or not age.complete:
        return
    started = facts.started_at
    late = age.newest is not None and as_utc(now) - as_utc(age.newest) > timedelta(minutes=limit)
    none_yet = age.newest is None and started is not None and as_utc(now) - as_utc(started) > timedelta(minutes=limit)
    if late or none_yet:
        notes.append(
            (
                "checkpoint-late",
                f"{age.age_text(now)}, past its {limit} min limit ({settings.tag('checkpoint-minutes')}): a stop or a spot "
                "interruption now loses everything since; check that the script still saves to /opt/ml/checkpoints",
            )
        )

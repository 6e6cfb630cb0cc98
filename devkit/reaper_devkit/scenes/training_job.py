"""Demo scene: running SageMaker jobs — a runaway, a costly one, diverged runs, a GPU-starved job."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import boto3

from reaper.handlers import handle_kind_event
from reaper.record.runtime import Runtime
from reaper_devkit import seed_training as st

KIND = "training-job"
DEV = {"ml:owner": "U024BE7LH", "ml:stage": "dev", "ml:project": "vision"}
NLP = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "nlp"}
HEALTHY = [2.9, 2.3, 2.5, 2.0, 2.1, 1.8, 1.9, 1.6, 1.7, 1.5, 1.55, 1.4]
DIVERGING = [2.9, 2.0, 1.4, 1.1, 0.9, 1.2, 1.6, 2.3, 3.4, 5.1]


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    sm, cw, logs = session.client("sagemaker"), session.client("cloudwatch"), session.client("logs")
    st.training_job(sm, "resnet-runaway", now, hours_ago=26, count=2, tags=DEV)
    st.metric(cw, "resnet-runaway", now, HEALTHY)
    st.training_job(sm, "llm-costly", now, hours_ago=20, instance_type="ml.g4dn.12xlarge", tags={**NLP, "reaper:max-usd": "100"})
    st.metric(cw, "llm-costly", now, HEALTHY)
    st.training_job(sm, "bert-diverged", now, hours_ago=3, instance_type="ml.g4dn.2xlarge", tags=NLP)
    st.metric(cw, "bert-diverged", now, DIVERGING, name="train:loss")
    st.training_job(sm, "gan-nan", now, hours_ago=4, instance_type="ml.p3.8xlarge", tags=DEV)
    st.log_lines(logs, "gan-nan", now, ["epoch 7 step 1200 g_loss=1.92 d_loss=0.41", "epoch 7 step 1300 g_loss=nan d_loss=nan"])
    st.training_job(sm, "vit-near-ceiling", now, hours_ago=20, tags={**DEV, "reaper:max-hours": "24"})
    st.metric(cw, "vit-near-ceiling", now, HEALTHY)
    st.training_job(sm, "detr-dataloader", now, hours_ago=2, instance_type="ml.g4dn.xlarge", tags=DEV)
    st.metric(cw, "detr-dataloader", now, HEALTHY)
    st.gpu(cw, "detr-dataloader", now, 31)
    st.training_job(sm, "xgb-healthy", now, hours_ago=1.5, instance_type="ml.m5.4xlarge", tags={**NLP, "reaper:max-usd": "20"})
    st.metric(cw, "xgb-healthy", now, [0.69, 0.52, 0.47, 0.44, 0.41, 0.40, 0.38], name="validation:logloss")
    st.training_job(
        sm, "prod-nightly", now, hours_ago=30, tags={"ml:owner": "ops@example.com", "ml:stage": "prod", "ml:project": "ranking"}
    )
    st.processing_job(sm, "etl-features", now, hours_ago=27, tags=NLP)
    st.tuning_job(sm, "hpo-bert", now, hours_ago=3, children=[(3, 2), (2, 1), (1, None)], tags={**NLP, "reaper:max-usd": "40"})
    return {
        "resnet-runaway": "kept, owner told: ran 26 h, past the 24 h default ceiling (default ceilings notify only)",
        "llm-costly": "stopped: ~$113 on ml.g4dn.12xlarge, past its $100 reaper:max-usd",
        "bert-diverged": "stopped: train:loss rose 5 points in a row to 5.7x its minimum",
        "gan-nan": "stopped: `g_loss=nan` in its log",
        "vit-near-ceiling": "kept, one warning: at 83% of its 24 h runtime ceiling",
        "detr-dataloader": "kept, one advisory: GPUs at ~31% for 30 min (data loader)",
        "xgb-healthy": "kept: validation:logloss falling, within ceilings",
        "prod-nightly": "exempt: production is notify-only (would stop at 30 h)",
        "etl-features": "kept, owner told: a processing job past the 24 h default ceiling (notify only)",
        "hpo-bert": "kept: its 3 training jobs cost ~$2.21 of $40",
        "hpo-bert-003": "kept: a training job the tuning job launched, within ceilings",
    }


def after_sweep(rt: Runtime, session: boto3.session.Session, now: datetime, say: Callable[[str], None]) -> None:
    sm = session.client("sagemaker")
    for name in ("resnet-runaway", "bert-diverged"):
        status = sm.describe_training_job(TrainingJobName=name)["TrainingJobStatus"]
        why = (
            "StopTrainingJob gave the script SIGTERM and 120 s to save a checkpoint"
            if status != "InProgress"
            else ("past the stack's default ceiling, which notifies only: its owner was told, nothing was stopped")
        )
        say(f"{name}: {status} ({why})")
    desc = sm.describe_training_job(TrainingJobName="resnet-runaway")
    ended = _state_change(desc, "Stopped", now)
    result = handle_kind_event(ended, KIND, rt, now=now)  # the demo's now: no entry stamped after it ends
    recorded = "recorded in the log" if result.get("recorded") else "NOT recorded"
    say(f"its owner stops resnet-runaway; the 'Stopped' state change: final cost ${result.get('estimated_usd')} {recorded}")
    st.training_job(sm, "yolo-untagged", now, hours_ago=0, instance_type="ml.p3.2xlarge", max_runtime_s=5 * 86400)
    new = sm.describe_training_job(TrainingJobName="yolo-untagged")
    result = handle_kind_event(_state_change(new, "InProgress", now), KIND, rt, now=now)
    say(f"a new job, yolo-untagged, starts without tags or ceiling: {len(result['problems'])} problems told to the owner at once")


def _state_change(desc: dict[str, Any], status: str, now: datetime) -> dict[str, Any]:
    return {
        "version": "0",
        "id": f"demo-{desc['TrainingJobName']}-{status}",
        "detail-type": "SageMaker Training Job State Change",
        "source": "aws.sagemaker",
        "account": desc["TrainingJobArn"].split(":")[4],
        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": desc["TrainingJobArn"].split(":")[3],
        "resources": [desc["TrainingJobArn"]],
        "detail": {"TrainingJobName": desc["TrainingJobName"], "TrainingJobArn": desc["TrainingJobArn"], "TrainingJobStatus": status},
    }

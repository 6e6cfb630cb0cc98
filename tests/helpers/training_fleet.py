"""One running job per interesting case, seeded in moto; shared by the training-job integration tests."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper_devkit import seed_training as st

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
HEALTHY_LOSS = [3.1, 2.4, 2.6, 2.1, 2.3, 1.9, 2.0, 1.7, 1.9, 1.6, 1.75, 1.5]
DIVERGED_LOSS = [3.0, 2.0, 1.5, 1.2, 1.0, 1.3, 1.7, 2.2, 3.1, 4.5]
RISING_ACC = [0.2, 0.35, 0.5, 0.48, 0.6, 0.7, 0.72, 0.8]
FALLING_ACC = [0.3, 0.6, 0.8, 0.9, 0.7, 0.55, 0.4, 0.3, 0.2]

# what a correct enforce sweep (grace 0) does with each job
EXPECTED = {
    "runaway": "act",  # 25 h, past the 24 h default
    "costly": "act",  # $53.55 of a $50 tag
    "near-ceiling": "keep",  # 20 h of 24 h: the 80 % warning
    "healthy": "keep",  # noisy but healthy loss
    "diverged": "act",  # loss rose 5 points to 4.5x its minimum
    "nan-log": "act",  # `loss=nan` in its log
    "acc-up": "keep",  # accuracy rising
    "acc-down": "act",  # accuracy fell 5 points to below half its maximum
    "gpu-starved": "keep",  # GPUs at 35 %: one advisory
    "no-metrics": "keep",  # nothing to judge divergence by
    "exempt": "exempt",
    "snoozed": "exempt",
    "prod": "exempt",  # notify-only
    "bad-tag": "exempt",  # reaper:max-hours=soon
    "proc-runaway": "act",  # a processing job past 24 h
    "hpo": "act",  # a tuning job whose training jobs cost $3.68 of a $3 tag
    "hpo-001": "keep",  # a training job the tuning job launched (finished: not listed)
    "hpo-002": "keep",
    "hpo-003": "keep",  # still running, within its own ceilings
}
# on demand, 2 h in, within their ceilings, nothing else to say: one spot advisory each
SPOT_ADVISED = ["acc-up", "healthy", "no-metrics"]
STOPPED = sorted(k for k, v in EXPECTED.items() if v == "act")
RUNNING_AFTER = sorted(k for k, v in EXPECTED.items() if v != "act" and k not in ("hpo-001", "hpo-002", "hpo-003"))


def seed(session: Any, now: datetime) -> dict[str, str]:
    sm, cw, logs = session.client("sagemaker"), session.client("cloudwatch"), session.client("logs")
    later = (now + timedelta(days=2)).strftime("%Y-%m-%d")
    st.training_job(sm, "runaway", now, hours_ago=25, tags=DEV)
    st.metric(cw, "runaway", now, HEALTHY_LOSS)
    st.training_job(sm, "costly", now, hours_ago=7, count=2, tags={**DEV, "reaper:max-usd": "50"})
    st.training_job(sm, "near-ceiling", now, hours_ago=20, tags=DEV)
    st.metric(cw, "near-ceiling", now, HEALTHY_LOSS)
    st.training_job(sm, "healthy", now, hours_ago=2, tags=DEV)
    st.metric(cw, "healthy", now, HEALTHY_LOSS)
    st.training_job(sm, "diverged", now, hours_ago=2, tags=DEV)
    st.metric(cw, "diverged", now, DIVERGED_LOSS)
    st.training_job(sm, "nan-log", now, hours_ago=2, tags=DEV)
    st.metric(cw, "nan-log", now, HEALTHY_LOSS)
    st.log_lines(logs, "nan-log", now, ["[1,  2000] loss: 0.912", "[1,  4000] loss=nan lr=0.001"])
    st.log_lines(logs, "healthy", now, ["[1,  2000] loss: 0.912", "NaN rows dropped from the input: 12"])
    st.training_job(sm, "acc-up", now, hours_ago=2, tags=DEV)
    st.metric(cw, "acc-up", now, RISING_ACC, name="validation:accuracy")
    st.training_job(sm, "acc-down", now, hours_ago=2, tags=DEV)
    st.metric(cw, "acc-down", now, FALLING_ACC, name="validation:accuracy")
    st.training_job(sm, "gpu-starved", now, hours_ago=2, instance_type="ml.g4dn.xlarge", tags=DEV)
    st.metric(cw, "gpu-starved", now, HEALTHY_LOSS)
    st.gpu(cw, "gpu-starved", now, 35)
    st.gpu(cw, "healthy", now, 92)  # busy GPUs: no advice
    st.training_job(sm, "no-metrics", now, hours_ago=2, tags=DEV)
    st.training_job(sm, "exempt", now, hours_ago=30, tags={**DEV, "reaper:exempt": "true"})
    st.training_job(sm, "snoozed", now, hours_ago=30, tags={**DEV, "reaper:snooze-until": later})
    st.training_job(sm, "prod", now, hours_ago=30, tags={"ml:owner": "ops@example.com", "ml:stage": "Prod "})
    st.training_job(sm, "bad-tag", now, hours_ago=30, tags={**DEV, "reaper:max-hours": "soon"})
    st.processing_job(sm, "proc-runaway", now, hours_ago=26, tags=DEV)
    st.tuning_job(sm, "hpo", now, hours_ago=5, children=[(5, 4), (4, 2), (2, None)], tags={**DEV, "reaper:max-usd": "3"})
    return EXPECTED


def training_status(sm: Any, name: str) -> str:
    return str(sm.describe_training_job(TrainingJobName=name)["TrainingJobStatus"])


def statuses(sm: Any) -> dict[str, str]:
    """Every job's status, read once each (a stopped job reads Stopping once, then Stopped)."""
    out = {j["TrainingJobName"]: j["TrainingJobStatus"] for j in sm.list_training_jobs(MaxResults=100)["TrainingJobSummaries"]}
    out |= {j["ProcessingJobName"]: j["ProcessingJobStatus"] for j in sm.list_processing_jobs(MaxResults=100)["ProcessingJobSummaries"]}
    out |= {
        j["HyperParameterTuningJobName"]: j["HyperParameterTuningJobStatus"]
        for j in sm.list_hyper_parameter_tuning_jobs(MaxResults=100)["HyperParameterTuningJobSummaries"]
    }
    return out


def tags(sm: Any, arn: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}

"""Training-job guard: running SageMaker jobs past their ceilings, or diverged, are stopped.

Covers training jobs (ceilings, divergence, GPU advice), processing jobs, hyperparameter
tuning jobs, batch transform jobs and AutoML jobs (ceilings: runtime, and cost from list prices
where there is one; a tuning job's cost is the sum of its training jobs), and stalled jobs of
every kind (`progress` reads, `stalled` judges: no new log event and no CPU or GPU use).
Stopping a training job gives its script SIGTERM and two minutes to save a checkpoint.
The rules are in `rules` (pure), with `cost`, `divergence` and `gpu`; discovery and
evidence in `discover` and `signals`; state-change events in `events`.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, standard_parts

_P = "reaper.kinds.training_job"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    STOP = "stop"
    END_WARM_POOL = "end-warm-pool"


DECLARATION = KindDeclaration(
    name="training-job",
    doc="SageMaker training, processing, tuning, transform and AutoML jobs: stopped past their ceilings, diverged or stalled",
    tag_resource_types=(
        "sagemaker:training-job",
        "sagemaker:processing-job",
        "sagemaker:hyper-parameter-tuning-job",
        "sagemaker:transform-job",
        "sagemaker:automl-job",
    ),
    tag_service="sagemaker",
    read_permissions=(
        "sagemaker:Search",
        "sagemaker:ListTrainingJobs",  # WarmPoolStatusEquals=Available
        "sagemaker:DescribeTrainingJob",
        "sagemaker:ListTags",
        "sagemaker:ListProcessingJobs",
        "sagemaker:DescribeProcessingJob",
        "sagemaker:ListHyperParameterTuningJobs",
        "sagemaker:DescribeHyperParameterTuningJob",
        "sagemaker:ListTrainingJobsForHyperParameterTuningJob",
        "sagemaker:ListTransformJobs",
        "sagemaker:DescribeTransformJob",
        "sagemaker:ListAutoMLJobs",
        "sagemaker:DescribeAutoMLJobV2",
        "cloudwatch:ListMetrics",
        "cloudwatch:GetMetricData",
        "logs:FilterLogEvents",
        "logs:DescribeLogStreams",
        "s3:ListBucket",  # ListObjectsV2 of a job's checkpoint prefix
        "pricing:GetProducts",  # list prices (reaper.aws.pricing)
        "tag:GetResources",  # the tags of what discovery found, in bulk
    ),
    confirm=f"{_P}.actions:confirm",
    # the gate's tag re-read and the state-change event's (a sweep reads job tags with tag:GetResources)
    change_reads=("sagemaker:ListTags",),
    actions={
        ActionName.STOP: Action(
            ActionName.STOP,
            "stopped",
            (
                "sagemaker:StopTrainingJob",
                "sagemaker:StopProcessingJob",
                "sagemaker:StopHyperParameterTuningJob",
                "sagemaker:StopTransformJob",
                "sagemaker:StopAutoMLJob",
            ),
            frozenset({"InProgress"}),
            f"{_P}.actions:stop",
        ),
        ActionName.END_WARM_POOL: Action(
            ActionName.END_WARM_POOL,
            "warm pool ended",
            ("sagemaker:UpdateTrainingJob",),
            frozenset({"Completed", "Failed", "Stopped"}),
            f"{_P}.actions:end_warm_pool",
        ),
    },
    **standard_parts(_P),
    default_action=ActionName.STOP,
    budgeted=True,
    manages_budgets=True,  # the training-job function creates the budgets (template: ProjectBudgets, BudgetTopic)
    events=(EventRoute("aws.sagemaker", ("SageMaker Training Job State Change",), f"{_P}.events:route"),),
)

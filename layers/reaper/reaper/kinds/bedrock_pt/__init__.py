"""Amazon Bedrock Provisioned Throughput: deleted with a restore record only when nothing is committed.

Evidence: `AWS/Bedrock` `Invocations` with dimension `ModelId` = the Provisioned Throughput's ARN
(callers pass that ARN as `modelId` to invoke it), summed over the window (default 7 days;
`reaper:idle-minutes` or REAPER_IDLE_MINUTES_BEDROCK_PT), in one batched GetMetricData. AWS
publishes the metric only when there are requests, so no data counts as no traffic only when the
Provisioned Throughput was InService, unchanged, for the whole window, and only once its own series
has been seen: AWS does not document which `ModelId` its traffic carries, so one ListMetrics per
region says which ARNs AWS/Bedrock lists a series for; a Provisioned Throughput never listed is
unknown (`bedrock-series-never-seen`): its owner is told, it is never deleted on that evidence.

No commitment: warn, then after the grace DeleteProvisionedModelThroughput, with a restore record
(model, units, name, tags) in the action log so `reaper restore NAME` recreates it in one step;
refused (verdict error) without an action log. With a commitment (OneMonth, SixMonths): never
deleted (AWS refuses before the term ends); reported with what it costs idle, and once per term at
least 7 days before `commitmentExpirationTime`, when AWS renews it.

Custom-model deployments (on-demand inference) are not swept: AWS bills them per use, not per hour.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, Restorer, standard_parts

_P = "reaper.kinds.bedrock_pt"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    DELETE = "delete"


# a sweep's deletes made together (reaper.kinds.recorded): each begun and gated alone, their restore records
# written in one TransactWriteItems, each deleted in its own call
ACT_BATCH = 20

# A Provisioned Throughput name, as CreateProvisionedModelThroughput takes it:
# https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateProvisionedModelThroughput.html
PT_NAME_PATTERN = r"([0-9a-zA-Z][_-]?){1,63}"

DECLARATION = KindDeclaration(
    name="bedrock-pt",
    doc="Bedrock Provisioned Throughput: deleted with a restore record only without commitment; committed ones reported before renewal",
    tag_resource_types=(),  # tags are read per Provisioned Throughput with bedrock:ListTagsForResource (discover.py)
    tag_service="bedrock",
    read_permissions=(
        "bedrock:ListProvisionedModelThroughputs",
        "bedrock:GetProvisionedModelThroughput",  # the state check just before a delete
        "cloudwatch:GetMetricData",
        "cloudwatch:ListMetrics",  # signals.listed: which Provisioned Throughputs AWS/Bedrock has a series for
        "bedrock:ListTagsForResource",  # each Provisioned Throughput's tags (discover.py: the Tagging API does not list them)
    ),
    confirm=f"{_P}.actions:confirm",
    change_reads=("bedrock:GetProvisionedModelThroughput",),  # the state re-read just before a delete
    actions={
        ActionName.DELETE: Action(
            ActionName.DELETE,
            "deleted",
            ("bedrock:GetProvisionedModelThroughput", "bedrock:DeleteProvisionedModelThroughput"),
            frozenset({"InService"}),
            f"{_P}.actions:delete",
            needs_log=True,
            removes_resource=True,
            batch=f"{_P}.actions:act_many",
            batch_size=ACT_BATCH,
        ),
    },
    **standard_parts(_P),
    default_action=ActionName.DELETE,
    # the creation-time notice: CloudTrail's record of the Create call, where the stack's CreationNotices routes it (kinds/creation.py)
    events=(EventRoute("aws.bedrock", ("AWS API Call via CloudTrail",), f"{_P}.created:created"),),
    restorer=Restorer(
        name_pattern=PT_NAME_PATTERN,
        run=f"{_P}.restore:run",
        permissions=(
            "bedrock:GetProvisionedModelThroughput",
            "bedrock:CreateProvisionedModelThroughput",
            "bedrock:TagResource",  # CreateProvisionedModelThroughput with tags
        ),
    ),
)

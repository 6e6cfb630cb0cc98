"""Reserved GPU capacity: On-Demand Capacity Reservations, Capacity Blocks for ML, SageMaker Training Plans.

All three bill whether used or not. Evidence: the reservation's own counts (DescribeCapacityReservations
`TotalInstanceCount` / `AvailableInstanceCount`, a training plan's `AvailableInstanceCount` /
`InUseInstanceCount`) and, over the idle window, CloudWatch `AWS/EC2CapacityReservations`
`UsedInstanceCount`. Only an `active`, `open` ODCR with no commitment, no fleet and 0 instances used
over the whole window is cancelled (after the warning and grace, re-read just before); Capacity
Blocks, committed reservations and training plans cannot be cancelled and are reported with their
idle instance-hours, dollars and the queued training jobs that could use them. A Capacity Block about
to end is told to whoever runs on it. The AWS Health underutilisation event re-judges the reservations
it names; it is never evidence by itself.

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, Restorer, standard_parts

_P = "reaper.kinds.capacity"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    CANCEL = "cancel"


# a sweep's cancellations made together (reaper.kinds.recorded): each begun and gated alone, their specs
# written in one TransactWriteItems, each cancelled in its own call
ACT_BATCH = 20

DECLARATION = KindDeclaration(
    name="capacity",
    doc="Capacity reservations, Capacity Blocks and SageMaker Training Plans: unused, uncommitted ODCRs cancelled; the rest reported",
    tag_resource_types=(),  # DescribeCapacityReservations returns the tags; training plans are few: ListTags each
    tag_service="ec2",
    read_permissions=(
        "ec2:DescribeCapacityReservations",
        "ec2:DescribeInstances",  # who runs on a Capacity Block about to end
        "cloudwatch:GetMetricData",
        "sagemaker:ListTrainingPlans",
        "sagemaker:ListTags",
        "sagemaker:ListTrainingJobs",  # queued jobs that could use idle capacity, once per sweep
        "pricing:GetProducts",  # list prices (reaper.aws.pricing)
    ),
    confirm=f"{_P}.actions:confirm",
    actions={
        ActionName.CANCEL: Action(
            ActionName.CANCEL,
            "cancelled",
            ("ec2:CancelCapacityReservation",),
            frozenset({"active"}),
            f"{_P}.actions:cancel",
            needs_log=True,  # a cancelled reservation cannot be un-cancelled: its spec is the restore record
            removes_resource=True,
            batch=f"{_P}.actions:act_many",
            batch_size=ACT_BATCH,
        ),
    },
    **standard_parts(_P),
    read_many=f"{_P}.actions:current_many",  # a batch's gates: one DescribeCapacityReservations, tags with it (reaper.sweep.batch)
    default_action=ActionName.CANCEL,
    events=(
        EventRoute("aws.health", ("AWS Health Event",), f"{_P}.events:underutilized"),
        EventRoute(
            "aws.ec2",
            ("Capacity Block Reservation Expiration Warning", "Capacity Block Expiration Warning"),
            f"{_P}.events:block_ending",
        ),
        # the creation-time notice: CloudTrail's record of the Create call, where the stack's CreationNotices routes it (kinds/creation.py)
        EventRoute("aws.ec2", ("AWS API Call via CloudTrail",), f"{_P}.created:created"),
    ),
    restorer=Restorer(
        name_pattern=r"cr-[0-9a-f]{8,17}",
        run=f"{_P}.restore:run",
        permissions=("ec2:CreateCapacityReservation", "ec2:CreateTags"),
    ),
)

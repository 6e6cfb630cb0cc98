"""GPU and accelerator EC2 instances used as dev boxes: stopped when idle on real evidence, never terminated.

Candidates: running instances of accelerated types (GPU, Inferentia, Trainium; read from
DescribeInstanceTypes, cached per region for the process). Instances that something else manages
(Auto Scaling, EKS/Kubernetes, Batch, ParallelCluster, HyperPod, EMR, EC2/Spot Fleet), Spot
instances that cannot be stopped, instance-store roots and instance-store data a stop would lose
are kept, each with its reason. Evidence: CPUUtilization, NetworkIn+Out and the CloudWatch agent's
GPU (or Neuron) utilisation, in one batched GetMetricData; idle = every signal under its threshold
for the whole window, and no GPU metric is unknown (kept).

This module is the declaration only; the parts it names are imported on first use.
"""

from reaper.core.model import KindAction
from reaper.kinds.base import Action, EventRoute, KindDeclaration, standard_parts

_P = "reaper.kinds.ec2"


class ActionName(KindAction):
    """What this kind can do to a resource: the keys of its declared actions, and the cases its
    dispatch (`actions.undo_hint`) matches exhaustively."""

    STOP = "stop"


# Instances per StopInstances in a sweep (the API reference sets no limit on InstanceIds). Their gates
# share one DescribeInstances (state and tags) and each reads its stop protection, so 20 keeps the oldest
# re-read of protection at most 20 reads (about 1-2 s) before the call, and its settlement (3 items each) rides
# in the next change's TransactWriteItems (100 items) with room to spare: 0.05 StopInstances per stop.
STOP_BATCH = 20

DECLARATION = KindDeclaration(
    name="ec2",
    doc="GPU/accelerator EC2 dev instances: stopped when idle, never terminated",
    tag_resource_types=("ec2:instance",),
    tag_service="ec2",
    read_permissions=(
        "ec2:DescribeInstances",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeSpotInstanceRequests",
        "ec2:DescribeInstanceAttribute",  # stop protection, read only for an instance about to be stopped
        "cloudwatch:GetMetricData",
        "pricing:GetProducts",  # list prices (reaper.aws.pricing)
    ),
    # GpuSsmReads=on: a GPU box without a GPU metric is judged by one nvidia-smi sample (kinds/ec2/ssm.py);
    # SendCommand is denied on exempt and production instances like every change (template.yaml)
    conditional_permissions={
        "GpuSsmReadsOn": ("ssm:DescribeInstanceInformation", "ssm:SendCommand", "ssm:ListCommandInvocations"),
    },
    confirm=f"{_P}.actions:confirm",
    change_reads=("ec2:DescribeInstanceAttribute",),  # stop protection, read just before a stop
    actions={
        ActionName.STOP: Action(
            ActionName.STOP,
            "stopped",
            ("ec2:StopInstances",),
            frozenset({"running"}),
            f"{_P}.actions:stop",
            batch=f"{_P}.actions:stop_many",
            batch_size=STOP_BATCH,
        ),
    },
    **standard_parts(_P),
    read_many=f"{_P}.actions:current_many",  # a batch's gates: one DescribeInstances for its 20 (reaper.sweep.batch)
    budgeted=True,
    default_action=ActionName.STOP,
    events=(EventRoute("aws.ec2", ("EC2 Instance State-change Notification",), f"{_P}.events:route"),),
)

"""What else manages an instance, read from the tags AWS services put on the instances they launch.

Stopping a member of a group, cluster or fleet fights its controller: an Auto Scaling group marks
a stopped instance unhealthy and replaces it, a cluster loses a node mid-job, a fleet re-launches
capacity. Those are left to their controller, each with the tag that says who it is. Keys are
matched case-insensitively and by prefix where a service writes several; matching errs towards
keeping.

Managers outside AWS (Ray's autoscaler, SkyPilot) tag the instances they launch too; those tags
come from their source code, not from AWS. An instance whose tag keys only look like a manager's
(a key holding "cluster", "node-type", "nodepool", "nodegroup" or "autoscal") is left alone when no
person claims it: no `ml:owner` tag, and DescribeInstances does not say who launched it, so the
launching principal is unknown and counts as a role, not a person (`unknown_manager`).
"""

from __future__ import annotations

from collections.abc import Mapping

from reaper.core.policy import OWNER
from reaper.kinds.ec2.shapes import SpotInstanceRequest

# (tag key or key prefix ending in ':' or '/', who manages it), in order of precedence (SkyPilot
# launches through Ray's tags, so it is named first). Sources, per service:
MANAGER_TAGS: tuple[tuple[str, str], ...] = (
    # SkyPilot tags each node it launches skypilot-cluster-name (and skypilot-user, skypilot-head-node);
    # found in source skypilot-org/skypilot, sky/provision/aws/instance.py and sky/provision/kubernetes/instance.py
    ("skypilot-cluster-name", "managed by SkyPilot: a node of SkyPilot cluster"),
    ("skypilot-user", "managed by SkyPilot: a node launched for SkyPilot user"),
    ("skypilot-head-node", "managed by SkyPilot: a SkyPilot head node"),
    # Ray's cluster launcher and autoscaler tag every node ray-cluster-name, ray-node-type (head or
    # worker), ray-launch-config, ray-node-name, ray-user-node-type; found in source ray-project/ray,
    # python/ray/autoscaler/tags.py ("Tag uniquely identifying all nodes of a cluster")
    ("ray-cluster-name", "managed by Ray: a node of Ray cluster"),
    ("ray-node-type", "managed by Ray: a Ray node of type"),
    ("ray-launch-config", "managed by Ray: a node of a Ray cluster"),
    ("ray-node-name", "managed by Ray: a Ray node"),
    ("ray-user-node-type", "managed by Ray: a Ray node of type"),
    # Auto Scaling tags each instance it launches with the group name:
    # https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-tagging.html
    ("aws:autoscaling:groupName", "a member of Auto Scaling group"),
    # EKS managed node groups and self-managed nodes: eks:cluster-name / eks:nodegroup-name, and the
    # kubernetes.io/cluster/<name> tag every node of a cluster carries:
    # https://docs.aws.amazon.com/eks/latest/userguide/eks-using-tags.html
    ("eks:cluster-name", "an EKS node of cluster"),
    ("eks:nodegroup-name", "an EKS node of node group"),
    ("kubernetes.io/cluster/", "a Kubernetes node"),
    # Karpenter-launched nodes (no Auto Scaling group): karpenter.sh/nodepool, karpenter.sh/provisioner-name
    ("karpenter.sh/", "a Karpenter node"),
    # AWS Batch: compute-environment instances carry AWSBatchServiceTag (and an Auto Scaling group or
    # Spot Fleet tag as well): https://docs.aws.amazon.com/batch/latest/userguide/using-tags.html
    ("awsbatchservicetag", "an AWS Batch compute-environment instance"),
    ("aws:batch:", "an AWS Batch compute-environment instance"),
    # AWS ParallelCluster tags every node parallelcluster:cluster-name / parallelcluster:node-type:
    # https://docs.aws.amazon.com/parallelcluster/latest/ug/tags-v3.html
    ("parallelcluster:", "an AWS ParallelCluster node"),
    # SageMaker HyperPod nodes normally live in a SageMaker-owned account and never show here; any
    # instance that does carry sagemaker: tags was launched by SageMaker and is SageMaker's:
    # https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod.html
    ("sagemaker:", "a SageMaker-managed instance (HyperPod)"),
    # EMR: aws:elasticmapreduce:job-flow-id and aws:elasticmapreduce:instance-group-role on every node:
    # https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-plan-tags.html
    ("aws:elasticmapreduce:", "an EMR cluster node"),
    # EC2 Fleet and Spot Fleet tag the instances they launch with their request id:
    # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-fleet.html
    ("aws:ec2:fleet-id", "an EC2 Fleet instance of"),
    ("aws:ec2spot:fleet-request-id", "a Spot Fleet instance of"),
    # ECS: a capacity provider with managed scaling adds AmazonECSManaged to its Auto Scaling group,
    # which propagates it to the instances; ECS Managed Instances are launched by ECS itself:
    # https://docs.aws.amazon.com/AmazonECS/latest/developerguide/cluster-auto-scaling.html
    ("amazonecsmanaged", "an ECS capacity-provider instance"),
    ("aws:ecs:", "an ECS-managed instance"),
)

# Words in a tag key that say a cluster manager may own the instance, when no known one does.
MANAGER_WORDS = ("cluster", "node-type", "nodetype", "nodepool", "node-pool", "nodegroup", "node-group", "autoscal")


def managed_by(tags: Mapping[str, str]) -> str | None:
    """A known manager, or else an unknown one that no person claims (see the module's docstring)."""
    return manager(tags) or unknown_manager(tags)


def unknown_manager(tags: Mapping[str, str]) -> str | None:
    if any(k.strip().lower() == OWNER and str(v).strip() for k, v in tags.items()):
        return None  # a person claims it: normal rules
    for key in sorted(k.strip() for k in tags):
        if any(word in key.lower() for word in MANAGER_WORDS):
            return (
                f"looks managed by a cluster manager mlreaper does not know (tag {key}) and no person claims it "
                f"(no {OWNER}; who launched it is unknown, so a role, not a person): tag {OWNER} to let the reaper judge it"
            )
    return None


def manager(tags: Mapping[str, str]) -> str | None:
    """Who manages an instance with these tags, e.g. "a member of Auto Scaling group web (tag aws:autoscaling:groupName)"."""
    for pattern, who in MANAGER_TAGS:
        p = pattern.lower()
        for key, value in tags.items():
            k = key.strip().lower()
            hit = k.startswith(p) if p.endswith((":", "/")) else k == p
            if hit:
                shown = value.strip() if value and value.strip() and not p.endswith("/") else ""
                return f"{who} {shown}".strip() + f" (tag {key.strip()})"
    return None


def spot_stop_problem(request: SpotInstanceRequest | None) -> str | None:
    """Why a Spot instance cannot be stopped, or None when it can.

    Only a Spot instance launched by a persistent request whose interruption behaviour is stop (or
    hibernate) may be stopped; one-time requests can only be terminated:
    https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/interruption-behavior.html
    """
    if request is None:
        return "a Spot instance whose request could not be read (only persistent requests with stop behaviour can be stopped)"
    kind = str(request.get("Type", "")).lower()
    behaviour = str(request.get("InstanceInterruptionBehavior", "terminate")).lower()
    if kind != "persistent":
        return f"a Spot instance of a {kind or 'one-time'} request, which AWS only lets terminate, never stop"
    if behaviour not in ("stop", "hibernate"):
        return f"a Spot instance whose request interrupts by {behaviour}, which AWS only lets terminate, never stop"
    return None

"""What else manages an instance, read from the tags AWS services put on the instances they launch.

Stopping a member of a group, cluster or fleet fights its controller: an Auto Scaling group marks
a stopped instance unhealthy and replaces it, a cluster loses a node mid-job, a fleet re-launches
capacity. Those are left to their controller, each with the tag that says who it is. Keys are
matched case-insensitively and by prefix where a service writes several; matching errs towards
keeping.
"""

from __future__ import annotations

from collections.abc import Mapping

# (tag key or key prefix ending in ':' or '/', who manages it). Sources, per service:
MANAGER_TAGS: tuple[tuple[str, str], ...] = (
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
)


def manager(tags: Mapping[str, str]) -> str | None:
    """Who manages an instance with these tags, e.g. "a member of Auto Scaling group web (tag aws:autoscaling:groupName)"."""
    for key, value in tags.items():
        k = key.strip().lower()
        for pattern, who in MANAGER_TAGS:
            p = pattern.lower()
            hit = k.startswith(p) if p.endswith((":", "/")) else k == p
            if hit:
                shown = value.strip() if value and value.strip() and not p.endswith("/") else ""
                return f"{who} {shown}".strip() + f" (tag {key.strip()})"
    return None


def spot_stop_problem(request: Mapping[str, object] | None) -> str | None:
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

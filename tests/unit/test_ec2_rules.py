"""The ec2 kind's pure parts: who manages an instance, which Spot instances may stop, the type catalogue, the rule."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reaper.core.model import Verdict
from reaper.core.settings import OffHours, Settings
from reaper.kinds.ec2.catalog import describe
from reaper.kinds.ec2.managed import managed_by, manager, spot_stop_problem
from reaper.kinds.ec2.settings import Ec2Settings
from tests.helpers.ec2_rules import FACTS, run, signal


@pytest.mark.parametrize(
    ("tags", "words"),
    [
        ({"AWS:AutoScaling:GroupName": "g"}, "Auto Scaling group g"),
        ({"kubernetes.io/cluster/prod-eks": "owned"}, "Kubernetes node"),
        ({"karpenter.sh/nodepool": "gpu"}, "Karpenter"),
        ({"awsbatchservicetag": "batch"}, "AWS Batch"),
        ({" parallelcluster:node-type ": "Compute"}, "ParallelCluster"),
        ({"aws:ec2spot:fleet-request-id": "sfr-1"}, "Spot Fleet"),
        ({"ray-cluster-name": "llm", "ray-node-type": "head"}, "managed by Ray"),
        ({"ray-cluster-name": "sky-2ea4", "skypilot-cluster-name": "sky"}, "managed by SkyPilot"),
        ({"AmazonECSManaged": ""}, "ECS"),
    ],
)
def test_managers_are_found_whatever_the_case(tags, words):
    who = manager(tags)
    assert who is not None and words in who


def test_a_manager_looking_tag_keeps_an_instance_only_when_no_person_claims_it():
    assert managed_by({"acme-NodePool": "gpu"}) is not None
    assert managed_by({"acme-NodePool": "gpu", "ML:Owner": "ana@example.com"}) is None
    assert managed_by({"ml:owner": " ", "team-cluster": "x"}) is not None  # a blank owner claims nothing


def test_look_alike_tags_are_not_managers():
    assert manager({"Name": "eks:cluster-name", "team": "autoscaling", "aws:cloudformation:stack-name": "s"}) is None


@pytest.mark.parametrize(
    ("request_", "stoppable"),
    [
        ({"Type": "persistent", "InstanceInterruptionBehavior": "stop"}, True),
        ({"Type": "persistent", "InstanceInterruptionBehavior": "hibernate"}, True),
        ({"Type": "persistent", "InstanceInterruptionBehavior": "terminate"}, False),
        ({"Type": "persistent"}, False),  # terminate is the default
        ({"Type": "one-time", "InstanceInterruptionBehavior": "stop"}, False),
        (None, False),
    ],
)
def test_only_persistent_spot_requests_with_stop_behaviour_may_stop(request_, stoppable):
    assert (spot_stop_problem(request_) is None) is stoppable


def test_catalogue_reads_gpu_neuron_and_inference_accelerators_and_instance_store():
    gpu = describe(
        {
            "InstanceType": "g5.xlarge",
            "GpuInfo": {"Gpus": [{"Count": 1, "Manufacturer": "NVIDIA", "Name": "A10G"}]},
            "InstanceStorageSupported": True,
            "InstanceStorageInfo": {"TotalSizeInGB": 250},
        }
    )
    assert gpu is not None and (gpu.accelerator, gpu.detail, gpu.instance_store_gib) == ("gpu", "1 x NVIDIA A10G", 250)
    neuron = describe({"InstanceType": "trn1.2xlarge", "NeuronInfo": {"NeuronDevices": [{"Count": 1, "Name": "Trainium"}]}})
    assert neuron is not None and neuron.accelerator == "neuron" and neuron.instance_store_gib == 0
    assert (
        describe({"InstanceType": "inf1.xlarge", "InferenceAcceleratorInfo": {"Accelerators": [{"Count": 1, "Name": "Inferentia"}]}})
        is not None
    )
    assert describe({"InstanceType": "m5.large", "GpuInfo": {}}) is None  # an empty section is no accelerator
    assert describe({"InstanceType": "m5.large"}) is None


def test_idle_everywhere_acts_and_shows_the_figures():
    d = run(sig=signal(gpu=[0.0] * 36))
    assert d.verdict is Verdict.ACT and d.action == "stop" and "CPU ≤ 1.0 %" in d.reason


def test_a_busy_gpu_at_low_cpu_is_kept():
    d = run(sig=signal(cpu=[2.0] * 36, gpu=[0.0] * 5 + [90.0] + [0.0] * 30))
    assert d.verdict is Verdict.KEEP and "GPU utilization (busiest GPU) 90 %" in d.reason


def test_no_signal_at_all_is_unknown_not_idle():
    d = run(sig=None)
    assert d.verdict is Verdict.KEEP and "no CPUUtilization data" in d.reason


def test_a_network_gap_is_unknown():
    d = run(sig=signal(net=[1000.0, None] + [1000.0] * 34, gpu=[0.0] * 36))
    assert d.verdict is Verdict.KEEP and "gap in NetworkIn/NetworkOut" in d.reason


def test_no_gpu_metric_is_kept_and_told_once_per_instance():
    d = run(sig=signal())
    assert d.verdict is Verdict.KEEP and d.notify and d.notify_key == "ec2-no-accelerator-metric:i-0abc"
    assert run(sig=signal(), settings=Settings().with_kind(Ec2Settings(cpu_only=True))).verdict is Verdict.ACT


def test_neuron_instances_read_neuron_metrics():
    facts = replace(FACTS, accelerator="neuron")
    assert run(facts, signal(neuron=[0.0] * 36)).verdict is Verdict.ACT
    kept = run(facts, signal(gpu=[0.0] * 36))  # GPU metrics on an Inferentia box say nothing
    assert kept.verdict is Verdict.KEEP and "neuroncore_utilization" in kept.reason


def test_instance_store_waits_for_disposable_and_off_hours_respects_it_too():
    facts = replace(FACTS, instance_store_gib=900)
    kept = run(facts, signal(gpu=[0.0] * 36))
    assert kept.verdict is Verdict.KEEP and "900 GB instance store" in kept.reason and kept.notify
    assert run(facts, signal(gpu=[0.0] * 36), {"reaper:disposable": "true"}).verdict is Verdict.ACT
    night = Settings(off_hours=OffHours(enabled=True, start="01:00", end="02:00"))
    assert run(facts, None, settings=night).verdict is Verdict.KEEP
    assert run(FACTS, None, settings=night).verdict is Verdict.ACT  # off-hours: stopped without evidence


def test_managed_spot_and_instance_store_roots_never_act_whatever_the_evidence():
    idle = signal(gpu=[0.0] * 36)
    for facts in (
        replace(FACTS, managed_by="a member of Auto Scaling group g (tag aws:autoscaling:groupName)"),
        replace(FACTS, root_device_type="instance-store"),
        replace(FACTS, lifecycle="spot", spot_stop="a Spot instance of a one-time request"),
    ):
        night = Settings(off_hours=OffHours(enabled=True, start="01:00", end="02:00"))
        assert run(facts, idle).verdict is Verdict.KEEP
        assert run(facts, idle, settings=night).verdict is Verdict.KEEP

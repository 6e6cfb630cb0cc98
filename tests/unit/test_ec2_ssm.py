"""GpuSsmReads, pure parts: what nvidia-smi's CSV means, how one sample weighs in the ec2 rule, and the
bounded wait for invocations that have not finished (a fake SSM client and a fake clock: no sleep)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from reaper.core.model import Verdict
from reaper.core.settings import Settings
from reaper.kinds.ec2 import ssm
from reaper.kinds.ec2.model import GpuSample
from reaper.kinds.ec2.settings import Ec2Settings
from tests.helpers.ec2_rules import run, signal


@pytest.mark.parametrize(
    ("output", "status", "gpus"),
    [
        ("0, 431\n", "read", ((0.0, 431.0),)),
        ("0, 431\n87, 20112\n", "read", ((0.0, 431.0), (87.0, 20112.0))),
        ("", "failed", ()),
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", "failed", ()),
        ("[N/A], 431\n", "failed", ()),
        ("0, 431, 7\n", "failed", ()),
        ("140, 431\n", "failed", ()),
    ],
)
def test_nvidia_smi_csv_is_read_or_refused(output, status, gpus):
    sample = ssm.parse(output)
    assert (sample.status, sample.gpus) == (status, gpus)
    assert output.strip() == "" or output.strip() not in sample.detail  # the raw output never travels on


def sampled(sample: GpuSample | None, **kw: Any):
    return run(sig=replace(signal(**kw), gpu_sample=sample))


def test_an_all_zero_sample_with_cpu_and_network_idle_acts():
    decision = sampled(GpuSample("read", ((0.0, 431.0), (0.0, 2.0))))
    assert decision.verdict is Verdict.ACT and "nvidia-smi reads 0 % on all 2 GPU(s)" in decision.reason
    assert decision.evidence["gpu_sample"][0] == {"utilization_gpu_percent": 0.0, "memory_used_mib": 431.0}


@pytest.mark.parametrize(
    ("sample", "unknown", "words"),
    [
        (GpuSample("read", ((0.0, 1.0), (40.0, 9000.0))), None, "busiest GPU at 40 %"),
        (GpuSample("read", ((2.0, 1.0),)), "gpu-sample-only", "neither busy nor idle"),
        (GpuSample("no-agent", detail="no online SSM Agent"), "no-ssm-agent", "no online SSM Agent"),
        (GpuSample("failed", detail="nvidia-smi command Failed"), "ssm-read-failed", "nvidia-smi command Failed"),
    ],
)
def test_a_sample_that_is_not_all_zero_keeps_it(sample, unknown, words):
    decision = sampled(sample)
    assert (decision.verdict, decision.unknown) == (Verdict.KEEP, unknown) and words in decision.reason


def test_an_idle_sample_does_not_outweigh_a_busy_cpu():
    decision = sampled(GpuSample("read", ((0.0, 1.0),)), cpu=[1.0] * 3 + [60.0] + [1.0] * 32)
    assert decision.verdict is Verdict.KEEP and "CPU 60 %" in decision.reason


def test_an_idle_sample_with_a_network_gap_is_only_a_sample():
    decision = sampled(GpuSample("read", ((0.0, 1.0),)), net=[1000.0] * 4 + [None] + [1000.0] * 31)
    assert (decision.verdict, decision.unknown) == (Verdict.KEEP, "gpu-sample-only")


def test_cpu_only_policy_still_decides_when_the_sample_could_not_be_read():
    settings = Settings().with_kind(Ec2Settings(cpu_only=True))
    decision = run(sig=replace(signal(), gpu_sample=GpuSample("no-agent")), settings=settings)
    assert decision.verdict is Verdict.ACT and "CPU-only policy" in decision.reason


class PendingSsm:
    """Agents online, commands accepted, invocations that stay InProgress."""

    def __init__(self) -> None:
        self.sent: list[list[str]] = []
        self.polls = 0

    def get_paginator(self, name: str) -> Any:
        outer = self

        class Pages:
            def paginate(self, **kw: Any) -> list[dict[str, Any]]:
                if name == "describe_instance_information":
                    ids = kw["Filters"][0]["Values"]
                    return [{"InstanceInformationList": [{"InstanceId": i, "PingStatus": "Online"} for i in ids]}]
                outer.polls += 1
                batch = outer.sent[int(kw["CommandId"])]
                return [{"CommandInvocations": [{"InstanceId": i, "Status": "InProgress"} for i in batch]}]

        return Pages()

    def send_command(self, **kw: Any) -> dict[str, Any]:
        self.sent.append(kw["InstanceIds"])
        return {"Command": {"CommandId": str(len(self.sent) - 1)}}


def test_invocations_not_finished_within_the_bound_are_unknown_and_batches_hold_50():
    # Given 120 candidates whose commands never finish, and a clock that only moves when the reader sleeps
    fake, now = PendingSsm(), [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    ids = [f"i-{k:017x}" for k in range(120)]
    out = ssm.read(fake, ids, sleep=sleep, clock=lambda: now[0])
    # Then three commands of at most 50 ids, a bounded number of polls, and every box unknown with why
    assert [len(b) for b in fake.sent] == [50, 50, 20]
    assert fake.polls == 3 * (int(ssm.WAIT_SECONDS // ssm.POLL_SECONDS) + 1)
    assert {s.status for s in out.values()} == {"failed"} and set(out) == set(ids)
    assert "had not answered" in out[ids[0]].detail


# -- the instance store, read by the same command (issue 37, item 1) ---------------------------------
def store_output(*lines: str, gpus: str = "0, 431") -> str:
    return "\n".join(["#gpu", gpus, "#store", *lines]) + "\n"


@pytest.mark.parametrize(
    ("lines", "status", "disks", "with_data", "used"),
    [
        (
            ("disk nvme1n1", "mount /dev/nvme0n1p1 9 99 1 /", "mount /dev/nvme1n1 48000000000 250000000000 1 /opt/dlami/nvme"),
            "read",
            ("nvme1n1",),
            ("/opt/dlami/nvme",),
            48_000_000_000,
        ),
        (("disk nvme1n1", "mount /dev/nvme1n1 72000000 250000000000 0 /opt/dlami/nvme"), "read", ("nvme1n1",), (), 0),
        (("disk nvme1n1",), "read", ("nvme1n1",), (), 0),
        # a partition, and a RAID 0 over two disks with LVM on top: both on the store
        (("disk nvme1n1", "mount /dev/nvme1n1p1 5 9 1 /data"), "read", ("nvme1n1",), ("/data",), 5),
        (
            (
                "disk nvme1n1",
                "disk nvme2n1",
                "holder md0 nvme1n1",
                "holder md0 nvme2n1",
                "holder dm-0 md0",
                "mount /dev/dm-0 7 9 1 /scratch dir",
            ),
            "read",
            ("nvme1n1", "nvme2n1"),
            ("/scratch dir",),
            7,
        ),
        # an EBS data volume with files is not the instance store
        (("disk nvme2n1", "mount /dev/nvme1n1 7 9 1 /ebs"), "read", ("nvme2n1",), (), 0),
        (("disk nvme1n1", "----------ERROR-------"), "failed", (), (), 0),
        (("disk nvme1n1", "mount /dev/nvme1n1 lots 9 1 /x"), "failed", (), (), 0),
        (("disk nvme1n1", "mount /dev/nvme1n1 5 9 maybe /x"), "failed", (), (), 0),
    ],
)
def test_the_instance_store_section_is_read_or_refused(lines, status, disks, with_data, used):
    store = ssm.parse(store_output(*lines)).store
    assert store is not None and (store.status, store.disks) == (status, disks)
    assert tuple(m.mount for m in store.with_data) == with_data and store.used_bytes == used


def test_the_gpu_part_and_the_store_part_are_read_apart():
    # nvidia-smi missing (a Neuron box): no GPU reading, the store still read
    sample = ssm.parse(store_output("disk nvme1n1", gpus=""))
    assert sample.status == "failed" and sample.store is not None and sample.store.status == "read"
    # nvidia-smi's plain CSV (an older command's answer): a GPU reading, no store reading
    assert ssm.parse("0, 431\n").store is None
    # the marks without the store section: neither
    assert ssm.parse("#gpu\n0, 431\n").status == "failed"

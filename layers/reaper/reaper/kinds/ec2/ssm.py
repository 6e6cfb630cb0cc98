"""GpuSsmReads: one `nvidia-smi` sample through Systems Manager, for GPU boxes that publish no GPU series, and
in the same command the box's instance store (its NVMe devices, what is mounted on them and whether it holds files)
for boxes with one.

Admin opt-in (docs/ssm-gpu-reads.md). For the candidates only (a GPU box with no GPU series, not exempt,
snoozed, badly tagged or production: the caller picks them, and IAM denies SendCommand on the rest):
1. DescribeInstanceInformation, filtered on the candidates' ids: which have an SSM Agent that is Online.
2. SendCommand, AWS-RunShellScript running exactly `COMMAND`, up to 50 instance ids a call.
3. ListCommandInvocations with Details, one call per command: each instance's status and output.
The command runs asynchronously; the sweep polls for at most `WAIT_SECONDS` (nvidia-smi answers in
about a second) and a box whose invocation has not finished by then is unknown this sweep. Reading it
in the next sweep instead would judge a sample minutes old. Only the parsed figures leave this module:
the raw output is never logged, stored or posted.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from reaper.kinds.ec2.model import GpuSample, StoreMount, StoreReading

NVIDIA_SMI = "nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits"
# How EC2 names an instance-store NVMe device to the OS: its model string (docs/aws-assumptions.md, I-1).
STORE_MODEL = "Amazon EC2 NVMe Instance Storage"
GPU_MARK, STORE_MARK = "#gpu", "#store"
# The one command ever sent: read-only, no argument from a tag or a user. It prints nvidia-smi's CSV, then one
# line per instance-store disk (`disk NAME`), per device built over another (`holder NAME SLAVE`: RAID, LVM),
# and per mounted /dev filesystem (`mount DEVICE USED_BYTES SIZE_BYTES HAS_FILES PATH`; HAS_FILES is 1 when
# anything but lost+found sits at its top: `find -quit` stops at the first entry, so a full disk costs no more).
COMMAND = (
    f"exec 2>/dev/null; echo '{GPU_MARK}'; {NVIDIA_SMI}; echo '{STORE_MARK}'; "
    "for b in /sys/block/*; do n=${b##*/}; "
    f'grep -qs \'{STORE_MODEL}\' "$b/device/model" && echo "disk $n"; '
    'for s in "$b"/slaves/*; do [ -e "$s" ] && echo "holder $n ${s##*/}"; done; done; '
    "df -P -B1 | tail -n +2 | while read -r src size used avail pct mnt; do case $src in /dev/*) "
    'f=0; [ -n "$(find "$mnt" -xdev -mindepth 1 -maxdepth 1 ! -name lost+found -print -quit)" ] && f=1; '
    'echo "mount $(readlink -f "$src") $used $size $f $mnt";; esac; done; true'
)
DOCUMENT = "AWS-RunShellScript"
MAX_IDS = 50  # SendCommand InstanceIds: "you can specify up to 50 IDs"
FILTER_IDS = 50  # DescribeInstanceInformation: ids per InstanceIds filter, one page of MaxResults 50
COMMAND_TIMEOUT_SECONDS = 30  # SendCommand TimeoutSeconds (minimum 30): not delivered by then = not run
WAIT_SECONDS = 20.0  # how long a sweep waits for the invocations in all
POLL_SECONDS = 2.0
DONE = {"Success", "Failed", "TimedOut", "Cancelled", "Undeliverable", "Terminated", "DeliveryTimedOut", "ExecutionTimedOut"}


def read(
    ssm: Any,
    instance_ids: Iterable[str],
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, GpuSample]:
    """One GpuSample per candidate: `read` with per-GPU figures, or why there is none."""
    ids = sorted(set(instance_ids))
    if not ids:
        return {}
    try:
        online = _online(ssm, ids)
    except (ClientError, BotoCoreError) as exc:
        return {i: GpuSample("failed", detail=f"DescribeInstanceInformation failed: {_code(exc)}") for i in ids}
    out = {i: GpuSample("no-agent", detail="no online SSM Agent") for i in ids if i not in online}
    targets = [i for i in ids if i in online]
    commands: dict[str, list[str]] = {}
    for k in range(0, len(targets), MAX_IDS):
        batch = targets[k : k + MAX_IDS]
        try:
            commands[_send(ssm, batch)] = batch
        except (ClientError, BotoCoreError) as exc:
            out.update({i: GpuSample("failed", detail=f"SendCommand failed: {_code(exc)}") for i in batch})
    out.update(_collect(ssm, commands, sleep, clock))
    return out


def _online(ssm: Any, ids: list[str]) -> set[str]:
    online: set[str] = set()
    for k in range(0, len(ids), FILTER_IDS):
        pages = ssm.get_paginator("describe_instance_information").paginate(
            Filters=[{"Key": "InstanceIds", "Values": ids[k : k + FILTER_IDS]}]
        )
        for page in pages:
            online |= {i["InstanceId"] for i in page.get("InstanceInformationList", []) if i.get("PingStatus") == "Online"}
    return online


def _send(ssm: Any, batch: list[str]) -> str:
    answer = ssm.send_command(
        InstanceIds=batch,
        DocumentName=DOCUMENT,
        Parameters={"commands": [COMMAND]},
        TimeoutSeconds=COMMAND_TIMEOUT_SECONDS,
        Comment="mlreaper: GPU utilisation and instance-store sample (read-only)",
    )
    return str(answer["Command"]["CommandId"])


def _collect(
    ssm: Any, commands: Mapping[str, list[str]], sleep: Callable[[float], None], clock: Callable[[], float]
) -> dict[str, GpuSample]:
    out: dict[str, GpuSample] = {}
    pending = dict(commands)
    give_up = clock() + WAIT_SECONDS
    while pending:
        for command_id in list(pending):
            try:
                finished = _invocations(ssm, command_id)
            except (ClientError, BotoCoreError) as exc:
                out.update({i: GpuSample("failed", detail=f"ListCommandInvocations failed: {_code(exc)}") for i in pending.pop(command_id)})
                continue
            out.update({i: s for i, s in finished.items() if i in pending[command_id]})
            pending[command_id] = [i for i in pending[command_id] if i not in finished]
            if not pending[command_id]:
                del pending[command_id]
        if not pending or clock() + POLL_SECONDS > give_up:
            break
        sleep(POLL_SECONDS)
    late = {i for batch in pending.values() for i in batch}
    out.update({i: GpuSample("failed", detail=f"nvidia-smi had not answered within {WAIT_SECONDS:.0f} s") for i in late})
    return out


def _invocations(ssm: Any, command_id: str) -> dict[str, GpuSample]:
    """The finished invocations of one command, each as a GpuSample."""
    out: dict[str, GpuSample] = {}
    for page in ssm.get_paginator("list_command_invocations").paginate(CommandId=command_id, Details=True):
        for inv in page.get("CommandInvocations", []):
            status = inv.get("Status", "")
            if status not in DONE:
                continue
            if status != "Success":
                out[inv["InstanceId"]] = GpuSample("failed", detail=f"nvidia-smi command {status}")
                continue
            output = "".join(p.get("Output", "") for p in inv.get("CommandPlugins", []))
            out[inv["InstanceId"]] = parse(output)
    return out


def parse(output: str) -> GpuSample:
    """COMMAND's output: the GPU sample, with the instance store read beside it. Output without the marks is
    nvidia-smi's CSV alone (no store reading)."""
    lines = output.strip().splitlines()
    if not lines or lines[0].strip() != GPU_MARK:
        return parse_gpus(output)
    ends = [k for k, line in enumerate(lines) if line.strip() == STORE_MARK]
    if not ends:
        return GpuSample(
            "failed", detail="the command printed no instance-store section", store=StoreReading("failed", detail="no section")
        )
    gpu = parse_gpus("\n".join(lines[1 : ends[0]]))
    return GpuSample(gpu.status, gpu.gpus, gpu.detail, store=parse_store(lines[ends[0] + 1 :]))


def parse_gpus(output: str) -> GpuSample:
    """`utilization.gpu, memory.used` per line, one line per GPU; anything else is no reading."""
    gpus: list[tuple[float, float]] = []
    for line in output.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            util, mem = float(parts[0]), float(parts[1])
        except (ValueError, IndexError):
            return GpuSample("failed", detail="nvidia-smi printed something other than its CSV figures")
        if len(parts) != 2 or not 0 <= util <= 100 or mem < 0:
            return GpuSample("failed", detail="nvidia-smi printed something other than its CSV figures")
        gpus.append((util, mem))
    if not gpus:
        return GpuSample("failed", detail="nvidia-smi printed no GPU")
    return GpuSample("read", gpus=tuple(gpus))


_PARTITION = re.compile(r"^(?P<disk>.+?)p[0-9]+$")
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def parse_store(lines: list[str]) -> StoreReading:
    """The store section: disks, holders and mounts; any line of another shape makes the whole reading unknown."""
    disks: list[str] = []
    holders: list[tuple[str, str]] = []
    mounts: list[tuple[str, int, bool, str]] = []
    for line in lines:
        parts = line.rstrip("\n").split(" ", 5)
        try:
            if parts[0] == "disk" and len(parts) == 2 and _NAME.match(parts[1]):
                disks.append(parts[1])
            elif parts[0] == "holder" and len(parts) == 3 and _NAME.match(parts[1]) and _NAME.match(parts[2]):
                holders.append((parts[1], parts[2]))
            elif parts[0] == "mount" and len(parts) == 6 and parts[4] in ("0", "1") and int(parts[2]) >= 0:
                mounts.append((parts[1].rsplit("/", 1)[-1], int(parts[2]), parts[4] == "1", parts[5][:256]))
            elif line.strip():
                return StoreReading("failed", detail="the instance-store section held a line of another shape")
        except ValueError:
            return StoreReading("failed", detail="the instance-store section held a figure that is not a number")
    on_store = _store_devices(set(disks), holders)
    found = tuple(StoreMount(device, path, used, files) for device, used, files, path in mounts if _base(device, on_store) is not None)
    return StoreReading("read", disks=tuple(sorted(disks)), mounts=found)


def _store_devices(disks: set[str], holders: list[tuple[str, str]]) -> set[str]:
    """The disks, and every device built over one of them or over their partitions (RAID 0 over the NVMe
    disks, LVM over that, ...): whatever it holds is erased with them."""
    out = set(disks)
    grew = True
    while grew:
        grew = False
        for holder, slave in holders:
            if holder not in out and _base(slave, out) is not None:
                out.add(holder)
                grew = True
    return out


def _base(device: str, devices: set[str]) -> str | None:
    """`device` itself, or the device it is a partition of (nvme1n1p1 -> nvme1n1), when that is in `devices`."""
    if device in devices:
        return device
    part = _PARTITION.match(device)
    return part.group("disk") if part and part.group("disk") in devices else None


def _code(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", "error"))
    return type(exc).__name__

"""Systems Manager as the ec2 kind's GpuSsmReads meets it: which instances have an online SSM Agent,
and what `nvidia-smi` prints on each. moto 5.2.5 has SendCommand and GetCommandInvocation but no
DescribeInstanceInformation and no ListCommandInvocations, and every invocation prints nothing.

- DescribeInstanceInformation: one InstanceInformation per managed node a test registered with
  `register(backend, instance_id, ping="Online")`; the `Filters` key `InstanceIds` selects them
  (https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_DescribeInstanceInformation.html:
  PingStatus is "Connection status of SSM Agent", Online | ConnectionLost | Inactive).
- SendCommand: "you can specify up to 50 IDs" (InstanceIds,
  https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_SendCommand.html): more is a
  ValidationException here. Each invocation's output is the stdout a test gave the instance with
  `stdout(backend, instance_id, text)` (nothing = an empty output, as moto).
- ListCommandInvocations: the command's invocations; with `Details` ("If set this returns the response of
  the command executions and any command output",
  https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_ListCommandInvocations.html) each
  carries CommandPlugins with the plugin's Output ("Output of the plugin execution",
  https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_CommandPlugin.html).
Every state lives on moto's SSM backend: in-process and server mode (ThreadedMotoServer) alike.

`box_output` is what the reaper's one command (reaper.kinds.ec2.ssm.COMMAND) prints on a box with those GPUs
and block devices: nvidia-smi's CSV, then the instance-store NVMe disks (named by their model, "Amazon EC2 NVMe
Instance Storage": https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/nvme-ebs-volumes.html and
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/InstanceStorage.html), the devices built over them, and each
mounted /dev filesystem with df's used bytes and whether anything but lost+found is at its top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.ssm import responses
from moto.ssm.models import ssm_backends

MAX_INSTANCE_IDS = 50


@dataclass
class SsmKit:
    agents: dict[str, str] = field(default_factory=dict)  # instance id -> PingStatus
    stdout: dict[str, str] = field(default_factory=dict)  # instance id -> what nvidia-smi prints
    sent: list[list[str]] = field(default_factory=list)  # the InstanceIds of every SendCommand (tests)
    commands: list[list[str]] = field(default_factory=list)  # the `commands` parameter of each


def kit(backend: Any) -> SsmKit:
    found: SsmKit | None = getattr(backend, "_reaper_ssm", None)
    if found is None:
        found = SsmKit()
        backend._reaper_ssm = found
    return found


def backend_for(region: str, account: str = DEFAULT_ACCOUNT_ID) -> Any:
    """moto's SSM backend of one account and region (in-process, or the server's own process)."""
    return ssm_backends[account][region]


def register(backend: Any, instance_id: str, ping: str = "Online") -> None:
    kit(backend).agents[instance_id] = ping


def stdout(backend: Any, instance_id: str, text: str) -> None:
    kit(backend).stdout[instance_id] = text


def box_output(
    gpus: str = "0, 431\n",
    disks: tuple[str, ...] = (),
    holders: tuple[tuple[str, str], ...] = (),
    mounts: tuple[tuple[str, int, bool, str], ...] = (),
) -> str:
    """What the reaper's command prints on such a box. `mounts`: (device, used bytes, has files, mount point); a
    device is its /dev name as readlink -f gives it (nvme1n1, md0, dm-0), and the root EBS volume is always there."""
    lines = ["#gpu", *gpus.strip().splitlines(), "#store"]
    lines += [f"disk {d}" for d in disks]
    lines += [f"holder {h} {s}" for h, s in holders]
    lines += ["mount /dev/nvme0n1p1 4294967296 107374182400 1 /"]  # the EBS root: never the instance store
    lines += [f"mount /dev/{d} {used} 250000000000 {int(files)} {path}" for d, used, files, path in mounts]
    return "\n".join(lines) + "\n"


class SsmValidation(JsonRESTError):
    code = 400

    def __init__(self, message: str) -> None:
        super().__init__("ValidationException", message)


def describe_instance_information(self: Any) -> ActionResult:
    agents = kit(self.ssm_backend).agents
    wanted: set[str] | None = None
    for f in self._get_param("Filters", []) or []:
        if f.get("Key") == "InstanceIds":
            wanted = set(f.get("Values", []))
    listed = [i for i in sorted(agents) if wanted is None or i in wanted]
    return ActionResult(
        {
            "InstanceInformationList": [
                {"InstanceId": i, "PingStatus": agents[i], "PlatformType": "Linux", "ResourceType": "EC2Instance"} for i in listed
            ]
        }
    )


_original_send = responses.SimpleSystemManagerResponse.send_command


def send_command(self: Any) -> ActionResult:
    ids = self._get_param("InstanceIds", []) or []
    if len(ids) > MAX_INSTANCE_IDS:
        raise SsmValidation(f"InstanceIds: at most {MAX_INSTANCE_IDS} ids, got {len(ids)}")
    k = kit(self.ssm_backend)
    k.sent.append(list(ids))
    k.commands.append(list((self._get_param("Parameters", {}) or {}).get("commands", [])))
    result = _original_send(self)
    command = self.ssm_backend.get_command_by_id(result._result["Command"]["CommandId"])
    if not self._get_param("Targets"):
        # moto adds every instance of the account when Targets is empty (an empty EC2 filter matches all);
        # AWS runs the command on the InstanceIds given and nowhere else
        command.instance_ids = [i for i in command.instance_ids if i in ids]
        command.invocations = [inv for inv in command.invocations if inv["InstanceId"] in ids]
        result._result["Command"]["InstanceIds"] = command.instance_ids
    for invocation in command.invocations:
        invocation["StandardOutputContent"] = k.stdout.get(invocation["InstanceId"], "")
    return result


def list_command_invocations(self: Any) -> ActionResult:
    command = self.ssm_backend.get_command_by_id(self._get_param("CommandId"))
    details = bool(self._get_param("Details", False))
    out = []
    for inv in command.invocations:
        row: dict[str, Any] = {"CommandId": inv["CommandId"], "InstanceId": inv["InstanceId"], "Status": inv["Status"]}
        row["DocumentName"] = inv["DocumentName"]
        if details:
            row["CommandPlugins"] = [
                {
                    "Name": inv["PluginName"],
                    "Status": inv["Status"],
                    "ResponseCode": inv["ResponseCode"],
                    "Output": inv["StandardOutputContent"],
                }
            ]
        out.append(row)
    return ActionResult({"CommandInvocations": out})


def apply() -> None:
    cls = responses.SimpleSystemManagerResponse
    cls.describe_instance_information = describe_instance_information
    cls.send_command = send_command
    cls.list_command_invocations = list_command_invocations

"""Demo scene: GPU EC2 dev boxes — idle ones stopped, busy, managed, unmeasured and protected ones kept."""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper.kinds.ec2 import catalog
from reaper_devkit import seed_ec2
from reaper_devkit.scenes import AHEAD

KIND = "ec2"


def seed(session: boto3.session.Session, now: datetime) -> dict[str, str]:
    catalog.forget()
    ec2, cw = session.client("ec2"), session.client("cloudwatch")
    dev = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "llm"}
    busy_gpu = [92.0] * 6 + [0.0] * 30
    cases = {
        "gpu-idle-overnight": ("g5g.xlarge", dev, {}, {}, "stopped: CPU, network and GPU idle for hours"),
        "gpu-idle-scratch-ok": ("g5.xlarge", {**dev, "reaper:disposable": "true"}, {}, {}, "stopped: its instance store may go"),
        "gpu-training-2pct-cpu": ("g5g.xlarge", dev, {"cpu": [2.0] * 36, "gpu": busy_gpu}, {}, "kept: GPU busy at 2 % CPU"),
        "gpu-no-agent": ("g5g.xlarge", dev, {"gpu": None}, {}, "kept: no GPU metric; the owner is told how to publish it"),
        "gpu-scratch-data": ("g5.xlarge", dev, {}, {}, "kept: a stop would erase its 250 GB instance store"),
        "gpu-asg-member": (
            "g5g.xlarge",
            {**dev, "aws:autoscaling:groupName": "inference-pool"},
            {},
            {},
            "kept: its Auto Scaling group manages it",
        ),
        "gpu-eks-node": ("g5g.xlarge", {**dev, "eks:cluster-name": "ml-platform"}, {}, {}, "kept: an EKS node"),
        "gpu-stop-protected": (
            "g5g.xlarge",
            dev,
            {},
            {"stop_protected": True},
            "warned, then kept: stop protection is on (seen only just before the stop)",
        ),
        "gpu-prod": ("g5g.xlarge", {"ml:owner": "U024BE7LH", "ml:stage": "prod"}, {}, {}, "exempt: production is notify-only"),
        "gpu-just-started": ("g5g.xlarge", dev, {}, {"launched_ago": timedelta(minutes=15)}, "kept: started 15 minutes ago"),
    }
    expected: dict[str, str] = {}
    for name, (itype, tags, metrics, kw, says) in cases.items():
        iid = seed_ec2.instance(ec2, itype, {"Name": name, **tags}, now=now, **kw)
        seed_ec2.metrics(cw, iid, now, ahead=AHEAD, **metrics)
        expected[f"{iid} {name}"] = says
    decoy = seed_ec2.instance(ec2, "m5.xlarge", {"Name": "cpu-web-server", **dev}, now=now)
    seed_ec2.metrics(cw, decoy, now, gpu=None, ahead=AHEAD)
    expected[f"{decoy} cpu-web-server"] = "not listed: no accelerator"
    return expected

"""Every kind's contract kit, as the contract tests sweep it through the kind's real function: two resources
its function acts on at once ("late-tag" and "plain"), how to tell one was changed, how to tag one and read its
tags, and the enforce mode with a grace for the kind by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from reaper.kinds.ec2 import catalog
from reaper_devkit import seed, seed_ec2, seed_storage
from reaper_devkit import seed_studio as studio

ACCOUNT, REGION = "123456789012", "us-east-1"
NAMES = ("late-tag", "plain")
OWNER = {"ml:owner": "ana@example.com", "ml:stage": "dev"}


# -- endpoints, file systems, training jobs (test_safety.py races a protective tag against these too) -------
def seed_endpoints(aws: Any, now: datetime) -> dict[str, str]:
    from reaper_devkit import seed_endpoint as se

    sm = aws.client("sagemaker")
    out = {}
    for name in ("late-tag", "plain"):
        out[name] = se.classic(sm, name, OWNER)
        se.age(name, now, 300)
    return out


def endpoint_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    return name not in {e["EndpointName"] for e in aws.client("sagemaker").list_endpoints()["Endpoints"]}


def seed_file_systems(aws: Any, now: datetime) -> dict[str, str]:
    from reaper_devkit import seed_fsx as sf

    fsx, cw = aws.client("fsx"), aws.client("cloudwatch")
    subnet, group = sf.network(aws.client("ec2"))
    out = {}
    for name in ("late-tag", "plain"):
        fs_id = sf.file_system(fsx, subnet, group, tags={"Name": name, **OWNER}, created_at=now - timedelta(days=3))
        sf.io(cw, fs_id, now)
        out[name] = fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["ResourceARN"]
    return out


def file_system_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    fsx = aws.client("fsx")
    fs_id = arns[name].rsplit("/", 1)[-1]
    return any(b.get("FileSystem", {}).get("FileSystemId") == fs_id for b in fsx.describe_backups()["Backups"]) or not any(
        fs["FileSystemId"] == fs_id for fs in fsx.describe_file_systems()["FileSystems"]
    )


def seed_training_jobs(aws: Any, now: datetime) -> dict[str, str]:
    from reaper_devkit import seed_training as st

    sm = aws.client("sagemaker")
    return {name: st.training_job(sm, name, now, hours_ago=3, tags={**OWNER, "reaper:max-hours": "2"}) for name in ("late-tag", "plain")}


def training_job_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    status = aws.client("sagemaker").describe_training_job(TrainingJobName=name)["TrainingJobStatus"]
    return status != "InProgress"


def _seed_notebooks(aws: Any, now: datetime) -> dict[str, str]:
    sm, cw = aws.client("sagemaker"), aws.client("cloudwatch")
    out = {}
    for name in NAMES:
        out[name] = seed.notebook(sm, name, OWNER)
        seed.activity(cw, name, now, [0.0] * 36)
    return out


def _notebook_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    return aws.client("sagemaker").describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceStatus"] != "InService"


def _seed_instances(aws: Any, now: datetime) -> dict[str, str]:
    catalog.forget()  # the per-process catalogue must not outlive its moto account
    ec2, cw = aws.client("ec2"), aws.client("cloudwatch")
    ami = seed_ec2.image(ec2)
    out = {}
    for name in NAMES:
        iid = seed_ec2.instance(ec2, "g5g.xlarge", {"Name": name, **OWNER}, now=now, ami=ami)
        seed_ec2.metrics(cw, iid, now)
        out[name] = f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{iid}"
    return out


def _instance_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    return seed_ec2.state(aws.client("ec2"), arns[name].rsplit("/", 1)[-1]) != "running"


def _seed_apps(aws: Any, now: datetime) -> dict[str, str]:
    """Idle Canvas apps (the Studio apps AWS publishes activity for: TimeSinceLastActive), one per user."""
    sm = aws.client("sagemaker")
    domain = studio.domain(sm, "lab")
    out = {}
    for name in NAMES:
        studio.user(sm, domain, name, {"ml:owner": "ana@example.com"})
        out[name] = studio.app(sm, domain, user_name=name, app_type="Canvas", tags={"ml:stage": "dev"}, created=now - timedelta(days=2))
        canvas_used(aws, out[name], now - timedelta(hours=3), now)
    return out


def canvas_used(aws: Any, arn: str, last_active: datetime, now: datetime) -> None:
    """Canvas publishes the app's TimeSinceLastActive up to `now`, its user last active at `last_active`."""
    domain, user = arn.split(":app/", 1)[1].split("/")[:2]
    studio.canvas_activity(aws.client("cloudwatch"), domain, user, last_active=last_active, now=now)


def _app_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    return studio.status(aws.client("sagemaker"), arns[name]) != "InService"


def _seed_volumes(aws: Any, now: datetime) -> dict[str, str]:
    """ML volumes attached to nothing for six weeks: the storage kind's first action snapshots them."""
    ec2 = aws.client("ec2")
    out = {}
    for name in NAMES:
        vol = seed_storage.volume(ec2, now - timedelta(weeks=6), tags={"Name": name, **OWNER})
        out[name] = f"arn:aws:ec2:{REGION}:{ACCOUNT}:volume/{vol}"
    return out


def _volume_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    vol = arns[name].rsplit("/", 1)[-1]
    snaps = aws.client("ec2").describe_snapshots(OwnerIds=["self"], Filters=[{"Name": "volume-id", "Values": [vol]}])["Snapshots"]
    return bool(snaps) or seed_storage.volume_state(aws.client("ec2"), vol) is None


@dataclass(frozen=True)
class Kit:
    function: str
    seed: Callable[[Any, datetime], dict[str, str]]
    changed: Callable[[Any, dict[str, str], str], bool]

    def id_of(self, arn: str) -> str:
        return arn.split(":app/", 1)[1] if ":app/" in arn else arn.rsplit("/", 1)[-1]


KITS = {
    "notebook": Kit("notebook", _seed_notebooks, _notebook_changed),
    "endpoint": Kit("endpoint", seed_endpoints, endpoint_changed),
    "fsx": Kit("fsx", seed_file_systems, file_system_changed),
    "training-job": Kit("training_job", seed_training_jobs, training_job_changed),
    "studio-app": Kit("studio_app", _seed_apps, _app_changed),
    "ec2": Kit("ec2", _seed_instances, _instance_changed),
    "storage": Kit("storage", _seed_volumes, _volume_changed),
}


def add_tags(aws: Any, arn: str, tags: dict[str, str]) -> None:
    pairs = [{"Key": k, "Value": v} for k, v in tags.items()]
    if ":fsx:" in arn:
        aws.client("fsx").tag_resource(ResourceARN=arn, Tags=pairs)
    elif ":ec2:" in arn:
        aws.client("ec2").create_tags(Resources=[arn.rsplit("/", 1)[-1]], Tags=pairs)
    else:
        aws.client("sagemaker").add_tags(ResourceArn=arn, Tags=pairs)


def enforcing(monkeypatch: pytest.MonkeyPatch, kind: str, grace_minutes: int) -> None:
    """Enforce, with this grace for every kind and for `kind` by name (a kind's own grace wins)."""
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", str(grace_minutes))
    monkeypatch.setenv("REAPER_KIND_GRACE_MINUTES", f"{kind}={grace_minutes}")


def tags_of(aws: Any, arn: str) -> dict[str, str]:
    if ":fsx:" in arn:
        pairs = aws.client("fsx").list_tags_for_resource(ResourceARN=arn)["Tags"]
    elif ":ec2:" in arn:
        pairs = aws.client("ec2").describe_tags(Filters=[{"Name": "resource-id", "Values": [arn.rsplit("/", 1)[-1]]}])["Tags"]
    else:
        pairs = aws.client("sagemaker").list_tags(ResourceArn=arn)["Tags"]
    return {t["Key"]: t["Value"] for t in pairs}

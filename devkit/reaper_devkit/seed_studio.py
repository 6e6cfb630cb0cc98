"""Seeding SageMaker Studio (domains, user profiles, spaces, apps) for tests, the demo and the bench.

App times (creation, last user activity) are set through the moto extension, which runs in this
process in tests and behind the local server alike.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reaper_devkit.moto_ext import sagemaker_studio
from reaper_devkit.seed import ROLE


def _tags(tags: dict[str, str] | None) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in (tags or {}).items()]


def idle_block(enabled: bool, minutes: int = 120) -> dict[str, Any]:
    state = "ENABLED" if enabled else "DISABLED"
    return {"AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": state, "IdleTimeoutInMinutes": minutes}}}


def domain(sm: Any, name: str, *, idle_shutdown: bool = True, tags: dict[str, str] | None = None) -> str:
    """A domain; its built-in idle shutdown on (JupyterLab and Code Editor) or off. Returns its id."""
    settings: dict[str, Any] = {"ExecutionRole": ROLE}
    settings["JupyterLabAppSettings"] = idle_block(idle_shutdown)
    settings["CodeEditorAppSettings"] = idle_block(idle_shutdown)
    arn = sm.create_domain(
        DomainName=name, AuthMode="IAM", DefaultUserSettings=settings, SubnetIds=["subnet-0abc"], VpcId="vpc-0abc", Tags=_tags(tags)
    )["DomainArn"]
    return str(arn).rsplit("/", 1)[-1]


def user(sm: Any, domain_id: str, name: str, tags: dict[str, str] | None = None) -> str:
    return str(sm.create_user_profile(DomainId=domain_id, UserProfileName=name, Tags=_tags(tags))["UserProfileArn"])


def space(
    sm: Any, domain_id: str, name: str, owner: str | None = None, tags: dict[str, str] | None = None, app_type: str = "JupyterLab"
) -> str:
    kwargs: dict[str, Any] = {"DomainId": domain_id, "SpaceName": name, "Tags": _tags(tags), "SpaceSettings": {"AppType": app_type}}
    if owner:
        kwargs["OwnershipSettings"] = {"OwnerUserProfileName": owner}
        kwargs["SpaceSharingSettings"] = {"SharingType": "Private"}
    return str(sm.create_space(**kwargs)["SpaceArn"])


def app(
    sm: Any,
    domain_id: str,
    *,
    space_name: str | None = None,
    user_name: str | None = None,
    app_type: str = "JupyterLab",
    name: str = "default",
    instance_type: str | None = "ml.t3.medium",
    tags: dict[str, str] | None = None,
    created: datetime | None = None,
    last_activity: datetime | None = None,
) -> str:
    """A running app in a space (JupyterLab, Code Editor) or of a user profile (classic). Returns its ARN."""
    kwargs: dict[str, Any] = {"DomainId": domain_id, "AppType": app_type, "AppName": name, "Tags": _tags(tags)}
    if space_name:
        kwargs["SpaceName"] = space_name
    if user_name:
        kwargs["UserProfileName"] = user_name
    if instance_type:
        kwargs["ResourceSpec"] = {"InstanceType": instance_type}
    arn = str(sm.create_app(**kwargs)["AppArn"])
    sagemaker_studio.set_app_times(arn, created=created, last_user_activity=last_activity, last_health_check=last_activity)
    return arn


def status(sm: Any, arn: str) -> str:
    """An app's status, read by its ARN (app/<domain>/<space or user>/<type>/<name>)."""
    domain_id, owner, app_type, name = arn.split(":app/", 1)[1].split("/")
    found = [
        a
        for a in sm.list_apps(DomainIdEquals=domain_id, MaxResults=100)["Apps"]
        if owner in (a.get("SpaceName"), a.get("UserProfileName")) and a["AppType"] == app_type and a["AppName"] == name
    ]
    return str(found[0]["Status"]) if found else "absent"

"""Seeding SageMaker Studio (domains, user profiles, spaces, apps) for tests, the demo and the bench.

App creation times are set through the moto extension, which runs in this process in tests and
behind the local server alike. A healthy app's DescribeApp "last user activity" is its last health
check, as on AWS, so there is no "last activity" to seed for JupyterLab or Code Editor apps; Canvas
apps' activity is the CloudWatch metric Canvas publishes (`canvas_activity`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from reaper_devkit.moto_ext import cloudtrail_lookup, sagemaker_studio
from reaper_devkit.seed import ROLE

SMD_VERSION = "2.6.0"  # a SageMaker Distribution release idle shutdown runs on (2.0 or newer)
SMD_ACCOUNT = "885854791233"  # the account that publishes SageMaker Distribution images (us-east-1)


def smd_image(sm: Any, flavour: str = "cpu") -> str:
    """The SageMaker Distribution image's ARN in the client's region."""
    return f"arn:aws:sagemaker:{sm.meta.region_name}:{SMD_ACCOUNT}:image/sagemaker-distribution-{flavour}"


def _tags(tags: dict[str, str] | None) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in (tags or {}).items()]


def idle_block(enabled: bool, minutes: int = 120) -> dict[str, Any]:
    state = "ENABLED" if enabled else "DISABLED"
    return {"AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": state, "IdleTimeoutInMinutes": minutes}}}


def domain(
    sm: Any,
    name: str,
    *,
    idle_shutdown: bool = True,
    tags: dict[str, str] | None = None,
    auth_mode: str = "IAM",
    shared_idle_shutdown: bool | None = None,
) -> str:
    """A domain; its built-in idle shutdown on (JupyterLab and Code Editor) or off in DefaultUserSettings (private
    spaces), and for JupyterLab in DefaultSpaceSettings (shared spaces: `shared_idle_shutdown`, as `idle_shutdown` unless
    given); users sign in through IAM (presigned URLs) or IAM Identity Center ("SSO"). Returns its id."""
    settings: dict[str, Any] = {"ExecutionRole": ROLE}
    settings["JupyterLabAppSettings"] = idle_block(idle_shutdown)
    settings["CodeEditorAppSettings"] = idle_block(idle_shutdown)
    shared = idle_shutdown if shared_idle_shutdown is None else shared_idle_shutdown
    space_settings = {"ExecutionRole": ROLE, "JupyterLabAppSettings": idle_block(shared)}
    arn = sm.create_domain(
        DomainName=name,
        AuthMode=auth_mode,
        DefaultUserSettings=settings,
        DefaultSpaceSettings=space_settings,
        SubnetIds=["subnet-0abc"],
        VpcId="vpc-0abc",
        Tags=_tags(tags),
    )["DomainArn"]
    return str(arn).rsplit("/", 1)[-1]


def user(sm: Any, domain_id: str, name: str, tags: dict[str, str] | None = None) -> str:
    return str(sm.create_user_profile(DomainId=domain_id, UserProfileName=name, Tags=_tags(tags))["UserProfileArn"])


def space(
    sm: Any,
    domain_id: str,
    name: str,
    owner: str | None = None,
    tags: dict[str, str] | None = None,
    app_type: str = "JupyterLab",
    shared: bool = False,
    size_gib: int | None = None,
) -> str:
    """A space: private to its owner, or shared (its owner is then who created it; every user of the domain may open it);
    with `size_gib`, its EBS storage size (`SpaceStorageSettings.EbsStorageSettings.EbsVolumeSizeInGb`)."""
    settings: dict[str, Any] = {"AppType": app_type}
    if size_gib is not None:
        settings["SpaceStorageSettings"] = {"EbsStorageSettings": {"EbsVolumeSizeInGb": size_gib}}
    kwargs: dict[str, Any] = {"DomainId": domain_id, "SpaceName": name, "Tags": _tags(tags), "SpaceSettings": settings}
    if owner:
        kwargs["OwnershipSettings"] = {"OwnerUserProfileName": owner}
        kwargs["SpaceSharingSettings"] = {"SharingType": "Shared" if shared else "Private"}
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
    image_arn: str | None = None,
    image_version: str | None = None,
) -> str:
    """A running app in a space (JupyterLab, Code Editor) or of a user profile (Canvas, classic). Returns its ARN.

    A JupyterLab or Code Editor app runs SageMaker Distribution (`SMD_VERSION` unless `image_version` says) as Studio
    launches it, unless `image_arn` names another image (its version alias: `image_version`, None for none)."""
    kwargs: dict[str, Any] = {"DomainId": domain_id, "AppType": app_type, "AppName": name, "Tags": _tags(tags)}
    if space_name:
        kwargs["SpaceName"] = space_name
    if user_name:
        kwargs["UserProfileName"] = user_name
    spec: dict[str, str] = {"InstanceType": instance_type} if instance_type else {}
    if image_arn is None and app_type in ("JupyterLab", "CodeEditor"):
        image_arn, image_version = smd_image(sm), image_version or SMD_VERSION
    if image_arn:
        spec["SageMakerImageArn"] = image_arn
    if image_version:
        spec["SageMakerImageVersionAlias"] = image_version
    if spec:
        kwargs["ResourceSpec"] = spec
    arn = str(sm.create_app(**kwargs)["AppArn"])
    sagemaker_studio.set_app_times(arn, created=created)
    return arn


def app_started(
    domain_id: str,
    when: datetime,
    *,
    space_name: str | None = None,
    user_name: str | None = None,
    app_type: str = "JupyterLab",
    name: str = "default",
    region: str = "us-east-1",
    account: str = "123456789012",
) -> None:
    """CloudTrail's record of a CreateApp call made `when` (moto records none): the management event LookupEvents
    returns, its requestParameters in CloudTrail's camelCase (domainId, spaceName or userProfileName, appType, appName)."""
    params: dict[str, Any] = {"domainId": domain_id, "appType": app_type, "appName": name}
    if space_name:
        params["spaceName"] = space_name
    if user_name:
        params["userProfileName"] = user_name
    arn = f"arn:aws:sagemaker:{region}:{account}:app/{domain_id}/{space_name or user_name}/{app_type.lower()}/{name}"
    cloudtrail_lookup.record("CreateApp", params, when, region=region, account=account, response_elements={"appArn": arn})


CANVAS_NAMESPACE = "/aws/sagemaker/Canvas/AppActivity"


def canvas_activity(cw: Any, domain_id: str, user: str, *, last_active: datetime, now: datetime) -> None:
    """Publish Canvas's TimeSinceLastActive for one user as Canvas does: seconds since the user was last
    active, a datapoint every 5 minutes over the last hour."""
    points = []
    for step in range(12):
        at = now - timedelta(minutes=5 * step)
        points.append(
            {
                "MetricName": "TimeSinceLastActive",
                "Dimensions": [{"Name": "DomainId", "Value": domain_id}, {"Name": "UserProfileName", "Value": user}],
                "Timestamp": at,
                "Value": max(0.0, (at - last_active).total_seconds()),
                "Unit": "Seconds",
            }
        )
    cw.put_metric_data(Namespace=CANVAS_NAMESPACE, MetricData=points)


def status(sm: Any, arn: str) -> str:
    """An app's status, read by its ARN (app/<domain>/<space or user>/<type>/<name>)."""
    domain_id, owner, app_type, name = arn.split(":app/", 1)[1].split("/")
    found = [
        a
        for a in sm.list_apps(DomainIdEquals=domain_id, MaxResults=100)["Apps"]
        if owner in (a.get("SpaceName"), a.get("UserProfileName")) and a["AppType"] == app_type and a["AppName"] == name
    ]
    return str(found[0]["Status"]) if found else "absent"

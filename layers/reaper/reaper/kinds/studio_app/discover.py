"""Every running, billable Studio app in the region, and every domain (for its idle-shutdown settings).

Reads: ListDomains and one DescribeDomain per domain (few); ListApps for the whole region, 100 a
page (it gives type, status, instance type and creation time: no app is described here);
ListSpaces, 100 a page, for who owns each space and whether it is shared (a shared space's idle
shutdown is its domain's DefaultSpaceSettings, a private space's its owner's UserSettings over the
domain's DefaultUserSettings); one DescribeUserProfile per distinct user profile owning a running
JupyterLab or Code Editor app in a private space its domain's idle shutdown covers (a profile can turn
it off: kinds/studio_app/profiles.py); tags of apps, spaces, user profiles and
domains from the Resource Groups Tagging API, 100 a call.

Owner: an app's own `ml:owner` tag, else its space's, else the user profile's (the space owner's,
or the app's own for classic Studio). SageMaker copies a domain's and user profile's tags to apps
launched after the tag was set, so most apps carry them already.
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_AddTags.html

Protection: AWS copies a domain's or user profile's tags to the apps it launches, not a space's
(AddTags: "Tags that you add to a SageMaker Domain or User Profile by calling this API are also
added to any Apps that the Domain or User Profile launches after you call this API"); apps are recreated
whenever a space is opened, so the space is where users tag. A space's `reaper:exempt`,
`reaper:snooze-until` and production `ml:stage` therefore protect its apps: they are added to the
app's tags here (the plan says exempt), and the space is named in `guarded_by`, so its tags are read
again just before any change, like the app's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypedDict

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.aws.pricing import Pricer
from reaper.aws.tagging import tags_by_arn
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.kinds.base import inherit_protection
from reaper.kinds.studio_app import DECLARATION, profiles
from reaper.kinds.studio_app.model import (
    BILLABLE_TYPES,
    FREE_INSTANCE,
    IDLE_SETTING_BLOCKS,
    KIND,
    SPACE_IDLE_SETTING_BLOCKS,
    AppFacts,
    DomainFacts,
    IdleSetting,
)
from reaper.kinds.studio_app.shapes import (
    AppSettings,
    Domain,
    OwnershipSettingsSummary,
    SpaceDetails,
    SpaceSharingSettingsSummary,
    UserSettings,
    describe_domain,
    idle_of,
    listed_domains,
    listed_spaces,
    space_as_user_settings,
)

PAGE = 100


class ResourceSpec(TypedDict, total=False):
    """https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ResourceSpec.html (the fields read)."""

    InstanceType: str
    SageMakerImageArn: str
    SageMakerImageVersionAlias: str


class AppDetails(TypedDict, total=False):
    """ListApps' AppDetails, the fields read (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_AppDetails.html)."""

    DomainId: str
    AppType: str
    AppName: str
    UserProfileName: str
    SpaceName: str
    Status: str
    CreationTime: datetime
    ResourceSpec: ResourceSpec


OWNER_KEY = "ml:owner"
STAGE_KEY = "ml:stage"
SMD_IMAGE_PREFIX = "sagemaker-distribution"  # SageMaker Distribution images: sagemaker-distribution-cpu, -gpu


def discover(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    sm = clients("sagemaker")
    domains = [describe_domain(sm, d["DomainId"]) for d in listed_domains(sm, PAGE)]
    if not domains:
        return []
    tags = tags_by_arn(clients, list(DECLARATION.tag_resource_types))
    prefix = _arn_prefix(domains[0]["DomainArn"])
    spaces = {(s["DomainId"], s["SpaceName"]): _space(s) for s in listed_spaces(sm, PAGE)}
    out = [_domain(d, tags.get(d["DomainArn"], {}), clients.region) for d in domains]
    idle_minutes = {
        # (domain, shared space?, app type): minutes; 0: on, at SageMaker's default timeout
        (d["DomainId"], shared, s.app_type): s.timeout_minutes or 0
        for d in domains
        for shared, found in ((False, idle_settings(d.get("DefaultUserSettings"))), (True, shared_idle_settings(d)))
        for s in found
        if s.enabled
    }
    auth_mode = {d["DomainId"]: str(d.get("AuthMode") or "").upper() or None for d in domains}
    apps = [a for a in _apps(sm) if _billable_and_running(a)]
    found = [_facts(app, spaces, idle_minutes, auth_mode) for app in apps]
    read = profiles.read(sm, found)  # a user profile's idle settings win over its domain's (private spaces only)
    for app, facts in zip(apps, found, strict=True):
        out.append(_app(clients.region, prefix, app, profiles.apply(facts, read), tags, settings, clients.pricer))
    return out


def _space(summary: SpaceDetails) -> tuple[str | None, bool]:
    """(its owner, whether it is shared), as ListSpaces says: `SpaceSharingSettingsSummary.SharingType` Shared or
    Private; a space that says neither is shared when it has no owner (a private space always has one)."""
    owner = (summary.get("OwnershipSettingsSummary") or OwnershipSettingsSummary()).get("OwnerUserProfileName")
    sharing = str((summary.get("SpaceSharingSettingsSummary") or SpaceSharingSettingsSummary()).get("SharingType") or "")
    return owner, sharing == "Shared" or (not sharing and not owner)


def _facts(
    app: AppDetails,
    spaces: Mapping[tuple[str, str], tuple[str | None, bool]],
    idle_minutes: Mapping[tuple[str, bool, str], int],
    auth_mode: Mapping[str, str | None],
) -> AppFacts:
    """What discovery knows of one app. A shared space's idle shutdown is its domain's DefaultSpaceSettings, a private
    space's its owner's UserSettings over the domain's DefaultUserSettings (API_UserSettings, API_DefaultSpaceSettings)."""
    domain_id, space = app["DomainId"], app.get("SpaceName")
    owner, shared = spaces.get((domain_id, space or ""), (None, False)) if space else (None, False)
    return AppFacts(
        domain_id=domain_id,
        app_type=app["AppType"],
        app_name=app["AppName"],
        user_profile=app.get("UserProfileName"),
        space=space,
        space_owner=owner,
        idle_shutdown_minutes=idle_minutes.get((domain_id, shared, app["AppType"])),
        custom_image=_custom_image(app),
        smd_version=_smd_version(app),
        auth_mode=auth_mode.get(domain_id),
        shared=shared,
    )


def _app(
    region: str,
    prefix: str,
    app: AppDetails,
    facts: AppFacts,
    tags: Mapping[str, dict[str, str]],
    settings: Settings,
    pricer: Pricer,
) -> Resource:
    arn = f"{prefix}app/{facts.domain_id}/{facts.owner_name}/{facts.app_type}/{facts.app_name}"
    itype = (app.get("ResourceSpec") or {}).get("InstanceType")
    space_arn = f"{prefix}space/{facts.domain_id}/{facts.space}" if facts.space else None
    own = inherit_protection(tags.get(arn, {}), tags.get(space_arn, {}) if space_arn else {}, settings)
    return Resource(
        kind=KIND,
        id=arn.split(":app/", 1)[1],
        arn=arn,
        region=region,
        state=app["Status"],
        tags=_with_owner(own, _owner_sources(prefix, facts, tags)),
        instance_type=itype,
        price=pricer.hourly(pricing.STUDIO, region, itype),
        created_at=app.get("CreationTime"),
        facts=facts,
        guarded_by=(space_arn,) if space_arn else (),
    )


def _custom_image(app: AppDetails) -> str | None:
    """The image name when an app runs an image other than SageMaker Distribution (idle shutdown needs SMD 2.0+)."""
    image_arn = (app.get("ResourceSpec") or {}).get("SageMakerImageArn") or ""
    name = image_arn.split(":image/", 1)[1] if ":image/" in image_arn else ""
    return name if name and not name.startswith(SMD_IMAGE_PREFIX) else None


def _smd_version(app: AppDetails) -> str | None:
    """The SageMaker Distribution version an app says it runs (`ResourceSpec.SageMakerImageVersionAlias`, SemVer), if any.

    The image-version ARN's number is the image's version count, not the distribution's release: it says nothing here.
    https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ResourceSpec.html
    """
    alias = str((app.get("ResourceSpec") or {}).get("SageMakerImageVersionAlias") or "").strip()
    return alias or None


def _apps(sm: Any) -> list[AppDetails]:
    apps: list[AppDetails] = []
    for page in sm.get_paginator("list_apps").paginate(PaginationConfig={"PageSize": PAGE}):
        apps.extend(page.get("Apps", []))
    return apps


def _billable_and_running(app: AppDetails) -> bool:
    if app.get("Status") != "InService" or app.get("AppType") not in BILLABLE_TYPES:
        return False
    itype = (app.get("ResourceSpec") or {}).get("InstanceType")
    return not (app.get("AppType") == "JupyterServer" and itype in (None, FREE_INSTANCE))


def _arn_prefix(domain_arn: str) -> str:
    """'arn:aws:sagemaker:us-east-1:123456789012:' from a domain ARN (the partition comes with it)."""
    return domain_arn.split("domain/", 1)[0]


def _owner_sources(prefix: str, facts: AppFacts, tags: Mapping[str, dict[str, str]]) -> list[dict[str, str]]:
    sources = []
    if facts.space:
        sources.append(tags.get(f"{prefix}space/{facts.domain_id}/{facts.space}", {}))
    profile = facts.space_owner or facts.user_profile
    if profile:
        sources.append(tags.get(f"{prefix}user-profile/{facts.domain_id}/{profile}", {}))
    return sources


def _with_owner(own: dict[str, str], sources: list[dict[str, str]]) -> dict[str, str]:
    """The app's tags, with `ml:owner` from its space or user profile when the app has none."""
    if any(k.strip().lower() == OWNER_KEY for k in own):
        return own
    for tags in sources:
        for key, value in tags.items():
            if key.strip().lower() == OWNER_KEY and value.strip():
                return {**own, OWNER_KEY: value}
    return own


def idle_settings(default_user_settings: UserSettings | None) -> tuple[IdleSetting, ...]:
    """The built-in idle shutdown of each app type that has one, as DefaultUserSettings say.

    https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_IdleSettings.html
    """
    out = []
    for app_type, block in IDLE_SETTING_BLOCKS.items():
        idle = idle_of(default_user_settings, block)
        enabled = str(idle.get("LifecycleManagement", "")).upper() == "ENABLED"
        out.append(IdleSetting(app_type, enabled, idle.get("IdleTimeoutInMinutes")))
    return tuple(out)


def shared_idle_settings(domain: Domain) -> tuple[IdleSetting, ...]:
    """The built-in idle shutdown of shared spaces, as DefaultSpaceSettings say (JupyterLab only: it has no Code Editor
    block). https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DefaultSpaceSettings.html"""
    space_settings = space_as_user_settings(domain.get("DefaultSpaceSettings"))
    return tuple(s for s in idle_settings(space_settings) if s.app_type in SPACE_IDLE_SETTING_BLOCKS)


def _domain(d: Domain, tags: dict[str, str], region: str) -> Resource:
    user_settings = d.get("DefaultUserSettings") or UserSettings()
    previous = {block: user_settings.get(block) or AppSettings() for block in IDLE_SETTING_BLOCKS.values()}
    space_settings = space_as_user_settings(d.get("DefaultSpaceSettings"))
    previous_shared = {block: space_settings.get(block) or AppSettings() for block in SPACE_IDLE_SETTING_BLOCKS.values()}
    return Resource(
        kind=KIND,
        id=d["DomainId"],
        arn=d["DomainArn"],
        region=region,
        state=d.get("Status", "Unknown"),
        tags=tags,
        created_at=d.get("CreationTime"),
        changed_at=d.get("LastModifiedTime"),
        facts=DomainFacts(
            d["DomainId"], d.get("DomainName", ""), idle_settings(user_settings), previous, shared_idle_settings(d), previous_shared
        ),
    )

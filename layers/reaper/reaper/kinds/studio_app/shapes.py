"""The AWS answers the Studio kind reads about domains, spaces and user profiles, typed (botocore gives plain
dicts): only the members the code reads. (ListApps' AppDetails and its ResourceSpec are in discover.py.)

Every member AWS marks optional (``Required: No``) is optional here (``total=False``). Each shape is named after
its page in the SageMaker API reference (https://docs.aws.amazon.com/sagemaker/latest/APIReference/):
DescribeDomain (API_DescribeDomain.html), ListDomains' DomainDetails (API_DomainDetails.html), UserSettings
(API_UserSettings.html: a domain's DefaultUserSettings and a profile's UserSettings), DefaultSpaceSettings
(API_DefaultSpaceSettings.html: no CodeEditorAppSettings), JupyterLabAppSettings and CodeEditorAppSettings
(API_JupyterLabAppSettings.html, API_CodeEditorAppSettings.html), AppLifecycleManagement
(API_AppLifecycleManagement.html), IdleSettings (API_IdleSettings.html), ListSpaces' SpaceDetails
(API_SpaceDetails.html, API_OwnershipSettingsSummary.html, API_SpaceSharingSettingsSummary.html),
DescribeUserProfile (API_DescribeUserProfile.html).

A response enters typed once, where it is read (the helpers below): the clients are untyped (`Any`), so these
annotated helpers are the only boundary; nothing else casts.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal, TypedDict


class IdleSettings(TypedDict, total=False):
    LifecycleManagement: str  # ENABLED | DISABLED
    IdleTimeoutInMinutes: int
    MinIdleTimeoutInMinutes: int
    MaxIdleTimeoutInMinutes: int


class AppLifecycleManagement(TypedDict, total=False):
    IdleSettings: IdleSettings


class AppSettings(TypedDict, total=False):
    """A JupyterLabAppSettings or CodeEditorAppSettings block: the member read. Its other members (DefaultResourceSpec,
    CustomImages, LifecycleConfigArns, ...) are not read: a block is copied whole and sent back with them as they came."""

    AppLifecycleManagement: AppLifecycleManagement


# The UserSettings members that carry an app type's idle shutdown (model.IDLE_SETTING_BLOCKS names them by app type)
BlockName = Literal["JupyterLabAppSettings", "CodeEditorAppSettings"]


class UserSettings(TypedDict, total=False):
    JupyterLabAppSettings: AppSettings
    CodeEditorAppSettings: AppSettings


class DefaultSpaceSettings(TypedDict, total=False):
    JupyterLabAppSettings: AppSettings


class Domain(TypedDict, total=False):
    """DescribeDomain's answer."""

    DomainId: str
    DomainArn: str
    DomainName: str
    Status: str
    AuthMode: str  # SSO | IAM
    CreationTime: datetime
    LastModifiedTime: datetime
    DefaultUserSettings: UserSettings
    DefaultSpaceSettings: DefaultSpaceSettings


class DomainDetails(TypedDict, total=False):
    DomainId: str


class OwnershipSettingsSummary(TypedDict, total=False):
    OwnerUserProfileName: str


class SpaceSharingSettingsSummary(TypedDict, total=False):
    SharingType: str  # Private | Shared


class SpaceDetails(TypedDict, total=False):
    DomainId: str
    SpaceName: str
    OwnershipSettingsSummary: OwnershipSettingsSummary
    SpaceSharingSettingsSummary: SpaceSharingSettingsSummary


def space_as_user_settings(space: DefaultSpaceSettings | None) -> UserSettings:
    """DefaultSpaceSettings read with the block names UserSettings has (it has only JupyterLabAppSettings of them)."""
    out = UserSettings()
    if space and "JupyterLabAppSettings" in space:
        out["JupyterLabAppSettings"] = space["JupyterLabAppSettings"]
    return out


def idle_of(settings: UserSettings | None, block: BlockName) -> IdleSettings:
    """A block's IdleSettings (empty when the block, its AppLifecycleManagement or its IdleSettings is not set)."""
    app = (settings or UserSettings()).get(block) or AppSettings()
    return (app.get("AppLifecycleManagement") or AppLifecycleManagement()).get("IdleSettings") or IdleSettings()


# -- the one boundary per shape: a botocore answer (Any) enters typed here -------------------------------


def describe_domain(sm: Any, domain_id: str) -> Domain:
    out: Domain = sm.describe_domain(DomainId=domain_id)
    return out


def profile_user_settings(sm: Any, domain_id: str, name: str) -> UserSettings | None:
    """DescribeUserProfile's UserSettings (None when the profile sets none)."""
    out: UserSettings | None = sm.describe_user_profile(DomainId=domain_id, UserProfileName=name).get("UserSettings")
    return out


def _pages(sm: Any, operation: str, page_size: int) -> Iterator[Any]:
    yield from sm.get_paginator(operation).paginate(PaginationConfig={"PageSize": page_size})


def listed_domains(sm: Any, page_size: int) -> list[DomainDetails]:
    """ListDomains, every page."""
    out: list[DomainDetails] = [d for page in _pages(sm, "list_domains", page_size) for d in page.get("Domains", [])]
    return out


def listed_spaces(sm: Any, page_size: int) -> list[SpaceDetails]:
    """ListSpaces, every page."""
    out: list[SpaceDetails] = [s for page in _pages(sm, "list_spaces", page_size) for s in page.get("Spaces", [])]
    return out

"""SageMaker Studio as the studio-app kind meets it on AWS; moto 5.2.5 has domains only.

What is added (moto's backend and response classes, so in-process and server mode alike):
- User profiles and spaces: Create/Describe/List (UserProfile, Space), with their settings, owner and tags.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateSpace.html
- A user profile's `UserSettings` as DescribeUserProfile returns them, idle settings included
  (`JupyterLabAppSettings`/`CodeEditorAppSettings` → `AppLifecycleManagement.IdleSettings`); an
  `IdleSettings` outside the reference is refused (ValidationException): `LifecycleManagement` "Valid Values:
  ENABLED | DISABLED", `IdleTimeoutInMinutes`/`Min…`/`Max…` "Valid Range: Minimum value of 60. Maximum value
  of 525600". https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_IdleSettings.html
  UpdateUserProfile merges `UserSettings` key by key, as UpdateDomain does (what a user or an admin does
  to turn a profile's idle shutdown off; the reaper never calls it).
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateUserProfile.html
- DeleteUserProfile: `ResourceNotFound` when there is no such profile; `ResourceInUse` ("Resource being
  accessed is in use") while one of its apps or its spaces' apps is not Deleted (that this is what
  "in use" means is assumed). https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeleteUserProfile.html
- Apps: CreateApp starts an app `InService` (AWS passes through `Pending` in minutes), with its
  ResourceSpec; the ARN is `app/<domain>/<user profile or space>/<type>/<name>` as on AWS.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateApp.html
- ListApps: every app of the region, or those of a domain/user profile/space; 10 a page by default,
  at most 100 (MaxResults), with NextToken; deleted apps stay listed as `Deleted` (AWS keeps an
  app's metadata 24 hours after it is shut down).
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListApps.html
- DescribeApp: `LastHealthCheckTimestamp` and `LastUserActivityTimestamp` for the app types Studio
  health-checks (JupyterLab, Code Editor). As the reference says, LastUserActivityTimestamp "is also
  updated when SageMaker AI performs health checks without user activity. As a result, this value is
  set to the same value as LastHealthCheckTimestamp": a healthy InService app reports both as its
  last health check, which is recent (now), however long nobody has used it. There is no way to make
  the kit report an old user activity on a healthy app, because AWS never does. `set_app_times()`
  sets CreationTime, and the last health check of an app whose checks stopped.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeApp.html
- DeleteApp: an `InService` app goes to `Deleting` (the first read after says so), then `Deleted`.
  Deleting an app that is not InService is refused as AWS refuses it: `ResourceInUse` while it is
  Pending or Deleting, `ResourceNotFound` once Deleted or when there is no such app. The space, its
  storage volume and the user profile are untouched.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeleteApp.html
- UpdateDomain: DefaultUserSettings and DefaultSpaceSettings merged key by key (a key given
  replaces that key's block whole), as AWS does for the blocks it is sent.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateDomain.html
- CreateDomain and UpdateDomain refuse (ValidationException) an `IdleSettings` outside the reference in
  DefaultUserSettings or DefaultSpaceSettings, and a DefaultSpaceSettings member the reference does not list:
  DefaultSpaceSettings ("The default settings for shared spaces that users create in the domain. SageMaker
  applies these settings only to shared spaces.") has `JupyterLabAppSettings` but no `CodeEditorAppSettings`.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DefaultSpaceSettings.html
- CreateDomain, UpdateDomain, CreateUserProfile and UpdateUserProfile refuse (ValidationException) a `CanvasAppSettings`
  member the reference does not list. Its "Contents" are DirectDeploySettings, EmrServerlessSettings,
  GenerativeAiSettings, IdentityProviderOAuthSettings, KendraSettings, ModelRegisterSettings,
  TimeSeriesForecastingSettings and WorkspaceSettings: no `AppLifecycleManagement`, no `IdleSettings`. SageMaker has
  no idle-shutdown setting for Canvas, so the kit cannot be told one (issue 37; docs/kinds/studio-app.md).
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CanvasAppSettings.html
- Spaces: `SpaceSharingSettings.SharingType` `Private` or `Shared` (anything else refused); DescribeSpace returns it as
  `SpaceSharingSettings`, ListSpaces as `SpaceSharingSettingsSummary`. A space created without sharing settings is
  private when it has an owner, shared when not (what AWS does then is not documented: assumed).
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_SpaceSharingSettings.html
- CreateApp refuses a `ResourceSpec.SageMakerImageVersionAlias` that is not SemVer as the reference's pattern says.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ResourceSpec.html
- A space's storage (issue 38): ListSpaces' `SpaceSettingsSummary` carries `SpaceStorageSettings` as the reference's
  SpaceSettingsSummary lists it ("AppType", "RemoteAccess", "SpaceStorageSettings"), DescribeSpace its `SpaceSettings`;
  CreateSpace refuses (ValidationException) an `EbsVolumeSizeInGb` outside "Minimum: 5 Maximum: 16384"
  (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_SpaceSettingsSummary.html,
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_EbsStorageSettings.html). `set_space_times()` sets a
  space's CreationTime and LastModifiedTime.
- A Deleted app is forgotten 24 hours after it was shut down: ListApps no longer lists it and DescribeApp answers
  ResourceNotFound. DescribeApp's CreationTime: "After an application has been shut down for 24 hours, SageMaker AI
  deletes all metadata for the application." https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeApp.html
  `set_app_times(deleted=...)` says when an app was shut down.
- AddTags/ListTags/DeleteTags take app, user-profile and space ARNs (their names hold slashes),
  and the Resource Groups Tagging API returns them as `sagemaker:app`, `sagemaker:user-profile`,
  `sagemaker:space` (GetResources "supports all resource types":
  https://docs.aws.amazon.com/resourcegroupstagging/latest/APIReference/supported-services.html).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from moto.core.resource_tagging import TaggedResource
from moto.core.responses import ActionResult, EmptyResult
from moto.core.utils import utcnow
from moto.sagemaker import models, responses
from moto.sagemaker.exceptions import ResourceInUseException, ResourceNotFound, ValidationError

ACTIVITY_TRACKED = frozenset({"JupyterLab", "CodeEditor"})
IDLE_BLOCKS = ("JupyterLabAppSettings", "CodeEditorAppSettings")
IDLE_RANGE = (60, 525_600)
# API_DefaultSpaceSettings.html, "Contents" (botocore's `DefaultSpaceSettings` shape has the same members)
DEFAULT_SPACE_MEMBERS = frozenset(
    {
        "ExecutionRole",
        "SecurityGroups",
        "JupyterServerAppSettings",
        "KernelGatewayAppSettings",
        "JupyterLabAppSettings",
        "SpaceStorageSettings",
        "CustomPosixUserConfig",
        "CustomFileSystemConfigs",
    }
)
# API_CanvasAppSettings.html, "Contents" (botocore's `CanvasAppSettings` shape has the same members): no idle settings
CANVAS_MEMBERS = frozenset(
    {
        "DirectDeploySettings",
        "EmrServerlessSettings",
        "GenerativeAiSettings",
        "IdentityProviderOAuthSettings",
        "KendraSettings",
        "ModelRegisterSettings",
        "TimeSeriesForecastingSettings",
        "WorkspaceSettings",
    }
)
SHARING_TYPES = ("Private", "Shared")
EBS_SIZE_RANGE = (5, 16_384)  # API_EbsStorageSettings.html, EbsVolumeSizeInGb "Valid Range"
FORGOTTEN_AFTER = timedelta(hours=24)  # API_DescribeApp.html, CreationTime: metadata deleted 24 h after shut down
# API_ResourceSpec.html, SageMakerImageVersionAlias "Pattern"
VERSION_ALIAS = re.compile(
    r"(^\d+$)|(^\d+.\d+$)|(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$)"
)


def _naive(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


@dataclass
class FakeUserProfile:
    arn: str
    domain_id: str
    name: str
    settings: dict[str, Any]
    tags: list[dict[str, str]]
    created: datetime = field(default_factory=utcnow)

    def describe(self) -> dict[str, Any]:
        return {
            "DomainId": self.domain_id,
            "UserProfileArn": self.arn,
            "UserProfileName": self.name,
            "Status": "InService",
            "CreationTime": self.created,
            "LastModifiedTime": self.created,
            "UserSettings": self.settings,
        }


@dataclass
class FakeSpace:
    arn: str
    domain_id: str
    name: str
    settings: dict[str, Any]
    owner: str | None
    sharing: str
    tags: list[dict[str, str]]
    created: datetime = field(default_factory=utcnow)
    modified: datetime | None = None  # None: never changed since it was made

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "DomainId": self.domain_id,
            "SpaceArn": self.arn,
            "SpaceName": self.name,
            "Status": "InService",
            "CreationTime": self.created,
            "LastModifiedTime": self.modified or self.created,
            "SpaceSettings": self.settings,
            "SpaceSharingSettings": {"SharingType": self.sharing},
        }
        if self.owner:
            out["OwnershipSettings"] = {"OwnerUserProfileName": self.owner}
        return out

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "DomainId": self.domain_id,
            "SpaceName": self.name,
            "Status": "InService",
            "CreationTime": self.created,
            "LastModifiedTime": self.modified or self.created,
            "SpaceSettingsSummary": {
                k: self.settings[k] for k in ("AppType", "RemoteAccess", "SpaceStorageSettings") if self.settings.get(k)
            },
            "SpaceSharingSettingsSummary": {"SharingType": self.sharing},
        }
        if self.owner:
            out["OwnershipSettingsSummary"] = {"OwnerUserProfileName": self.owner}
        return out


@dataclass
class FakeApp:
    arn: str
    domain_id: str
    user_profile: str | None
    space: str | None
    app_type: str
    name: str
    resource_spec: dict[str, Any]
    tags: list[dict[str, str]]
    status: str = "InService"
    created: datetime = field(default_factory=utcnow)
    last_health_check: datetime | None = None  # None: a healthy app, checked just now
    deleting_seen: bool = False
    deleted_at: datetime | None = None  # when it was shut down (DeleteApp)

    def _read(self) -> None:
        """A deleted app reads `Deleting` once, then `Deleted` (AWS takes a minute or two)."""
        if self.status == "Deleting":
            if self.deleting_seen:
                self.status = "Deleted"
            else:
                self.deleting_seen = True

    def forgotten(self) -> bool:
        """Shut down more than 24 hours ago: AWS has deleted its metadata (API_DescribeApp, CreationTime). Reads no state:
        a Deleting app's first read must still say Deleting."""
        return self.status == "Deleted" and self.deleted_at is not None and utcnow() - self.deleted_at > FORGOTTEN_AFTER

    def summary(self) -> dict[str, Any]:
        self._read()
        out: dict[str, Any] = {
            "DomainId": self.domain_id,
            "AppType": self.app_type,
            "AppName": self.name,
            "Status": self.status,
            "CreationTime": self.created,
            "ResourceSpec": self.resource_spec,
        }
        if self.user_profile:
            out["UserProfileName"] = self.user_profile
        if self.space:
            out["SpaceName"] = self.space
        return out

    def describe(self) -> dict[str, Any]:
        out = {**self.summary(), "AppArn": self.arn}
        if self.app_type in ACTIVITY_TRACKED and self.status == "InService":
            checked = self.last_health_check or utcnow()
            out["LastHealthCheckTimestamp"] = checked
            out["LastUserActivityTimestamp"] = checked  # follows the health checks (DescribeApp reference)
        return out


@dataclass
class StudioStore:
    profiles: dict[str, FakeUserProfile] = field(default_factory=dict)  # by ARN
    spaces: dict[str, FakeSpace] = field(default_factory=dict)
    apps: dict[str, FakeApp] = field(default_factory=dict)

    def by_arn(self, arn: str) -> Any:
        return self.profiles.get(arn) or self.spaces.get(arn) or self.apps.get(arn)


def store(backend: Any) -> StudioStore:
    found: StudioStore | None = getattr(backend, "_reaper_studio", None)
    if found is None:
        found = StudioStore()
        backend._reaper_studio = found
    return found


def _arn(backend: Any, path: str) -> str:
    return f"arn:aws:sagemaker:{backend.region_name}:{backend.account_id}:{path}"


def _domain(backend: Any, domain_id: str) -> Any:
    if domain_id not in backend.domains:
        raise ResourceNotFound(message=f"Domain '{domain_id}' not found.")
    return backend.domains[domain_id]


def _merge(current: dict[str, Any] | None, update: dict[str, Any] | None) -> dict[str, Any]:
    return {**(current or {}), **(update or {})}


def _page(items: list[dict[str, Any]], max_results: Any, token: Any, key: str) -> dict[str, Any]:
    size = min(int(max_results or 10), 100)
    start = int(token or 0)
    out: dict[str, Any] = {key: items[start : start + size]}
    if start + size < len(items):
        out["NextToken"] = str(start + size)
    return out


def _app(backend: Any, p: Any) -> FakeApp:
    s = store(backend)
    owner = p("SpaceName") or p("UserProfileName")
    if not owner:
        raise ValidationError(message="Either UserProfileName or SpaceName must be set.")
    arn = _arn(backend, f"app/{p('DomainId')}/{owner}/{p('AppType')}/{p('AppName')}")
    app = s.apps.get(arn)
    if app is None or app.forgotten():
        raise ResourceNotFound(message=f"App '{arn}' does not exist.")
    return app


def checked_idle(user_settings: dict[str, Any] | None) -> dict[str, Any]:
    """UserSettings, refused (ValidationException) when an IdleSettings holds a value the API reference does not allow,
    or its CanvasAppSettings a member the reference does not list (an idle setting for Canvas among them)."""
    unknown = sorted(set((user_settings or {}).get("CanvasAppSettings") or {}) - CANVAS_MEMBERS)
    if unknown:
        raise ValidationError(message=f"Unknown parameter in CanvasAppSettings: {', '.join(unknown)}")
    for block in IDLE_BLOCKS:
        idle = (((user_settings or {}).get(block) or {}).get("AppLifecycleManagement") or {}).get("IdleSettings") or {}
        state = idle.get("LifecycleManagement")
        if state is not None and state not in ("ENABLED", "DISABLED"):
            raise ValidationError(
                message=f"Value '{state}' at '{block}.AppLifecycleManagement.IdleSettings.LifecycleManagement' failed to satisfy constraint"
            )
        for key in ("IdleTimeoutInMinutes", "MinIdleTimeoutInMinutes", "MaxIdleTimeoutInMinutes"):
            value = idle.get(key)
            if value is not None and not IDLE_RANGE[0] <= int(value) <= IDLE_RANGE[1]:
                raise ValidationError(
                    message=f"Value '{value}' at '{block}.AppLifecycleManagement.IdleSettings.{key}' failed to satisfy constraint"
                )
    return dict(user_settings or {})


def checked_space_defaults(space_settings: dict[str, Any] | None) -> dict[str, Any]:
    """DefaultSpaceSettings, refused when it holds a member the reference does not list (CodeEditorAppSettings among them)
    or an IdleSettings outside the reference."""
    unknown = sorted(set(space_settings or {}) - DEFAULT_SPACE_MEMBERS)
    if unknown:
        raise ValidationError(message=f"Unknown parameter in DefaultSpaceSettings: {', '.join(unknown)}")
    return checked_idle(space_settings)


def checked_sharing(sharing: str) -> str:
    """A space's SharingType, refused unless the reference's `Private | Shared`."""
    if sharing not in SHARING_TYPES:
        raise ValidationError(message=f"Value '{sharing}' at 'spaceSharingSettings.sharingType' failed to satisfy constraint")
    return sharing


def checked_storage(space_settings: dict[str, Any] | None) -> None:
    """A space's EBS size, refused outside the reference's range (API_EbsStorageSettings: 5 to 16384 GB)."""
    size = (((space_settings or {}).get("SpaceStorageSettings") or {}).get("EbsStorageSettings") or {}).get("EbsVolumeSizeInGb")
    if size is not None and not EBS_SIZE_RANGE[0] <= int(size) <= EBS_SIZE_RANGE[1]:
        at = "spaceSettings.spaceStorageSettings.ebsStorageSettings.ebsVolumeSizeInGb"
        raise ValidationError(message=f"Value '{size}' at '{at}' failed to satisfy constraint")


def checked_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """An app's ResourceSpec, refused when its SageMakerImageVersionAlias does not match the reference's pattern."""
    alias = spec.get("SageMakerImageVersionAlias")
    if alias is not None and not VERSION_ALIAS.match(str(alias)):
        raise ValidationError(message=f"Value '{alias}' at 'resourceSpec.sageMakerImageVersionAlias' failed to satisfy constraint")
    return spec


def _sent(response: Any, key: str) -> Any:
    """A request member as it was sent: moto's `_get_param` parses the body by botocore's shapes and drops members the
    shape does not have, which AWS would refuse (a raw request, or an SDK whose model is out of date)."""
    try:
        body = json.loads(response.body or "{}")
    except ValueError:
        return None
    return body.get(key) if isinstance(body, dict) else None


def _profile(backend: Any, domain_id: str, name: str) -> FakeUserProfile:
    profile = store(backend).profiles.get(_arn(backend, f"user-profile/{domain_id}/{name}"))
    if profile is None:
        raise ResourceNotFound(message=f"User profile '{name}' does not exist.")
    return profile


# -- responses ----------------------------------------------------------------------------------
def create_user_profile(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    domain_id = p("DomainId")
    _domain(b, domain_id)
    arn = _arn(b, f"user-profile/{domain_id}/{p('UserProfileName')}")
    s = store(b)
    if arn in s.profiles:
        raise ResourceInUseException(message=f"User profile {p('UserProfileName')} already exists.")
    checked_idle(_sent(self, "UserSettings"))
    settings = checked_idle(p("UserSettings"))
    s.profiles[arn] = FakeUserProfile(arn, domain_id, p("UserProfileName"), settings, list(p("Tags") or []))
    return ActionResult({"UserProfileArn": arn})


def update_user_profile(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    profile = _profile(b, p("DomainId"), p("UserProfileName"))
    checked_idle(_sent(self, "UserSettings"))
    profile.settings = _merge(profile.settings, checked_idle(p("UserSettings")))
    return ActionResult({"UserProfileArn": profile.arn})


def delete_user_profile(self: Any) -> EmptyResult:
    b, p = self.sagemaker_backend, self._get_param
    profile = _profile(b, p("DomainId"), p("UserProfileName"))
    s = store(b)
    owned = {sp.name for sp in s.spaces.values() if sp.domain_id == profile.domain_id and sp.owner == profile.name}
    for app in s.apps.values():
        app._read()
        mine = app.user_profile == profile.name or app.space in owned
        if app.domain_id == profile.domain_id and mine and app.status != "Deleted":
            raise ResourceInUseException(message=f"User profile {profile.name} has an app that is {app.status}.")
    del s.profiles[profile.arn]
    return EmptyResult()


def describe_user_profile(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    return ActionResult(_profile(b, p("DomainId"), p("UserProfileName")).describe())


def list_user_profiles(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    rows = [
        {k: v for k, v in u.describe().items() if k in ("DomainId", "UserProfileName", "Status", "CreationTime", "LastModifiedTime")}
        for u in store(b).profiles.values()
        if p("DomainIdEquals") in (None, u.domain_id)
    ]
    return ActionResult(_page(rows, p("MaxResults"), p("NextToken"), "UserProfiles"))


def create_space(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    domain_id = p("DomainId")
    _domain(b, domain_id)
    arn = _arn(b, f"space/{domain_id}/{p('SpaceName')}")
    s = store(b)
    if arn in s.spaces:
        raise ResourceInUseException(message=f"Space {p('SpaceName')} already exists.")
    owner = (p("OwnershipSettings") or {}).get("OwnerUserProfileName")
    checked_storage(p("SpaceSettings"))
    sharing = checked_sharing((p("SpaceSharingSettings") or {}).get("SharingType", "Private" if owner else "Shared"))
    s.spaces[arn] = FakeSpace(arn, domain_id, p("SpaceName"), p("SpaceSettings") or {}, owner, sharing, list(p("Tags") or []))
    return ActionResult({"SpaceArn": arn})


def describe_space(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    space = store(b).spaces.get(_arn(b, f"space/{p('DomainId')}/{p('SpaceName')}"))
    if space is None:
        raise ResourceNotFound(message=f"Space '{p('SpaceName')}' does not exist.")
    return ActionResult(space.describe())


def list_spaces(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    rows = [sp.summary() for sp in store(b).spaces.values() if p("DomainIdEquals") in (None, sp.domain_id)]
    return ActionResult(_page(rows, p("MaxResults"), p("NextToken"), "Spaces"))


def create_app(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    domain_id = p("DomainId")
    _domain(b, domain_id)
    s = store(b)
    space, user = p("SpaceName"), p("UserProfileName")
    if space and _arn(b, f"space/{domain_id}/{space}") not in s.spaces:
        raise ResourceNotFound(message=f"Space '{space}' does not exist.")
    if user and not space and _arn(b, f"user-profile/{domain_id}/{user}") not in s.profiles:
        raise ResourceNotFound(message=f"User profile '{user}' does not exist.")
    if not (space or user):
        raise ValidationError(message="Either UserProfileName or SpaceName must be set.")
    arn = _arn(b, f"app/{domain_id}/{space or user}/{p('AppType')}/{p('AppName')}")
    old = s.apps.get(arn)
    if old is not None and old.status in ("InService", "Pending", "Deleting"):
        raise ResourceInUseException(message=f"App {arn} already exists ({old.status}).")
    spec = checked_spec(p("ResourceSpec") or {"InstanceType": "system" if p("AppType") == "JupyterServer" else "ml.t3.medium"})
    s.apps[arn] = FakeApp(arn, domain_id, user if not space else None, space, p("AppType"), p("AppName"), spec, list(p("Tags") or []))
    return ActionResult({"AppArn": arn})


def describe_app(self: Any) -> ActionResult:
    return ActionResult(_app(self.sagemaker_backend, self._get_param).describe())


def list_apps(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    rows = [
        a.summary()
        for a in store(b).apps.values()
        if not a.forgotten()
        and p("DomainIdEquals") in (None, a.domain_id)
        and p("UserProfileNameEquals") in (None, a.user_profile)
        and p("SpaceNameEquals") in (None, a.space)
    ]
    return ActionResult(_page(rows, p("MaxResults"), p("NextToken"), "Apps"))


def delete_app(self: Any) -> EmptyResult:
    app = _app(self.sagemaker_backend, self._get_param)
    app._read()
    if app.status == "Deleted":
        raise ResourceNotFound(message=f"App '{app.arn}' does not exist (it was deleted).")
    if app.status != "InService":
        raise ResourceInUseException(message=f"App '{app.arn}' is {app.status}: it can be deleted only when InService.")
    app.status, app.deleting_seen, app.deleted_at = "Deleting", False, utcnow()
    return EmptyResult()


def update_domain(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    domain = _domain(b, p("DomainId"))
    checked_idle(_sent(self, "DefaultUserSettings"))
    checked_space_defaults(_sent(self, "DefaultSpaceSettings"))
    if p("DefaultUserSettings"):
        domain.default_user_settings = _merge(domain.default_user_settings, checked_idle(p("DefaultUserSettings")))
    if p("DefaultSpaceSettings"):
        domain.default_space_settings = _merge(domain.default_space_settings, checked_space_defaults(p("DefaultSpaceSettings")))
    domain.last_modified_time = utcnow()
    return ActionResult({"DomainArn": domain.arn})


# -- tags -----------------------------------------------------------------------------------------
def _patch_tags() -> None:
    backend = models.SageMakerModelBackend
    original_get = backend._get_resource_from_arn
    original_iter = backend.iter_tagged_resources

    def _get_resource_from_arn(self: Any, arn: str) -> Any:
        found = store(self).by_arn(arn)
        if found is not None:
            if isinstance(found, FakeApp) and found.status == "Deleted":
                raise ValidationError(message=f"Could not find app with arn {arn}")
            return found
        if any(f":{kind}/" in arn for kind in ("app", "space", "user-profile")):
            raise ValidationError(message=f"Could not find resource {arn}")
        return original_get(self, arn)

    def iter_tagged_resources(self: Any) -> Iterator[TaggedResource]:
        yield from original_iter(self)
        s = store(self)
        for rtype, items in (("sagemaker:user-profile", s.profiles), ("sagemaker:space", s.spaces), ("sagemaker:app", s.apps)):
            for item in items.values():
                if isinstance(item, FakeApp) and item.status == "Deleted":
                    continue
                yield TaggedResource(arn=item.arn, tags={t["Key"]: t["Value"] for t in item.tags}, resource_type=rtype)

    backend._get_resource_from_arn = _get_resource_from_arn  # type: ignore[method-assign]
    backend.iter_tagged_resources = iter_tagged_resources  # type: ignore[method-assign]


# -- test support ----------------------------------------------------------------------------------
def _backends() -> Iterator[Any]:
    for account in models.sagemaker_backends.values():
        yield from account.values()


def app_for(arn: str) -> FakeApp:
    for b in _backends():
        app = store(b).apps.get(arn)
        if app is not None:
            return app
    raise KeyError(arn)


def set_app_times(
    arn: str, *, created: datetime | None = None, last_health_check: datetime | None = None, deleted: datetime | None = None
) -> None:
    """Make an app look as if it was created, last health-checked, or shut down (`deleted`: Deleted since) at these times."""
    app = app_for(arn)
    if created is not None:
        app.created = _naive(created)
    if last_health_check is not None:
        app.last_health_check = _naive(last_health_check)
    if deleted is not None:
        app.status, app.deleted_at = "Deleted", _naive(deleted)


def set_space_times(arn: str, *, created: datetime | None = None, modified: datetime | None = None) -> None:
    """Make a space look as if it was made, or last changed, at these times (CreationTime, LastModifiedTime)."""
    for b in _backends():
        space = store(b).spaces.get(arn)
        if space is not None:
            if created is not None:
                space.created = _naive(created)
            if modified is not None:
                space.modified = _naive(modified)
            return
    raise KeyError(arn)


def _checked_create_domain(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """moto's CreateDomain, after the refusals the reference's settings shapes make."""

    def create_domain(self: Any) -> Any:
        checked_idle(_sent(self, "DefaultUserSettings"))
        checked_space_defaults(_sent(self, "DefaultSpaceSettings"))
        return original(self)

    create_domain.__name__ = "create_domain"
    create_domain._reaper_checked = True  # type: ignore[attr-defined]
    return create_domain


def apply() -> None:
    if not getattr(responses.SageMakerResponse.create_domain, "_reaper_checked", False):
        responses.SageMakerResponse.create_domain = _checked_create_domain(responses.SageMakerResponse.create_domain)  # type: ignore[method-assign,assignment]
    for fn in (
        create_user_profile,
        describe_user_profile,
        update_user_profile,
        delete_user_profile,
        list_user_profiles,
        create_space,
        describe_space,
        list_spaces,
        create_app,
        describe_app,
        list_apps,
        delete_app,
        update_domain,
    ):
        setattr(responses.SageMakerResponse, fn.__name__, fn)
    _patch_tags()

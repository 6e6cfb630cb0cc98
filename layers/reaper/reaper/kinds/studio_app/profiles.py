"""User profiles that override their domain's built-in idle shutdown.

A JupyterLab or Code Editor app counts as covered when its domain's idle shutdown is on; but "User profile
settings override domain settings" (https://docs.aws.amazon.com/sagemaker/latest/dg/studio-updated-idle-shutdown.html),
and UserSettings says "For all other settings in UserSettings, the values specified in CreateUserProfile take
precedence over those specified in CreateDomain" (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UserSettings.html).
A profile whose `UserSettings.<JupyterLab|CodeEditor>AppSettings.AppLifecycleManagement.IdleSettings.LifecycleManagement`
is DISABLED therefore runs its apps with no idle shutdown at all: they are not covered. A profile's own
`IdleTimeoutInMinutes` is the timeout its apps get.

Reads: one DescribeUserProfile per distinct user profile that owns a candidate app (a running JupyterLab or Code
Editor app in a private space, on SageMaker Distribution 2.0+, in a domain whose idle shutdown is on for its type): at most one call per
such app, none for the others. A private space's app belongs to the space's owner (`OwnershipSettingsSummary`). A shared
space's app is never judged by its owner's profile: "SageMaker applies these settings only to private spaces that the
user creates in the domain. SageMaker doesn't apply these settings to shared spaces" (UserSettings.JupyterLabAppSettings);
its domain's DefaultSpaceSettings decide (kinds/studio_app/discover.py). A failed describe (throttled, denied, the
profile deleted since ListApps) leaves the app's idle shutdown unknown: never covered by assumption. The reaper never
changes a user profile.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from reaper.aws.faults import AwsError, error_code
from reaper.kinds.studio_app.model import IDLE_SETTING_BLOCKS, IDLE_SHUTDOWN_TYPES, AppFacts
from reaper.kinds.studio_app.shapes import UserSettings, idle_of, profile_user_settings

PERMISSION = "sagemaker:DescribeUserProfile"
DISABLED = "DISABLED"


@dataclass(frozen=True)
class ProfileIdle:
    """What one user profile says of idle shutdown, per app type: (LifecycleManagement or None, IdleTimeoutInMinutes or None)."""

    by_type: Mapping[str, tuple[str | None, int | None]] = field(default_factory=dict)
    error: str | None = None  # the describe failed: nothing is known


def needs_profile(f: AppFacts) -> bool:
    """An app counted as covered by its domain's idle shutdown, with a user profile whose settings may override it: in a
    private space (a shared space takes its domain's DefaultSpaceSettings, never its owner's UserSettings), on an image
    idle shutdown runs on."""
    covered = f.app_type in IDLE_SHUTDOWN_TYPES and f.idle_shutdown_minutes is not None
    return covered and not f.shared and f.custom_image is None and not f.old_image and bool(f.sign_in_as)


def overrides(user_settings: UserSettings | None) -> dict[str, tuple[str | None, int | None]]:
    """{app type: (LifecycleManagement, IdleTimeoutInMinutes)} as a profile's UserSettings set them (None: not set).

    https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_IdleSettings.html
    """
    out: dict[str, tuple[str | None, int | None]] = {}
    for app_type, block in IDLE_SETTING_BLOCKS.items():
        idle = idle_of(user_settings, block)
        state = str(idle["LifecycleManagement"]).upper() if idle.get("LifecycleManagement") else None
        timeout = idle.get("IdleTimeoutInMinutes")
        out[app_type] = (state, int(timeout) if timeout else None)
    return out


def read(sagemaker: Any, facts: Iterable[AppFacts]) -> dict[tuple[str, str], ProfileIdle]:
    """{(domain id, user profile): what it says}, one DescribeUserProfile per distinct profile that needs reading."""
    wanted = sorted({(f.domain_id, f.sign_in_as or "") for f in facts if needs_profile(f)})
    out: dict[tuple[str, str], ProfileIdle] = {}
    for domain_id, name in wanted:
        try:
            settings = profile_user_settings(sagemaker, domain_id, name)
        except AwsError as exc:
            out[(domain_id, name)] = ProfileIdle(error=error_code(exc) or type(exc).__name__)
            continue
        out[(domain_id, name)] = ProfileIdle(overrides(settings))
    return out


def apply(f: AppFacts, profiles: Mapping[tuple[str, str], ProfileIdle]) -> AppFacts:
    """The app's facts with its user profile's word on idle shutdown (which wins over its domain's)."""
    if not needs_profile(f):
        return f
    got = profiles.get((f.domain_id, f.sign_in_as or ""))
    if got is None or got.error:
        return replace(f, idle_shutdown_minutes=None, profile_unread=got.error if got else "not read")
    state, timeout = got.by_type.get(f.app_type, (None, None))
    if state == DISABLED:
        return replace(f, idle_shutdown_minutes=None, profile_idle_off=True)
    if timeout:
        return replace(f, idle_shutdown_minutes=timeout, profile_timeout=True)
    return f

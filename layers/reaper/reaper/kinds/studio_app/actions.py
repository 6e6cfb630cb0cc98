"""What the studio-app kind does, its state check just before, and how to undo it.

delete: DeleteApp on the idle app. The space, its storage volume (the user's files) and the user
profile stay; the running kernels, terminals and anything not saved to the volume go with the app.
Opening the space again starts a new app on the same volume.
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeleteApp.html

enable-idle-shutdown: UpdateDomain turns the domain's built-in idle shutdown on for the app types
where it is off, in DefaultUserSettings (private spaces) and DefaultSpaceSettings (shared spaces:
JupyterLab only, the one block it has), keeping every other setting of those blocks; the previous
blocks go into the action log with the action, and the undo command puts them back.
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DefaultSpaceSettings.html
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateDomain.html
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import assert_never

from botocore.exceptions import ClientError

from reaper.aws.clients import Clients
from reaper.aws.faults import is_not_found
from reaper.core.model import Decision, KindAction, Resource
from reaper.kinds.base import ActContext, Made, Unconfirmed, action_named
from reaper.kinds.studio_app import ActionName
from reaper.kinds.studio_app.model import IDLE_SETTING_BLOCKS, SPACE_IDLE_SETTING_BLOCKS, AppFacts, DomainFacts
from reaper.kinds.studio_app.shapes import AppSettings, BlockName, UserSettings, describe_domain, space_as_user_settings

GONE_STATES = frozenset({"Deleted"})


def _owner(facts: AppFacts) -> dict[str, str]:
    return {"SpaceName": facts.space} if facts.space else {"UserProfileName": facts.user_profile or ""}


def current_state(clients: Clients, resource: Resource) -> str | None:
    sm = clients("sagemaker")
    try:
        if isinstance(resource.facts, DomainFacts):
            state: str = describe_domain(sm, resource.facts.domain_id).get("Status", "Unknown")
            return state
        f = resource.facts_as(AppFacts)
        desc = sm.describe_app(DomainId=f.domain_id, AppType=f.app_type, AppName=f.app_name, **_owner(f))
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise
    status: str = desc.get("Status", "Unknown")
    return None if status in GONE_STATES else status


def confirm(clients: Clients, change: Unconfirmed) -> Made:
    """A deletion is made once ListApps shows the app Deleting or Deleted, or no longer lists it. Its id is
    `<domain>/<user profile or space>/<app type>/<app name>`; ListApps names the owner in either field."""
    if action_named(ActionName, change.action) is not ActionName.DELETE:
        return Made(None, f"nothing reads whether {change.action} was made")
    domain, owner, app_type, app_name = (change.id.split("/", 3) + ["", "", "", ""])[:4]
    found = [
        a
        for page in clients("sagemaker").get_paginator("list_apps").paginate(DomainIdEquals=domain)
        for a in page.get("Apps", [])
        if (a.get("AppType"), a.get("AppName")) == (app_type, app_name) and owner in (a.get("UserProfileName"), a.get("SpaceName"))
    ]
    # an app of that name created after the change began is a new one (its owner opened it again)
    before = [a for a in found if not (a.get("CreationTime") and a["CreationTime"] > change.since)]
    live = [a for a in before if a.get("Status") in ("InService", "Pending")]
    if live:
        return Made(False, f"Status {live[0].get('Status')}")
    return Made(True, f"Status {before[0].get('Status')}" if before else "gone")


def delete(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    f = resource.facts_as(AppFacts)
    ctx.clients("sagemaker").delete_app(DomainId=f.domain_id, AppType=f.app_type, AppName=f.app_name, **_owner(f))
    return f"{f.app_type} app deleted; {f.where} and its storage volume are kept: open it again to start a new app on the same files"


def enabled_blocks(
    user_settings: UserSettings, app_types: tuple[str, ...], minutes: int, blocks: Mapping[str, BlockName] = IDLE_SETTING_BLOCKS
) -> dict[BlockName, AppSettings]:
    """The DefaultUserSettings (or DefaultSpaceSettings) blocks to send: each as it is, with idle shutdown on at `minutes`."""
    out: dict[BlockName, AppSettings] = {}
    for app_type in app_types:
        block_name = blocks[app_type]
        block = copy.deepcopy(user_settings.get(block_name) or AppSettings())
        idle = block.setdefault("AppLifecycleManagement", {}).setdefault("IdleSettings", {})
        idle.update({"LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": minutes})
        out[block_name] = block
    return out


def enable_idle_shutdown(ctx: ActContext, resource: Resource, decision: Decision) -> str | None:
    f = resource.facts_as(DomainFacts)
    minutes = int(decision.evidence["timeout_minutes"])
    sm = ctx.clients("sagemaker")
    domain = describe_domain(sm, f.domain_id)  # read again: send only what changes
    user_now, space_now = domain.get("DefaultUserSettings") or UserSettings(), space_as_user_settings(domain.get("DefaultSpaceSettings"))
    update = enabled_blocks(user_now, f.off, minutes)
    shared = enabled_blocks(space_now, f.shared_off, minutes, SPACE_IDLE_SETTING_BLOCKS)
    changes: dict[str, dict[BlockName, AppSettings]] = {}  # UpdateDomain's DefaultUserSettings, DefaultSpaceSettings
    if update:
        changes["DefaultUserSettings"] = update
    if shared:
        changes["DefaultSpaceSettings"] = shared
    sm.update_domain(DomainId=f.domain_id, **changes)
    previous = {name: user_now.get(name) or AppSettings() for name in update}
    previous_shared = {name: space_now.get(name) or AppSettings() for name in shared}
    what = ", ".join([*f.off, *(f"{t} in shared spaces" for t in f.shared_off)])
    return (
        f"idle shutdown on at {minutes} min for {what} apps; previous DefaultUserSettings: {json.dumps(previous, sort_keys=True)}; "
        f"previous DefaultSpaceSettings: {json.dumps(previous_shared, sort_keys=True)}"
    )


def disabled_blocks(
    previous: Mapping[BlockName, AppSettings], app_types: tuple[str, ...], blocks: Mapping[str, BlockName] = IDLE_SETTING_BLOCKS
) -> dict[BlockName, AppSettings]:
    """What turns the change back: the previous blocks, with idle shutdown off as it was."""
    out: dict[BlockName, AppSettings] = {}
    for app_type in app_types:
        name = blocks[app_type]
        block = copy.deepcopy(previous.get(name) or AppSettings())
        idle = block.setdefault("AppLifecycleManagement", {}).setdefault("IdleSettings", {})
        idle["LifecycleManagement"] = "DISABLED"
        out[name] = block
    return out


def undo_hint(resource: Resource, action: KindAction | None) -> str | None:
    name = action_named(ActionName, action)
    if name is None:
        return None
    match name:
        case ActionName.DELETE:
            f = resource.facts_as(AppFacts)
            itype = f" --resource-spec InstanceType={resource.instance_type}" if resource.instance_type else ""
            return (
                f"open {f.where} in SageMaker Studio again (its files are on the kept volume), or "
                f"aws sagemaker create-app --domain-id {f.domain_id} "
                f"--{'space-name' if f.space else 'user-profile-name'} {f.owner_name} "
                f"--app-type {f.app_type} --app-name {f.app_name}{itype} --region {resource.region}"
            )
        case ActionName.ENABLE_IDLE_SHUTDOWN:
            d = resource.facts_as(DomainFacts)
            user = f" --default-user-settings '{json.dumps(disabled_blocks(d.previous, d.off), sort_keys=True)}'" if d.off else ""
            shared = disabled_blocks(d.previous_shared, d.shared_off, SPACE_IDLE_SETTING_BLOCKS)
            space = f" --default-space-settings '{json.dumps(shared, sort_keys=True)}'" if d.shared_off else ""
            return f"aws sagemaker update-domain --domain-id {d.domain_id}{user}{space} --region {resource.region}"
        case _:
            assert_never(name)

"""What a kind declares: how to list its resources, the signals it reads, how it decides
(a pure function), and its actions with their IAM permissions and valid origin states.

A kind is one module; the pipeline and the IAM test read these declarations.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reaper.clients import Clients
from reaper.model import Decision, Resource
from reaper.policy import TagView
from reaper.settings import Settings

if TYPE_CHECKING:
    from reaper.actionlog import ActionLog


@dataclass
class ActContext:
    clients: Clients
    settings: Settings
    now: datetime
    log: ActionLog | None
    event_id: str


# an action returns a one-line detail of what it did, e.g. "backup backup-0abc started"
ActionRun = Callable[[ActContext, Resource, Decision], str | None]


@dataclass(frozen=True)
class Action:
    name: str  # the verb in messages: "stop", "delete"
    past: str  # "stopped"
    permissions: tuple[str, ...]
    valid_origin_states: frozenset[str]
    run: ActionRun
    needs_log: bool = False  # cannot be undone without a restore record in the action log
    removes_resource: bool = False  # the resource is gone afterwards: its tags went with it


class Kind(ABC):
    name: str
    tag_resource_types: tuple[str, ...]
    read_permissions: tuple[str, ...]  # discovery, signals and the pre-action state check
    tag_service: str  # the service whose tag calls write reaper:warned-at
    actions: Mapping[str, Action]

    @abstractmethod
    def discover(self, clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
        """Every candidate resource in the region, tags attached (bulk reads only)."""

    @abstractmethod
    def signals(self, clients: Clients, resources: list[Resource], settings: Settings, now: datetime) -> Mapping[str, Any]:
        """The evidence per resource id, read in batches."""

    @abstractmethod
    def decide(self, resource: Resource, signal: Any, view: TagView, settings: Settings, now: datetime) -> Decision:
        """Pure: verdict, action and reason from what discovery and signals found."""

    @abstractmethod
    def current_state(self, clients: Clients, resource: Resource) -> str | None:
        """The resource's state right now (None when it is gone); read just before acting."""

    def undo_hint(self, resource: Resource, action: str | None) -> str | None:
        return None

    def permissions(self) -> set[str]:
        from reaper.tagging import TAG_WRITE_PERMISSIONS

        perms = set(self.read_permissions) | {"tag:GetResources"} | set(TAG_WRITE_PERMISSIONS[self.tag_service])
        for action in self.actions.values():
            perms |= set(action.permissions)
        return perms

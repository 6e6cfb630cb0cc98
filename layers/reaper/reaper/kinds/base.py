"""What a kind declares, as data: how to list its resources, the signals it reads, how it decides
(a pure function), its actions with their IAM permissions and valid origin states, the events it
takes and how to undo what it did.

A kind is one package, `reaper/kinds/<kind>/`. Its `__init__.py` holds only a `DECLARATION`; the
parts it names (`"reaper.kinds.endpoint.rules:decide"`) are imported when first used, so loading
a kind's declaration costs nothing at cold start. The pipeline, the handlers, `reaper restore` and
the IAM test read declarations; nothing is registered by import and nothing is found by duck typing.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypedDict, TypeVar

from reaper.aws.clients import Clients
from reaper.aws.tagging import TAG_READ_PERMISSIONS, TAG_WRITE_PERMISSIONS, current_tags
from reaper.core.deadline import Deadline
from reaper.core.model import Decision, KindAction, Outcome, ProjectSpend, Resource, Verdict
from reaper.core.policy import TagView, protected, read_tags
from reaper.core.results import EventResult
from reaper.core.settings import Settings

if TYPE_CHECKING:
    from reaper.core.events import EventBridgeEvent
    from reaper.record.actionlog import ActionLog, Settlement
    from reaper.record.runtime import Runtime

# "package.module:attribute", imported on first use
Ref = str

# How a restore tells its progress (a line at a time)
Say = Callable[[str], None]


def resolve(ref: Ref) -> Any:
    module_name, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module_name), attr)


N = TypeVar("N", bound=StrEnum)
S = TypeVar("S")  # a kind's signal type: what its signals read for one resource, and what its decide takes


def action_named(names: type[N], action: str | None) -> N | None:
    """The kind's action name for `action` (a Decision's member, or the text a write-ahead record kept), or None
    when it is none of the kind's actions.

    Each kind declares its action names as a StrEnum; dispatching on the member in a `match` that ends
    in `assert_never` makes mypy fail when an action is added without its case.
    """
    if action is None:
        return None
    try:
        return names(action)
    except ValueError:
        return None


@dataclass
class ActContext:
    clients: Clients
    settings: Settings
    now: datetime
    log: ActionLog | None
    event_id: str
    deadline: Deadline = Deadline(None)
    spend: Mapping[str, ProjectSpend] = field(default_factory=dict)  # budgeted projects' spend, read once per sweep
    # the courier's changes not yet settled in the action log: the next change's write-ahead write takes
    # them along and empties this list (reaper.sweep.pipeline._begin); what is left, the courier settles
    unsettled: list[Settlement] = field(default_factory=list)
    # what the gate read just before the change it let through (reaper.sweep.gate): the resource's tags
    # now and, for a kind that declares `current_read`, the description its state came from. The action
    # takes them (`gated`) instead of reading the same again; each gate empties it first, so one
    # change's reads never reach another's action.
    read_now: dict[str, Any] = field(default_factory=dict)
    # a batch's members' gate reads, by ARN (reaper.sweep.batch): each member's own, kept from its gate until
    # the batch's call is made, then emptied; an action made in a batch takes its own from here
    read_batch: dict[str, dict[str, Any]] = field(default_factory=dict)

    def gated(self, arn: str, key: str) -> Any:
        """What the gate read just now for `arn` under `key` ("tags", "described"); None when it read nothing for it."""
        if self.read_now.get("arn") == arn:
            return self.read_now.get(key)
        return self.read_batch.get(arn, {}).get(key)

    # a sweep's batch (reaper.sweep.batch): takes a begun change whose action is batched (True), to be
    # gated and made with the others held; None (an event, a button): every change is made alone
    hold: Callable[[Outcome, Action], bool] | None = None


# an action returns a one-line detail of what it did, e.g. "backup backup-0abc started"
ActionRun = Callable[[ActContext, Resource, Decision], str | None]


@dataclass(frozen=True)
class BatchAnswer:
    """What one batched action did, per resource id (reaper.sweep.batch): `done` holds the detail of each
    resource the call(s) changed; `failed` the error of the call each was in (a call fails as a whole)."""

    done: Mapping[str, str | None] = field(default_factory=dict)
    failed: Mapping[str, BaseException] = field(default_factory=dict)
    # the error of a change made in its own call (a kind whose batch shares reads and one write, not the
    # change: endpoints), settled as the one-resource path settles it (ActionRefused: refused; else failed)
    own: Mapping[str, BaseException] = field(default_factory=dict)


# (context, the resources the gate let through, each with its decision) -> what the call(s) did to each
BatchRun = Callable[[ActContext, Sequence[tuple[Resource, Decision]]], BatchAnswer]

# what a batch's one read of its members found for one of them (KindDeclaration.read_many): (its state now, None when
# gone; its tags now, or None where the read does not return them and its gate reads them alone)
ReadNow = tuple[str | None, dict[str, str] | None]


# how every refusal of the gate's fresh read ends (reaper.sweep.gate)
AGAIN = "read again just before the change"


@dataclass(frozen=True)
class Fresh:
    """A resource as it is just before a change (Kind.fresh, for reaper.sweep.gate): its state; and, when that
    is a state the action may start from, its tags, why its protection forbids the change, or else why the
    kind's guard does. `described`: what the state was read from, where the kind hands it to the action."""

    state: str | None
    described: Any = None
    tags: dict[str, str] = field(default_factory=dict)
    protected: str | None = None
    guarded: str | None = None


def protection_now(
    clients: Clients, r: Resource, settings: Settings, now: datetime, tags: dict[str, str] | None = None
) -> tuple[str | None, dict[str, str]]:
    """Protection read again from the resource's own service: a tag set after discovery still wins
    (docs/safety.md, item 1), and so does one on what guards it (a Studio app's space).

    `tags`: the resource's tags as its service gave them just now (a batch's one read); else read here.
    Returns (why it is protected now, or None; its tags now).
    """
    fresh = current_tags(clients, r.arn) if tags is None else tags
    for arn in (r.arn, *r.guarded_by):
        tags = fresh if arn == r.arn else current_tags(clients, arn)
        view = read_tags(tags, settings)
        why = protected(view, settings, now)
        if why is not None:
            whose = "" if arn == r.arn else f" on {arn.split(':', 5)[-1]}"
            return f"{why}{whose} ({AGAIN}): nothing done", fresh
    return None, fresh


@dataclass(frozen=True)
class SignalContext:
    """What every kind's signals read with: one shape for all of them."""

    clients: Clients
    settings: Settings
    now: datetime
    log: ActionLog | None = None  # reads whose only use is a message the log says was posted today are skipped


@dataclass(frozen=True)
class Parts(Generic[S]):
    """A kind's parts, typed: `kinds/<kind>/parts.py` builds one `Parts[ItsSignal]`, so mypy checks its decide
    against its signals (a decide with the wrong signature fails `mypy --strict`). The declaration names
    only that module (`parts`), imported on first use, so loading a declaration stays cheap."""

    discover: Callable[[Clients, Settings, datetime], list[Resource]]  # every candidate, tags attached, bulk reads
    signals: Callable[[SignalContext, list[Resource]], Mapping[str, S]]  # evidence read in batches
    decide: Callable[[Resource, S | None, TagView, Settings, datetime], Decision]  # pure
    current_state: Callable[[Clients, Resource], str | None]  # state now, None when gone; read just before acting
    undo_hint: Callable[[Resource, KindAction | None], str | None]  # a command that undoes the action
    # the named resources only (ids): an event's, a Stop-now click's (None: discover and keep the named)
    discover_named: Callable[[Clients, Settings, datetime, frozenset[str]], list[Resource]] | None = None
    # (state now or None, the description it was read from): the gate reads the state through it and
    # hands the description to the action (ActContext.gated)
    current_read: Callable[[Clients, Resource], tuple[str | None, Any]] | None = None
    # the act decision past a kill date (kinds whose action depends on the resource), or None
    kill_decision: Callable[[Resource, S | None, TagView, Settings, datetime, str], Decision | None] | None = None
    guard: Guard | None = None  # why the kind changes nothing on this resource whatever asks, or None


S_co = TypeVar("S_co", covariant=True)


class SignalsModule(Protocol[S_co]):
    """A kind's `signals` module: its `signals(clients, resources, settings, now)`."""

    def signals(self, clients: Clients, resources: list[Resource], settings: Settings, now: datetime, /) -> Mapping[str, S_co]: ...


class StateModule(Protocol):
    """A kind's `actions` module: its `current_state(clients, resource)`."""

    def current_state(self, clients: Clients, resource: Resource, /) -> str | None: ...


def signals_of(module: SignalsModule[S]) -> Callable[[SignalContext, list[Resource]], Mapping[str, S]]:
    """A kind's `signals.signals` behind the one SignalContext, looked up at each call (a test may patch it)."""

    def read(ctx: SignalContext, resources: list[Resource]) -> Mapping[str, S]:
        return module.signals(ctx.clients, resources, ctx.settings, ctx.now)

    return read


def state_of(module: StateModule) -> Callable[[Clients, Resource], str | None]:
    """A kind's `actions.current_state`, read just before a change; looked up at each call (a test may patch it)."""

    def read(clients: Clients, resource: Resource) -> str | None:
        return module.current_state(clients, resource)

    return read


def load_parts(ref: Ref) -> Parts[Any]:
    """The kind's `Parts`, checked to be one (a Ref is text: this is where it becomes a type again)."""
    parts = resolve(ref)
    if not isinstance(parts, Parts):
        raise TypeError(f"{ref} is {type(parts).__name__}, not a kinds.base.Parts")
    return parts


@dataclass(frozen=True)
class Action:
    name: KindAction  # the kind's ActionName member; its value is the verb in messages: "stop", "delete"
    past: str  # "stopped"
    permissions: tuple[str, ...]
    valid_origin_states: frozenset[str]
    run: Ref  # -> ActionRun
    needs_log: bool = False  # cannot be undone without a restore record in the action log
    removes_resource: bool = False  # the resource is gone afterwards: its tags went with it
    # The same change for many resources in one call, where the API takes many (EC2 StopInstances):
    # a sweep holds up to `batch_size` changes, each begun and gated alone, then makes them in one call
    # (reaper.sweep.batch). `run` stays the one-resource path (an event, a button, the fallback).
    batch: Ref | None = None  # -> BatchRun
    batch_size: int = 1

    def runner(self) -> ActionRun:
        fn: ActionRun = resolve(self.run)
        return fn

    def batch_runner(self) -> BatchRun:
        assert self.batch is not None
        fn: BatchRun = resolve(self.batch)
        return fn


@dataclass(frozen=True)
class Unconfirmed:
    """A change begun (written ahead) whose end its sweep could not record: what a later sweep knows of it
    from its write-ahead record (reaper.sweep.reconcile). `since` is when it was begun."""

    action: str
    id: str
    arn: str
    since: datetime
    evidence: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Made:
    """What the resource's state, read later, says of an unconfirmed change: `made` True (it is there),
    False (it is not), None (the state cannot tell); `seen` is what was read, in a few words."""

    made: bool | None
    seen: str

    @classmethod
    def by_state(cls, field_name: str, state: str | None, made: Collection[str], unmade: Collection[str]) -> Made:
        """From a state: one of `made`, one of `unmade`, or anything else (gone included) that cannot tell."""
        seen = f"{field_name} {state}" if state is not None else "gone"
        if state is not None and state in made:
            return cls(True, seen)
        if state is not None and state in unmade:
            return cls(False, seen)
        return cls(None, seen)


# (clients, the unconfirmed change) -> what its resource's state says now; AWS errors propagate
Confirm = Callable[[Clients, Unconfirmed], Made]


class Check(Protocol):
    """The pipeline on the resources an event names (reaper.sweep.pipeline.check, the one door for acting on
    named resources): handed to an event handler by its caller, so a kind never imports the sweep above it."""

    def __call__(self, rt: Runtime, kind: str, region: str, only: Collection[str], now: datetime, event_id: str) -> list[Outcome]: ...


# (runtime, event, now, the pipeline's door for named resources) -> summary of what the event did
EventHandler = Callable[["Runtime", "EventBridgeEvent", datetime, Check], EventResult]


@dataclass(frozen=True)
class EventRoute:
    """EventBridge events a kind's function takes besides its schedule."""

    source: str
    detail_types: tuple[str, ...]
    handler: Ref  # -> EventHandler

    def matches(self, source: str, detail_type: str) -> bool:
        return source == self.source and detail_type in self.detail_types


# (resource, signal, view, settings, now, reason) -> the act decision past a kill date, or None when
# the kind has nothing to do to this resource now (kinds whose action depends on the resource)
KillDecision = Callable[[Resource, Any, TagView, Settings, datetime, str], Decision | None]

# (resource, view, settings, ruled) -> why the kind changes nothing on this resource whatever asks, or None
# (reaper.sweep.gate: read just before every change, and for a Stop-now click against the rule's decision)
Guard = Callable[[Resource, TagView, Settings, Decision | None], str | None]

# (runtime, name, now, say) -> the final one-line result
RestoreRun = Callable[["Runtime", str, datetime, "Say"], str]
WakeRun = Callable[["Runtime", str, str, datetime, "Say"], str]  # (runtime, name, schedule, now, say)


@dataclass(frozen=True)
class Restorer:
    """How `reaper restore NAME` brings back what this kind deleted."""

    name_pattern: str  # a regular expression: does NAME look like one of this kind's resources
    run: Ref  # -> RestoreRun
    permissions: tuple[str, ...]  # what the restore function needs for this kind
    wake: Ref | None = None  # -> WakeRun: what a schedule the kind made to bring it back runs (it checks first)

    def claims(self, name: str) -> bool:
        return re.fullmatch(self.name_pattern, name.strip()) is not None


class StandardParts(TypedDict):
    parts: Ref


def standard_parts(package: str) -> StandardParts:
    """The kind's typed parts, by the package layout's file name (`parts.py` holds `PARTS`)."""
    return {"parts": f"{package}.parts:PARTS"}


@dataclass(frozen=True)
class KindDeclaration:
    name: str
    tag_resource_types: tuple[str, ...]  # Resource Groups Tagging API types, e.g. 'sagemaker:endpoint'; () when the listing has the tags
    tag_service: str  # the service whose tag calls write reaper:warned-at
    read_permissions: tuple[str, ...]  # discovery, signals (list prices included) and the pre-action state check
    actions: Mapping[KindAction, Action]  # keyed by the kind's ActionName members
    parts: Ref  # -> Parts: discover, signals, decide, state reads, undo, kill decision, guard (kinds/<kind>/parts.py)
    # (clients, resources) -> {arn: ReadNow}: a batch's members read again in one call where the service has
    # one (reaper.sweep.batch), for their gates; a member it leaves out is read alone, and tags it gives as None
    # are read alone (a read that does not return them: FSx, docs/aws-assumptions.md)
    read_many: Ref | None = None
    events: tuple[EventRoute, ...] = ()
    event_permissions: tuple[str, ...] = ()  # what the event handlers call beyond the sweep
    restorer: Restorer | None = None
    doc: str = ""  # one line for `--help` and the README
    # The action a kill date (`reaper:kill-after`) leads to, through the usual warning and grace.
    # Kinds whose action depends on the resource (an endpoint's type, an FSx file system's
    # protection) also name `kill_decision`, which picks it; otherwise this one is taken when the
    # resource is in a state it may start from.
    default_action: KindAction | None = None  # (Parts.kill_decision picks it where the resource decides)
    # The kind's own reasons to keep that no kill date, budget or button overrides (managed by a cluster,
    # instance store a stop erases, unknown evidence) are its Parts.guard, checked before every change.
    # Budgets per ml:project (reaper.aws.budgets): a budgeted kind reads the projects' spend each sweep and
    # takes its default action at 100 %; the kind that manages budgets also creates the missing ones.
    budgeted: bool = False
    manages_budgets: bool = False
    # The evidence is read per resource (a describe per candidate), not across resources: the
    # pipeline reads it a chunk at a time, so a sweep split across invocations reads only what each
    # part reaches. Kinds whose signals compare resources (tuning siblings) or search the account
    # once (FSx job inputs) read them for every resource, in every part.
    chunked_signals: bool = False
    # Resources per chunk (None: the pipeline's 500, one full GetMetricData batch). Smaller for a kind
    # whose chunk is slow (a describe per resource), so a part stops closer to its deadline.
    chunk_size: int | None = None
    # Reads made only in some deployments: {template.yaml Condition: permissions}. The function's role
    # grants them under `!If [Condition, ...]` (tests/unit/test_iam.py checks each way the condition goes).
    conditional_permissions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # (clients, unconfirmed change) -> Made: reads the resource's state to say whether a change begun and
    # never recorded was made (reaper.sweep.reconcile). Its reads are among `read_permissions`. None: it cannot tell.
    confirm: Ref | None = None  # -> Confirm
    # Declared reads (among `read_permissions`) that a dry run (`reaper plan`, `reaper coverage`) never makes: the
    # gate's re-read just before a change, an action's own, an event handler's. `reaper iam --read-only` leaves them
    # out: its policy is what a dry run can call (docs/try-read-only.md).
    change_reads: tuple[str, ...] = ()
    # Reads a dry run may make that the test kit cannot bring about, each with why (docs/try-read-only.md): in the
    # read-only policy, and named apart where tests/integration/test_cli_explains.py checks the policy is what was called.
    untriggered_reads: Mapping[str, str] = field(default_factory=dict)


class Kind:
    """A declaration with its parts imported on first use: what the pipeline calls."""

    def __init__(self, declaration: KindDeclaration) -> None:
        self.declaration = declaration

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def actions(self) -> Mapping[KindAction, Action]:
        return self.declaration.actions

    @property
    def tag_service(self) -> str:
        return self.declaration.tag_service

    @property
    def tag_resource_types(self) -> tuple[str, ...]:
        return self.declaration.tag_resource_types

    def _part(self, ref: Ref) -> Any:
        return resolve(ref)  # a dict lookup once imported; not cached, so tests can patch a part

    @property
    def parts(self) -> Parts[Any]:
        return load_parts(self.declaration.parts)  # a dict lookup once imported

    def discover(self, clients: Clients, settings: Settings, now: datetime, only: Collection[str] | None = None) -> list[Resource]:
        """Every candidate; with `only` (ids or ARNs), a kind with `discover_named` reads just those (by id,
        an ARN's last part); another reads them all, and the pipeline keeps the named ones."""
        parts = self.parts
        if only is not None and parts.discover_named is not None:
            return parts.discover_named(
                clients, settings, now, frozenset(n.rsplit("/", 1)[-1] if n.startswith("arn:") else n for n in only)
            )
        return parts.discover(clients, settings, now)

    def signals(
        self, clients: Clients, resources: list[Resource], settings: Settings, now: datetime, log: ActionLog | None = None
    ) -> Mapping[str, object]:
        return self.parts.signals(SignalContext(clients, settings, now, log), resources)

    def decide(self, resource: Resource, signal: object, view: TagView, settings: Settings, now: datetime) -> Decision:
        return self.parts.decide(resource, signal, view, settings, now)

    def current_state(self, clients: Clients, resource: Resource) -> str | None:
        return self.parts.current_state(clients, resource)

    def state_now(self, clients: Clients, resource: Resource) -> tuple[str | None, Any]:
        """The state now, and the description it was read from where the kind hands it on (else None)."""
        parts = self.parts
        if parts.current_read is None:
            return parts.current_state(clients, resource), None
        return parts.current_read(clients, resource)

    def fresh(
        self,
        clients: Clients,
        settings: Settings,
        now: datetime,
        resource: Resource,
        action: Action,
        read: ReadNow | None = None,
        ruled: Decision | None = None,
    ) -> Fresh:
        """The resource as it is now, read for `action` just before it (reaper.sweep.gate): the state, then (in a
        state the action may start from) the protection tags and the kind's guard on them, in that order; each
        read only when what came before lets the change go on. `read`: the state and tags a batch's one read
        found just now (tags None: read here). AWS errors propagate."""
        state, described = self.state_now(clients, resource) if read is None else (read[0], None)
        if state is None or state not in action.valid_origin_states:
            return Fresh(state, described)
        why, tags = protection_now(clients, resource, settings, now, None if read is None else read[1])
        if why is not None:
            return Fresh(state, described, tags, protected=why)
        view = read_tags(tags, settings)
        guarded = self.guard(replace(resource, tags=tags), view, settings, ruled)  # the kind's own reasons, on the fresh tags
        return Fresh(state, described, tags, guarded=guarded)

    def read_many(self, clients: Clients, resources: list[Resource]) -> dict[str, ReadNow]:
        """The state (and tags, where the read returns them) now of many resources in one read, by ARN; {} when the
        kind has no such read."""
        if self.declaration.read_many is None:
            return {}
        read: dict[str, ReadNow] = self._part(self.declaration.read_many)(clients, resources)
        return read

    def kill_decision(
        self, resource: Resource, signal: object, view: TagView, settings: Settings, now: datetime, reason: str
    ) -> Decision | None:
        """What a past kill date leads to for this resource: ACT with the kind's action, or None."""
        d, pick = self.declaration, self.parts.kill_decision
        if pick is not None:
            return pick(resource, signal, view, settings, now, reason)
        action = d.actions.get(d.default_action) if d.default_action else None
        if action is None or resource.state not in action.valid_origin_states:
            return None
        return Decision(Verdict.ACT, reason, action=action.name)

    def confirm(self, clients: Clients, change: Unconfirmed) -> Made:
        """Whether an unconfirmed change was made, read from the resource now (Made(None, ...) without a reader)."""
        if self.declaration.confirm is None:
            return Made(None, f"{self.name} has no reader for it")
        made: Made = self._part(self.declaration.confirm)(clients, change)
        return made

    def guard(self, resource: Resource, view: TagView, settings: Settings, ruled: Decision | None = None) -> str | None:
        """Why no change may be made to this resource whatever asks for it, or None (no guard declared: None)."""
        guard = self.parts.guard
        return None if guard is None else guard(resource, view, settings, ruled)

    def undo_hint(self, resource: Resource, action: KindAction | None) -> str | None:
        return self.parts.undo_hint(resource, action)

    def event_handler(self, source: str, detail_type: str) -> EventHandler | None:
        for route in self.declaration.events:
            if route.matches(source, detail_type):
                handler: EventHandler = self._part(route.handler)
                return handler
        return None

    def permissions(self, conditions: Collection[str] | None = None) -> set[str]:
        """Everything the kind's sweep function calls: reads, tags, actions and event handling; with
        `conditions`, the conditional reads of those template conditions only (None: all of them)."""
        d = self.declaration
        perms = set(d.read_permissions) | set(TAG_WRITE_PERMISSIONS[d.tag_service])
        for condition, extra in d.conditional_permissions.items():
            if conditions is None or condition in conditions:
                perms |= set(extra)
        perms |= set(TAG_READ_PERMISSIONS[d.tag_service])  # protection re-read just before a change
        if d.tag_resource_types:
            perms.add("tag:GetResources")
        perms |= set(d.event_permissions)
        if d.budgeted or d.manages_budgets:
            from reaper.aws.budgets import READ_PERMISSIONS, WRITE_PERMISSIONS

            perms |= set(READ_PERMISSIONS)
            if d.manages_budgets:  # creates the missing budgets; finds tagged budgets with GetResources
                perms |= set(WRITE_PERMISSIONS) | {"tag:GetResources"}
        for action in d.actions.values():
            perms |= set(action.permissions)
        return perms

    def dry_run_reads(self) -> set[str]:
        """What a dry run of this kind may call (`reaper plan`, `reaper coverage`): its declared reads but those only a
        change or an event makes (the list prices and the Tagging API's listing only where the kind declares them)."""
        d = self.declaration
        return set(d.read_permissions) - set(d.change_reads)

    def restore_permissions(self) -> set[str]:
        return set(self.declaration.restorer.permissions) if self.declaration.restorer else set()


__all__ = [
    "ActContext",
    "Action",
    "ActionRun",
    "BatchAnswer",
    "BatchRun",
    "Check",
    "EventHandler",
    "EventResult",
    "EventRoute",
    "Guard",
    "Kind",
    "KindDeclaration",
    "Parts",
    "ReadNow",
    "SignalContext",
    "KillDecision",
    "Ref",
    "Restorer",
    "RestoreRun",
    "WakeRun",
    "resolve",
    "signals_of",
    "standard_parts",
    "state_of",
]


def inherit_protection(own: dict[str, str], parent: dict[str, str], settings: Settings) -> dict[str, str]:
    """A resource's tags with its parent's exempt and snooze tags (where it has none of its own) and its parent's
    stage when that is production: a Studio app under its space, a space under its domain (docs/tags.md)."""
    protective = {settings.tag("exempt").lower(), settings.tag("snooze-until").lower()}
    out = dict(own)
    have = {k.strip().lower() for k in own}
    for key, value in parent.items():
        k = key.strip().lower()
        if k in protective and k not in have:
            out[key] = value
        elif k == "ml:stage" and value.strip().lower() in settings.production_stages:
            out = {ok: ov for ok, ov in out.items() if ok.strip().lower() != "ml:stage"}
            out[key] = value
    return out

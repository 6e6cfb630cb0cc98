"""What the endpoint kind knows about one endpoint, as plain data, and the pure helpers on it.

Endpoint types, and why each needs its own signal and its own way to zero:
  classic               a model on each production variant. Invocations (EndpointName, VariantName).
                        Can only be deleted: the reaper keeps a restore record first.
  inference-components  models hosted as components on the variants. Invocations per component
                        (InferenceComponentName): AWS publishes these endpoints' invocations without
                        EndpointName. Copies go to 0.
  async                 AsyncInferenceConfig. Publishes no Invocations at all: InvocationsProcessed
                        (EndpointName, VariantName) and ApproximateBacklogSize (EndpointName).
                        The autoscaling minimum goes to 0, with a policy that wakes it on backlog.
  serverless            already scales to zero; nothing billed while idle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NotRequired, Required, TypedDict

from reaper.aws.metrics import Series
from reaper.core.price import Price
from reaper.core.rhythm import Rhythm
from reaper.core.timeutil import as_utc, human_duration
from reaper.kinds.endpoint.shapes import StepScalingPolicyConfiguration, SuspendedState, TargetTrackingScalingPolicyConfiguration

KIND = "endpoint"
CLASSIC = "classic"
COMPONENTS = "inference-components"
ASYNC = "async"
SERVERLESS = "serverless"

NAMESPACE = "AWS/SageMaker"
PERIOD = timedelta(minutes=5)
HISTORY_DAYS = 14  # learned wake: Invocations read every 5 minutes over two weeks (1-minute data is kept 15 days, 5-minute 63)
LOOKBACK_MINUTES = 180  # read at least this much history, to say how long an endpoint has been quiet
VARIANT_DIMENSION = "sagemaker:variant:DesiredInstanceCount"
COMPONENT_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"
WAKE_POLICY = "mlreaper-wake-on-backlog"
SCALE_IN_POLICY = "mlreaper-backlog-tracking"  # async: what takes it to 0 (and back there after a wake)
IN_SERVICE = "InService"
OPEN = "reaped"  # a restore record's status while the endpoint is the reaper's to bring back
ACCELERATED = ("ml.g", "ml.p", "ml.inf", "ml.trn", "ml.dl")


@dataclass(frozen=True)
class VariantSummary:
    """One production variant as discovery sees it (Search, or DescribeEndpoint)."""

    name: str
    current: int  # CurrentInstanceCount
    desired: int  # DesiredInstanceCount
    serverless: bool = False
    managed_min: int | None = None  # ManagedInstanceScaling.MinInstanceCount when enabled, else None


@dataclass(frozen=True)
class VariantSpec:
    """One production variant, from the endpoint configuration."""

    name: str
    instance_type: str | None
    initial_count: int
    model: str | None
    managed_min: int | None  # ManagedInstanceScaling.MinInstanceCount when enabled, else None
    serverless: bool = False


@dataclass(frozen=True)
class Component:
    name: str
    variant: str
    copies: int  # desired copy count


@dataclass(frozen=True)
class EndpointDetails:
    """Read only for endpoints that may be acted on (idle, or off-hours)."""

    type: str
    config_name: str
    config_exists: bool
    variants: tuple[VariantSpec, ...] = ()
    models_missing: tuple[str, ...] = ()
    components: tuple[Component, ...] = ()
    models_checked: bool = True  # False: a delete may follow and models_missing is not yet known

    @property
    def instance_types(self) -> tuple[str, ...]:
        return tuple(v.instance_type for v in self.variants if v.instance_type)

    def cannot_recreate(self) -> str | None:
        """Why a classic endpoint could not be recreated from its config, or None."""
        if not self.config_exists:
            return f"its endpoint configuration {self.config_name} no longer exists"
        if self.models_missing:
            names = ", ".join(self.models_missing)
            return (
                f"model{'s' if len(self.models_missing) > 1 else ''} {names} named by its configuration no longer "
                f"exist{'s' if len(self.models_missing) == 1 else ''}"
            )
        return None

    def zero_blocked_by(self, summary_min: dict[str, int | None]) -> str | None:
        """Why copies at 0 would save nothing: a variant whose managed scaling keeps instances."""
        hosting = {c.variant for c in self.components} or {v.name for v in self.variants}
        for name in sorted(hosting):
            spec = next((v for v in self.variants if v.name == name), None)
            minimum = spec.managed_min if spec is not None else summary_min.get(name)
            if minimum is None:
                return f"variant {name} has no managed instance scaling, so its instances stay whatever the copy count"
            if minimum > 0:
                return f"variant {name}'s managed instance scaling keeps at least {minimum} instance{'s' if minimum > 1 else ''}"
        return None


@dataclass(frozen=True)
class Told:
    """A production endpoint's notify-only message, already posted today (from the action log): its
    configuration is not read again until the next message is due (the next UTC day, or sooner if
    the endpoint changes)."""

    at: datetime  # when the message was recorded
    action: str  # what it said would be done (delete, scale-to-zero)
    hourly_usd: float | None = None  # what the message said it costs (None once its instance count changed)
    price: Price | None = None  # the same with its source and date (docs/prices.md)
    instance_type: str | None = None
    type: str | None = None  # the endpoint type the message gave (None: not said): async ones have their requests read


@dataclass(frozen=True)
class EndpointSignal:
    """Traffic over the lookback, summed over variants (and components), plus details when read."""

    start: datetime  # first period read
    end: datetime  # now
    traffic: Series = field(default_factory=list)  # Invocations, or InvocationsProcessed for async
    backlog: Series = field(default_factory=list)  # async only: ApproximateBacklogSize (max per period)
    details: EndpointDetails | None = None
    problem: str | None = None  # details could not be read
    told: Told | None = None  # production, told today already: details not read again
    rhythm: Rhythm | None = None  # learned wake: the bursts of the week it usually has traffic in (14 days of Invocations)
    startup: timedelta | None = None  # learned wake: its last restore's CreateEndpoint to InService, from its restore record
    woken: WakeTrail | None = None  # learned wake: its last restore was the reaper's own wake, after its rhythm's warning (grace.py)


@dataclass(frozen=True)
class WakeTrail:
    """Its last restore record, when the reaper's own wake brought it back for a learned burst after its owner
    had been warned of the rhythm (docs/kinds/endpoint.md, "The grace, once per rhythm"), and the calls since."""

    warned_at: datetime  # when its owner was first warned it would go to zero between bursts (carried record to record)
    usual_start: datetime  # the burst the wake brought it back for
    woken_at: datetime  # the wake's restore began (CreateEndpoint, or the copies asked for)
    restored_at: datetime  # InService again
    calls: tuple[datetime, ...] = ()  # the 5-minute periods with calls since the wake began (14 days of Invocations)


@dataclass(frozen=True)
class EndpointFacts:
    """What discovery knows of an endpoint; `details` is added by the signals read, where it is read."""

    config: str | None  # EndpointConfigName
    variants: tuple[VariantSummary, ...] = ()
    components: tuple[str, ...] = ()  # the inference components it hosts, by name
    components_problem: str | None = None  # ListInferenceComponents failed: `components` is not known
    serverless: bool = False  # every variant is serverless
    table: str | None = None  # the action log the restore record goes to: the undo command names it
    details: EndpointDetails | None = None  # read only for endpoints that may be acted on


# -- restore records: what the action log keeps so `reaper restore` can bring an endpoint back ----


class PolicyRecord(TypedDict):
    name: str
    type: str  # StepScaling | TargetTrackingScaling
    arn: str | None
    config: StepScalingPolicyConfiguration | TargetTrackingScalingPolicyConfiguration | None  # as PutScalingPolicy takes it
    # step scaling: the alarms that invoke it, each PutMetricAlarm's arguments as DescribeAlarms gave them (autoscaling.ALARM_FIELDS):
    # kept whole and put back unread but for their action lists (autoscaling._repointed), so nothing the owner set is lost
    alarms: list[dict[str, object]]


class ScalingRecord(TypedDict):
    resource_id: str
    dimension: str
    min: int
    max: int
    suspended: SuspendedState | None
    policies: list[PolicyRecord]


class TargetRecord(TypedDict):
    min: int
    max: int


class VariantRecord(TypedDict, total=False):
    name: Required[str]
    instance_type: str | None  # classic
    count: int | None  # classic: InitialInstanceCount
    desired: int  # async: instances before going to zero
    target: TargetRecord | None  # async: its scalable target before going to zero, or None
    scale_in_added: bool  # async: the reaper put its backlog target-tracking policy on this variant


class ComponentRecord(TypedDict):
    name: str
    variant: str
    copies: int


class RestoreRecord(TypedDict):
    kind: str
    type: str  # CLASSIC, COMPONENTS or ASYNC
    name: str
    arn: str
    region: str
    account: str
    owner: str | None
    instance_type: str | None
    instance_count: int
    hourly_usd: float | None
    reason: str
    reaped_at: str
    event_id: str
    status: str  # reaped (open: the reaper's to restore), restoring, restored, failed, cancelled (closed: wake.cancel)
    wake_at: NotRequired[str]  # off-hours or learned wake: the schedule that brings it back
    usual_start: NotRequired[str]  # learned wake: when its usual traffic starts (wake_at is the lead before)
    prewarm_minutes: NotRequired[int]  # learned wake: back this long before its usual traffic (not a saving)
    schedule: NotRequired[str]  # the wake's EventBridge Scheduler schedule (wake.py), deleted once the record closes
    schedule_group: NotRequired[str]  # its schedule group (records written before it: the settings' group)
    config_name: NotRequired[str]  # classic
    models: NotRequired[list[str]]  # classic
    tags: NotRequired[list[dict[str, str]]]  # classic
    variants: NotRequired[list[VariantRecord]]  # classic, async
    autoscaling: NotRequired[list[ScalingRecord]]  # classic, components
    components: NotRequired[list[ComponentRecord]]  # components
    wake_added: NotRequired[bool]  # async: the reaper added the wake-on-backlog policy
    restore_started_at: NotRequired[str]
    restored_at: NotRequired[str]
    updated_at: NotRequired[str]
    failure: NotRequired[str]
    restore_by: NotRequired[str]  # the wake schedule that started the restore; absent: a person (CLI, Slack)
    rhythm_warned_at: NotRequired[str]  # learned wake: its owner's warning of the rhythm, so its next zeroing needs none (grace.py)
    cancelled: NotRequired[str]  # why the restore was cancelled (someone else deleted, recreated or exempted it)


def restore_command(name: str, table: str | None = None) -> str:
    return f"reaper restore {name}" + (f" --table {table}" if table else "")


def in_service_since(resource_created: datetime | None, resource_changed: datetime | None) -> datetime | None:
    """The last time the endpoint was created or changed: it has been InService at most since then."""
    stamps = [as_utc(t) for t in (resource_created, resource_changed) if t is not None]
    return max(stamps) if stamps else None


def traffic_in_window(points: Series, window_start: datetime) -> float:
    """Requests in periods that overlap the window (a period only partly inside still counts)."""
    return sum(v for ts, v in points if ts + PERIOD > window_start)


def quiet_since(points: Series, lookback_start: datetime, since: datetime | None) -> tuple[datetime, bool]:
    """When the endpoint last had traffic, came into service, or the reading starts; True if capped."""
    busy = [ts + PERIOD for ts, v in points if v > 0]
    start = max(busy) if busy else lookback_start
    if since is not None and since > start:
        return since, False
    return start, not busy


def quiet_text(what: str, now: datetime, points: Series, lookback_start: datetime, since: datetime | None) -> str:
    start, capped = quiet_since(points, lookback_start, since)
    span = human_duration(max(now - start, timedelta(0)))
    return f"0 {what} in {'at least ' if capped else ''}{span}"


def is_accelerated(instance_type: str | None) -> bool:
    return bool(instance_type) and str(instance_type).startswith(ACCELERATED)


def comeback_note(instance_types: tuple[str, ...] | list[str]) -> str:
    gpu = [t for t in instance_types if is_accelerated(t)]
    if gpu:
        return (
            f"a restored GPU endpoint ({', '.join(sorted(set(gpu)))}) takes several minutes, often 10 or more, "
            "to become InService again; calls fail until then"
        )
    return "a restored endpoint takes a few minutes to become InService again; calls fail until then"


def variant_resource_id(endpoint: str, variant: str) -> str:
    return f"endpoint/{endpoint}/variant/{variant}"


def component_resource_id(component: str) -> str:
    return f"inference-component/{component}"

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
from typing import Any

from reaper.errors import ActionRefused
from reaper.metrics import Series
from reaper.timeutil import as_utc, human_duration

CLASSIC = "classic"
COMPONENTS = "inference-components"
ASYNC = "async"
SERVERLESS = "serverless"

NAMESPACE = "AWS/SageMaker"
PERIOD = timedelta(minutes=5)
LOOKBACK_MINUTES = 180  # read at least this much history, to say how long an endpoint has been quiet
VARIANT_DIMENSION = "sagemaker:variant:DesiredInstanceCount"
COMPONENT_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"
WAKE_POLICY = "mlreaper-wake-on-backlog"
IN_SERVICE = "InService"
ACCELERATED = ("ml.g", "ml.p", "ml.inf", "ml.trn", "ml.dl")


Refused = ActionRefused  # the endpoint actions' name for the core's refusal


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

    @property
    def instance_types(self) -> tuple[str, ...]:
        return tuple(v.instance_type for v in self.variants if v.instance_type)

    def cannot_recreate(self) -> str | None:
        """Why a classic endpoint could not be recreated from its config, or None."""
        if not self.config_exists:
            return f"its endpoint configuration {self.config_name} no longer exists"
        if self.models_missing:
            names = ", ".join(self.models_missing)
            return f"model{'s' if len(self.models_missing) > 1 else ''} {names} named by its configuration no longer exist{'s' if len(self.models_missing) == 1 else ''}"
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
class EndpointSignal:
    """Traffic over the lookback, summed over variants (and components), plus details when read."""

    start: datetime  # first period read
    end: datetime  # now
    traffic: Series = field(default_factory=list)  # Invocations, or InvocationsProcessed for async
    backlog: Series = field(default_factory=list)  # async only: ApproximateBacklogSize (max per period)
    details: EndpointDetails | None = None
    problem: str | None = None  # details could not be read


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


def jsonable_details(details: EndpointDetails) -> dict[str, Any]:
    return {
        "type": details.type,
        "config": details.config_name,
        "variants": [v.__dict__ for v in details.variants],
        "components": [c.__dict__ for c in details.components],
    }

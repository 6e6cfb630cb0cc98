"""Evidence for the endpoint kind: traffic for every live endpoint in one GetMetricData batch, and
details for the endpoints that may be acted on.

Configurations, models and component copy counts have no batch API: they are read only for the
endpoints that may be acted on, and each configuration or model once per sweep however many
endpoints name it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from botocore.exceptions import ClientError

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, is_not_found, short
from reaper.aws.metrics import MetricQuery, Series, fetch
from reaper.aws.pricing import Pricer
from reaper.aws.sagemaker_shapes import ManagedInstanceScaling
from reaper.core import scope
from reaper.core.model import Resource
from reaper.core.policy import is_dev, is_production, read_tags
from reaper.core.price import total
from reaper.core.rhythm import learn_bursts
from reaper.core.scope import Scope
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, parse_instant
from reaper.kinds.endpoint.model import (
    ASYNC,
    CLASSIC,
    COMPONENTS,
    HISTORY_DAYS,
    IN_SERVICE,
    KIND,
    LOOKBACK_MINUTES,
    NAMESPACE,
    PERIOD,
    SERVERLESS,
    Component,
    EndpointDetails,
    EndpointFacts,
    EndpointSignal,
    Told,
    VariantSpec,
    WakeTrail,
    traffic_in_window,
)
from reaper.kinds.endpoint.rules import BURST_TAIL, may_act, told_stands
from reaper.kinds.endpoint.settings import EndpointSettings
from reaper.kinds.endpoint.shapes import (
    DescribeEndpointConfigOutput,
    ListModelsOutput,
    ProductionVariant,
    endpoint_config,
    inference_component,
)
from reaper.kinds.endpoint.told import told_today
from reaper.record.actionlog import ActionLog


def signals(
    clients: Clients, resources: list[Resource], settings: Settings, now: datetime, log: ActionLog | None = None
) -> Mapping[str, EndpointSignal]:
    """Traffic for every live endpoint in one batch; details only for those that may be acted on.

    Configurations are read for quiet endpoints the reaper may change (dev stages) or whose
    notify-only message names what would be done (production stages); quiet endpoints of any
    other stage get only the notice "tag it dev", which needs no configuration: for them the
    asynchronous metrics are read in the second batch instead (an async endpoint publishes no
    Invocations). Whether the models of a dev classic endpoint still exist comes from ListModels
    pages, read once per sweep. Details also complete the resource (facts, instance type, hourly
    cost) for the message.
    """
    live = [r for r in resources if r.state == IN_SERVICE and not r.facts_as(EndpointFacts).serverless]
    if not live:
        return {}
    end = as_utc(now)
    longest = max([settings.idle_for(KIND)] + [read_tags(r.tags, settings).idle_minutes or 0 for r in live])
    lookback = timedelta(minutes=max(longest, LOOKBACK_MINUTES))
    start = _floor5(end - lookback)
    traffic = fetch(clients("cloudwatch"), [q for r in live for q in traffic_queries(r)], start, end)
    reader = reader_for(clients)
    out: dict[str, EndpointSignal] = {}
    unread: list[Resource] = []  # quiet, other stage, configuration not needed: async metrics instead
    wanted: list[tuple[Resource, bool]] = []  # configuration needed: (endpoint, dev)
    for r in live:
        out[r.id] = EndpointSignal(start=start, end=end, traffic=traffic.get(r.id, []))
    history = _learn(clients, live, out, settings, now)  # before may_act: a learned burst says when the traffic is over
    for r in live:
        sig = out[r.id]
        if may_act(r, sig, settings, now):
            view = read_tags(r.tags, settings)
            dev = is_dev(view, settings)
            if dev or is_production(view, settings) or r.facts_as(EndpointFacts).components_problem:
                wanted.append((r, dev))
            else:
                unread.append(r)
    told = _told(log, [r for r, _dev in wanted], settings, now)
    for r, dev in wanted:
        if r.id in told:
            out[r.id] = replace(out[r.id], told=told[r.id])
            _complete_told(r, told[r.id])
            if told[r.id].type in (None, ASYNC):
                unread.append(r)  # async (or not said): its requests processed and backlog are read, as for a stage-less one
            continue
        try:
            out[r.id] = replace(out[r.id], details=reader.details(r, check_models=dev))
        except AwsError as exc:
            out[r.id] = replace(out[r.id], problem=f"could not read its configuration: {short(exc)}")
    _check_models(reader, out, resources)
    for r in live:
        sig = out[r.id]
        problem = r.facts_as(EndpointFacts).components_problem
        if sig.details is not None and sig.details.type == COMPONENTS and problem:
            out[r.id] = sig = replace(sig, details=None, problem=f"could not list its inference components: {problem}")
        if sig.details is not None:
            _complete(r, sig.details, clients.pricer)
    _startups(log, live, out, history)
    _read_async(clients, live, unread, out, start, end)
    return out


def _read_async(
    clients: Clients, live: list[Resource], unread: list[Resource], out: dict[str, EndpointSignal], start: datetime, end: datetime
) -> None:
    """The second batch: what async endpoints processed and queued, and the same for endpoints of unknown type."""
    async_ones = [r for r in live if (d := out[r.id].details) is not None and d.type == ASYNC]
    if not async_ones and not unread:
        return
    series = fetch(clients("cloudwatch"), [q for r in async_ones + unread for q in async_queries(r)], start, end)
    for r in async_ones:
        out[r.id] = replace(out[r.id], traffic=series.get(f"{r.id}|processed", []), backlog=series.get(f"{r.id}|backlog", []))
    for r in unread:  # type unknown: Invocations and, if it is async, what it processed
        both = sorted(out[r.id].traffic + series.get(f"{r.id}|processed", []))
        out[r.id] = replace(out[r.id], traffic=both, backlog=series.get(f"{r.id}|backlog", []))


def _learn(clients: Clients, live: list[Resource], out: dict[str, EndpointSignal], settings: Settings, now: datetime) -> dict[str, Series]:
    """Learned wake: each dev endpoint's Invocations, every 5 minutes over the last 14 days, in one batch
    (a query per variant or component; GetMetricData takes one time range a call, so two weeks go in
    their own call, up to 500 queries in it, paged by NextToken past 100,800 datapoints: Invocations
    has a datapoint only where there were calls). Only for dev endpoints quiet for BURST_TAIL (idle, or
    whose burst may be over), not for those whose hours are pinned by their wake tag, nor serverless
    ones. An async endpoint publishes no Invocations, so it learns no bursts: its backlog wakes it.
    Returns the two weeks read, by endpoint id (_startups: the calls since its last wake)."""
    if not settings.of(EndpointSettings).endpoint_learned_wake:
        return {}
    views = {r.id: read_tags(r.tags, settings) for r in live}
    recent = as_utc(now) - BURST_TAIL
    wanted = [
        r
        for r in live
        if is_dev(views[r.id], settings)
        and not views[r.id].wake
        and not r.facts_as(EndpointFacts).serverless
        and traffic_in_window(out[r.id].traffic, recent) == 0
    ]
    if not wanted:
        return {}
    end = _floor5(as_utc(now))
    history = fetch(clients("cloudwatch"), [q for r in wanted for q in traffic_queries(r)], end - timedelta(days=HISTORY_DAYS), end)
    for r in wanted:
        out[r.id] = replace(out[r.id], rhythm=learn_bursts(history.get(r.id, []), now))
    return {r.id: history.get(r.id, []) for r in wanted}


def _startups(log: ActionLog | None, live: list[Resource], out: dict[str, EndpointSignal], history: Mapping[str, Series]) -> None:
    """The lead of a wake (rules.wake_lead): how long its last restore took, CreateEndpoint (or the copies
    and instances asked for) to InService, from its restore record; and from the same record, whether the
    reaper's own wake brought it back after its rhythm's warning (grace.py). Read only for the endpoints
    with a usual burst that may go to zero now (their configuration was read), one record each."""
    if log is None:
        return
    for r in live:
        sig = out[r.id]
        if sig.details is None or sig.rhythm is None or not sig.rhythm.slots:
            continue
        record = log.latest_restore(KIND, r.id) or {}
        started, done = record.get("restore_started_at"), record.get("restored_at")
        if record.get("status") != "restored" or not done:
            continue
        if r.id in history:  # its two weeks were read (not for hours pinned by its wake tag): the calls since its wake are known
            sig = out[r.id] = replace(sig, woken=_trail(record, history[r.id]))
        if not started:
            continue
        took = parse_instant(str(done)) - parse_instant(str(started))
        if timedelta(0) < took <= timedelta(hours=6):  # a record whose InService was seen late says nothing
            out[r.id] = replace(sig, startup=took)


def _trail(record: Mapping[str, object], history: Series) -> WakeTrail | None:
    """A restored record's wake, when the reaper's own wake (restore_by names its schedule: a person's restore
    leaves it empty) brought it back for a learned burst after the rhythm's warning; with the calls since."""
    warned, usual, done = record.get("rhythm_warned_at"), record.get("usual_start"), record.get("restored_at")
    if not (record.get("restore_by") and warned and usual and done):
        return None
    woken = parse_instant(str(record.get("restore_started_at") or done))
    calls = tuple(ts for ts, v in history if v > 0 and ts + PERIOD > woken)
    return WakeTrail(
        warned_at=parse_instant(str(warned)),
        usual_start=parse_instant(str(usual)),
        woken_at=woken,
        restored_at=parse_instant(str(done)),
        calls=calls,
    )


def _told(log: ActionLog | None, candidates: list[Resource], settings: Settings, now: datetime) -> dict[str, Told]:
    """Endpoints only told once a day (rules.told_stands) whose message was posted today; not when
    ListInferenceComponents failed (which of them host components is then learnt from their
    configurations)."""
    if log is None:
        return {}
    views = {r.id: read_tags(r.tags, settings) for r in candidates}
    candidates = [r for r in candidates if told_stands(views[r.id], settings) and not r.facts_as(EndpointFacts).components_problem]
    if not candidates:
        return {}
    return told_today(
        log, candidates, {r.id: "exempt" if is_production(views[r.id], settings) else "act" for r in candidates}, settings, now
    )


def _complete_told(r: Resource, told: Told) -> None:
    """The resource as today's message showed it (its configuration is not read again)."""
    r.instance_type = told.instance_type
    r.set_price(told.price)


_shared: list[tuple[Scope, DetailReader]] = []  # the sweep in progress and its reader; at most one


def reader_for(clients: Clients) -> DetailReader:
    """One reader per sweep (reaper.core.scope), shared by the chunks the pipeline reads signals in:
    a configuration, a model or a ListModels page is read once per sweep, not once per chunk. The
    next sweep, or the next part of a long one, starts afresh: nothing is kept past its sweep."""
    sweep = scope.current()
    if sweep is None:
        return DetailReader(clients)
    if not _shared or _shared[0][0] is not sweep or _shared[0][1].sm is not clients("sagemaker"):
        _shared[:] = [(sweep, DetailReader(clients))]
    return _shared[0][1]


def _check_models(reader: DetailReader, out: dict[str, EndpointSignal], resources: list[Resource]) -> None:
    """Dev classic endpoints: which of their models are gone, from ListModels pages (one read for all)."""
    wanted = {r.id: d for r in resources if (d := out.get(r.id, _NONE).details) is not None and d.models_checked is False}
    names = {v.model for d in wanted.values() for v in d.variants if v.model}
    if not names:
        return
    try:
        existing = reader.models_existing(names)
    except AwsError as exc:
        for rid in wanted:
            out[rid] = replace(out[rid], details=None, problem=f"could not check that its models exist: {short(exc)}")
        return
    for rid, d in wanted.items():
        missing = tuple(sorted({v.model for v in d.variants if v.model and v.model not in existing}))
        out[rid] = replace(out[rid], details=replace(d, models_missing=missing, models_checked=True))


def traffic_queries(r: Resource) -> list[MetricQuery]:
    """Invocations, summed over every variant of the endpoint, or over every component of an
    endpoint that hosts components (AWS publishes those per component, without EndpointName)."""
    facts = r.facts_as(EndpointFacts)
    if facts.components:
        return [
            MetricQuery(r.id, NAMESPACE, "Invocations", (("InferenceComponentName", c),), stat="Sum", period=300) for c in facts.components
        ]
    return [
        MetricQuery(r.id, NAMESPACE, "Invocations", (("EndpointName", r.id), ("VariantName", v.name)), stat="Sum", period=300)
        for v in facts.variants
    ]


def async_queries(r: Resource) -> list[MetricQuery]:
    queries = [
        MetricQuery(
            f"{r.id}|processed",
            NAMESPACE,
            "InvocationsProcessed",
            (("EndpointName", r.id), ("VariantName", v.name)),
            stat="Sum",
            period=300,
        )
        for v in r.facts_as(EndpointFacts).variants
    ]
    queries.append(
        MetricQuery(f"{r.id}|backlog", NAMESPACE, "ApproximateBacklogSize", (("EndpointName", r.id),), stat="Maximum", period=300)
    )
    return queries


class DetailReader:
    """Configurations and models, each read once per sweep (across its chunks: see reader_for)."""

    def __init__(self, clients: Clients) -> None:
        self.sm = clients("sagemaker")
        self._configs: dict[str, DescribeEndpointConfigOutput | None] = {}
        self._models: dict[str, bool] = {}
        self._pages: Iterator[ListModelsOutput] | None = None  # ListModels, resumed where the last chunk stopped
        self._listed_all = False
        self._pages_read = 0

    def config(self, name: str) -> DescribeEndpointConfigOutput | None:
        if name not in self._configs:
            try:
                self._configs[name] = endpoint_config(self.sm, name)
            except ClientError as exc:
                if not is_not_found(exc):
                    raise
                self._configs[name] = None
        return self._configs[name]

    def has_config(self, name: str) -> bool:
        """This reader read `name` already (its answer, or that it is gone)."""
        return name in self._configs

    @property
    def pages_for_all(self) -> int | None:
        """How many ListModels pages held every model, when this reader read them all; else None."""
        return self._pages_read if self._listed_all else None

    def list_all_models(self) -> None:
        """Every ListModels page, read now: a model not listed is gone (model_exists answers from it)."""
        self._models.update((m["ModelName"], True) for page in self._list_pages() for m in page.get("Models", []))
        self._listed_all = True

    def _list_pages(self) -> Iterator[ListModelsOutput]:
        for page in self.sm.get_paginator("list_models").paginate(PaginationConfig={"PageSize": 100}):
            self._pages_read += 1
            yield page

    def model_exists(self, name: str) -> bool:
        if name not in self._models and self._listed_all:
            return False
        if name not in self._models:
            try:
                self.sm.describe_model(ModelName=name)
                self._models[name] = True
            except ClientError as exc:
                if not is_not_found(exc):
                    raise
                self._models[name] = False
        return self._models[name]

    def models_existing(self, names: set[str]) -> set[str]:
        """Which of `names` exist: ListModels pages (100 models a page) while that is cheaper than a
        DescribeModel each, then a DescribeModel for each name not yet seen. Pages are read until
        every name is found or the pages read reach half the names (a name that is gone is proved
        gone only by the last page, so in a large account the rest are described instead).
        https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListModels.html (MaxResults ≤ 100)
        """
        unseen = {n for n in names if n not in self._models}
        if self._listed_all:  # every page was read earlier in this sweep: what was not listed is gone
            self._models.update(dict.fromkeys(unseen, False))
            unseen = set()
        budget = max(1, len(unseen) // 2)
        if len(unseen) > 1:
            if self._pages is None:
                self._pages = self._list_pages()
            read = 0
            try:
                for page in self._pages:  # a later chunk goes on from the next page, never re-reads one
                    read += 1
                    for m in page.get("Models", []):
                        self._models[m["ModelName"]] = True
                        unseen.discard(m["ModelName"])
                    if not page.get("NextToken"):  # the last page: every model is known
                        self._listed_all = True
                    if not unseen:
                        break
                    if read >= budget and page.get("NextToken"):
                        break
                else:  # every page read: what was not listed is gone
                    self._listed_all = True
                    self._models.update(dict.fromkeys(unseen, False))
                    unseen = set()
            except AwsError:
                self._pages = None  # a failed page ends the paginator: the next chunk starts the listing again
                raise
        for n in unseen:
            self.model_exists(n)
        return {n for n in names if self._models.get(n)}

    def components(self, names: list[str]) -> tuple[Component, ...]:
        out: list[Component] = []
        for name in names:
            try:
                ic = inference_component(self.sm, name)
            except ClientError as exc:
                if is_not_found(exc):
                    continue  # deleted since the listing
                raise
            copies = (ic.get("RuntimeConfig") or {}).get("DesiredCopyCount", 0)
            out.append(Component(name=name, variant=ic.get("VariantName", ""), copies=int(copies or 0)))
        return tuple(out)

    def details(self, r: Resource, check_models: bool = True) -> EndpointDetails:
        """Type, variants and components. `check_models`: a delete may follow, so whether its models
        exist is to be checked (`models_checked` False until _check_models has done it, in bulk)."""
        facts = r.facts_as(EndpointFacts)
        config_name = facts.config or ""
        config = self.config(config_name) if config_name else None
        specs = tuple(_spec(v) for v in (config.get("ProductionVariants", []) if config else []))
        component_names = list(facts.components)
        if component_names or any(not s.model and not s.serverless for s in specs):
            kind = COMPONENTS
        elif config and config.get("AsyncInferenceConfig"):
            kind = ASYNC
        elif facts.serverless or (specs and all(s.serverless for s in specs)):
            kind = SERVERLESS
        else:
            kind = CLASSIC
        components = self.components(component_names) if kind == COMPONENTS else ()
        return EndpointDetails(
            type=kind,
            config_name=config_name,
            config_exists=config is not None,
            variants=specs,
            components=components,
            models_checked=not (check_models and kind == CLASSIC and config is not None),
        )


def _spec(variant: ProductionVariant) -> VariantSpec:
    scaling = variant.get("ManagedInstanceScaling") or ManagedInstanceScaling()
    managed_min = int(scaling.get("MinInstanceCount", 1)) if scaling.get("Status") == "ENABLED" else None
    return VariantSpec(
        name=variant["VariantName"],
        instance_type=variant.get("InstanceType"),
        initial_count=int(variant.get("InitialInstanceCount") or 0),
        model=variant.get("ModelName"),
        managed_min=managed_min,
        serverless=bool(variant.get("ServerlessConfig")),
    )


def _complete(r: Resource, details: EndpointDetails, pricer: Pricer) -> None:
    """The resource as the message shows it: its details, instance types and what it costs an hour."""
    facts = r.facts_as(EndpointFacts)
    r.facts = replace(facts, details=details)
    current = {v.name: v.current for v in facts.variants}
    types = [v.instance_type for v in details.variants if v.instance_type]
    r.instance_type = " + ".join(sorted(set(types))) or None
    variants = [v for v in details.variants if v.instance_type]
    prices = [pricer.hourly(pricing.HOSTING, r.region, v.instance_type, current.get(v.name, 0)) for v in variants]
    r.set_price(total(prices))


_NONE = EndpointSignal(start=datetime.min, end=datetime.min)


def _floor5(t: datetime) -> datetime:
    return t.replace(minute=t.minute - t.minute % 5, second=0, microsecond=0)

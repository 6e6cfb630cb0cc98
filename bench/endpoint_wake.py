"""The endpoint judgment bench: eight dev endpoints with labelled traffic, 14 days of the same rhythm, then
a sweep every 15 minutes (the stack's EndpointSchedule) for 48 hours through the pipeline's decision
(tags, the kind's rule, production guard, grace). The Scheduler's wake runs on time: at `wake_at` the
restore starts and the endpoint is InService STARTUP later; a call before then is a disruption. The
restore record the wake leaves gives the next sweep the measured start-up (rules.wake_lead).

    .venv/bin/python bench/endpoint_wake.py [--out bench/results/endpoint-wake.json]

Figures, per configuration (default: what Settings gives when the stack wires the restore function):
  disruptions         bursts of calls that found their periodic endpoint not InService (and the periods)
  share               reclaimable idle endpoint-hours at zero / reclaimable ones. Reclaimable: a 5-minute
                      period with no call in it, nor within the start-up after it (a perfect reaper that
                      disrupts nobody has it coming back then): what could be at zero
  idle_window_share   the earlier replay's measure: periods with no call in the idle window before them
  prewarm_hours       up (starting, or InService before its burst) because a wake brought it back
  schedules           one-off Scheduler schedules made (a month: x 30 / 2)
  prewarm_usd         the pre-warm hours at the Pricer's hourly price of the endpoint's instance
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reaper import kinds
from reaper.aws import pricing
from reaper.aws.pricing import Pricer
from reaper.core.model import Resource, Verdict
from reaper.core.rhythm import learn_bursts
from reaper.core.settings import Settings
from reaper.core.timeutil import iso, parse_instant
from reaper.kinds.endpoint.model import PERIOD, EndpointDetails, EndpointFacts, EndpointSignal, VariantSpec, VariantSummary, WakeTrail
from reaper.kinds.endpoint.rules import BURST_TAIL, may_act
from reaper.kinds.endpoint.settings import EndpointSettings
from reaper.sweep.pipeline import decide

START = datetime(2026, 11, 17, 0, 0, tzinfo=UTC)  # a Tuesday
HOURS = 48
STEP = timedelta(minutes=15)  # EndpointSchedule: rate(15 minutes)
STARTUP = timedelta(minutes=8)  # CreateEndpoint to InService of the bench's ml.g5.xlarge model (modelled)
INSTANCE = "ml.g5.xlarge"
REGION = "us-east-1"


def _between(t: datetime, start: tuple[int, int], minutes: int) -> bool:
    begin = t.replace(hour=start[0], minute=start[1], second=0, microsecond=0)
    return begin <= t < begin + timedelta(minutes=minutes)


TRAFFIC: dict[str, tuple[bool, Callable[[datetime], bool]]] = {  # name: (periodic, calls in the 5-minute period from t)
    "office-api": (True, lambda t: t.weekday() < 5 and 9 <= t.hour < 17),
    "twice-a-day-demo": (True, lambda t: _between(t, (10, 0), 30) or _between(t, (15, 0), 30)),
    "nightly-batch": (True, lambda t: _between(t, (2, 0), 45)),
    "six-hourly-refresh": (True, lambda t: t.hour % 6 == 0 and t.minute < 20),
    "weekday-report": (True, lambda t: t.weekday() < 5 and _between(t, (7, 0), 30)),
    "forgotten-tutorial": (False, lambda t: t == START - timedelta(days=13, hours=-14)),
    "always-busy": (False, lambda t: True),
    "never-called": (False, lambda t: False),
}


@dataclass
class Replayed:
    name: str
    state: str = "up"  # up, zero, starting
    changed_at: datetime = START - timedelta(days=30)
    wake_at: datetime | None = None
    ready_at: datetime | None = None  # starting: InService then
    woken: bool = False  # up because a wake brought it back, and its burst has not begun
    startup: timedelta | None = None  # what its last restore record says
    in_disruption: bool = False
    warned_at: datetime | None = None  # the reaper:warned-at tag the grace reads (a recreated endpoint has none)
    record: dict[str, datetime] = field(default_factory=dict)  # its last restore record: rhythm_warned_at, usual_start, woken, restored
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n


def _calls(name: str) -> Callable[[datetime], bool]:
    return TRAFFIC[name][1]


def history(name: str, hours: int = HOURS) -> list[tuple[datetime, float]]:
    """Invocations every 5 minutes from 14 days before the replay to its end (a sweep learns only the past)."""
    calls, first = _calls(name), START - timedelta(days=14)
    periods = [first + PERIOD * k for k in range((14 * 24 + hours) * 12)]
    return [(t, 3.0) for t in periods if calls(t)]


def _resource(e: Replayed, settings: Settings) -> Resource:
    facts = EndpointFacts(config=f"{e.name}-cfg", variants=(VariantSummary("AllTraffic", 1, 1),))
    return Resource(
        "endpoint",
        e.name,
        f"arn:aws:sagemaker:{REGION}:123456789012:endpoint/{e.name}",
        REGION,
        "InService",
        tags={"ml:stage": "dev", "ml:owner": "ana@example.com", **({settings.tag("warned-at"): iso(e.warned_at)} if e.warned_at else {})},
        created_at=e.changed_at,
        changed_at=e.changed_at,
        facts=facts,
    )


def _signal(e: Replayed, series: list[tuple[datetime, float]], settings: Settings, now: datetime) -> EndpointSignal:
    """What signals.signals reads, as it reads it: 180 minutes of traffic; the bursts learned only when it
    was quiet for BURST_TAIL; the configuration only when may_act; the start-up from its restore record."""
    start = now - timedelta(minutes=180)
    traffic = [(t, v) for t, v in series if start <= t < now]
    sig = EndpointSignal(start=start, end=now, traffic=traffic)
    if settings.of(EndpointSettings).endpoint_learned_wake and not any(t + PERIOD > now - BURST_TAIL for t, _v in traffic):
        past = [(t, v) for t, v in series if now - timedelta(days=14) <= t < now]
        sig = EndpointSignal(start=start, end=now, traffic=traffic, rhythm=learn_bursts(past, now))
    if not may_act(_resource(e, settings), sig, settings, now):
        return sig
    spec = VariantSpec("AllTraffic", INSTANCE, 1, f"{e.name}-model", None)
    details = EndpointDetails(type="classic", config_name=f"{e.name}-cfg", config_exists=True, variants=(spec,))
    woken = _trail(e, series, now) if sig.rhythm is not None else None  # signals._trail: read with its two weeks
    return EndpointSignal(start=start, end=now, traffic=traffic, details=details, rhythm=sig.rhythm, startup=e.startup, woken=woken)


def _trail(e: Replayed, series: list[tuple[datetime, float]], now: datetime) -> WakeTrail | None:
    """What signals._trail reads from its restore record: the wake that brought it back, after its rhythm's warning."""
    rec = e.record
    if not {"rhythm_warned_at", "usual_start", "woken", "restored"} <= rec.keys():
        return None
    calls = tuple(t for t, v in series if v > 0 and t + PERIOD > rec["woken"] and t < now)
    return WakeTrail(rec["rhythm_warned_at"], rec["usual_start"], rec["woken"], rec["restored"], calls)


def _period(e: Replayed, t: datetime, reclaimable: bool, window_idle: bool) -> None:
    """One 5-minute period: the wake fires, the restore finishes, calls arrive (or find it down), counted."""
    if e.state == "zero" and e.wake_at is not None and e.wake_at <= t:
        e.record["woken"] = e.wake_at
        e.state, e.ready_at, e.wake_at, e.woken = "starting", e.wake_at + STARTUP, None, True
        e.add("wakes")
    if e.state == "starting" and e.ready_at is not None and e.ready_at <= t:
        e.state, e.changed_at, e.startup = "up", e.ready_at, STARTUP  # the restore record: started, then InService
        e.record["restored"] = e.ready_at
    called = _calls(e.name)(t)
    if called:
        e.woken = False
    if called and e.state != "up":
        e.add("disrupted_periods")
        if not e.in_disruption:
            e.add("disruptions")
    e.in_disruption = called and e.state != "up"
    e.add("reclaimable", reclaimable)
    e.add("reclaimed", reclaimable and e.state == "zero")
    e.add("window_idle", window_idle)
    e.add("window_idle_zero", window_idle and e.state == "zero")
    e.add("prewarm", e.woken and e.state != "zero" and not called)


def _sweep(kind: kinds.Kind, e: Replayed, series: list[tuple[datetime, float]], settings: Settings, now: datetime) -> None:
    decision, _view = decide(kind, _resource(e, settings), _signal(e, series, settings, now), settings, now)
    if decision.newly_warned:  # the grace: warned now, acted on at a sweep GraceMinutes later if still reapable
        e.warned_at = now
    if decision.clear_warning:
        e.warned_at = None
    if decision.verdict is not Verdict.ACT:
        return
    e.warned_at = None
    e.add("zeroed_in_traffic", _calls(e.name)(now) or _calls(e.name)(now - PERIOD))
    e.state, e.woken = "zero", False
    wake = decision.evidence.get("wake_at")
    warned, usual = decision.evidence.get("rhythm_warned_at") or decision.evidence.get("warned_at"), decision.evidence.get("usual_start")
    e.record = (
        {"rhythm_warned_at": parse_instant(str(warned)), "usual_start": parse_instant(str(usual))} if wake and warned and usual else {}
    )
    e.wake_at = parse_instant(str(wake)) if wake else None
    e.add("schedules", wake is not None)


def replay(settings: Settings, warmup_hours: int = 0) -> dict[str, Replayed]:
    """HOURS of sweeps, counted; after `warmup_hours` of sweeps not counted (0: counted from the deploy, so every
    endpoint's first warning and grace fall in it; a day: the steady state, each rhythm warned of once already)."""
    kind = kinds.get("endpoint")
    state = {name: Replayed(name) for name in TRAFFIC}
    series = {name: history(name, HOURS + warmup_hours) for name in TRAFFIC}
    ahead = math.ceil(STARTUP / PERIOD)
    window = settings.idle_for("endpoint") // 5
    t, counted, end = START, START + timedelta(hours=warmup_hours), START + timedelta(hours=HOURS + warmup_hours)
    while t < end:
        if t == counted:
            for e in state.values():
                e.counts.clear()
        for e in state.values():
            calls = _calls(e.name)
            reclaimable = not any(calls(t + PERIOD * k) for k in range(ahead + 1))
            window_idle = not any(calls(t - PERIOD * k) for k in range(window))
            _period(e, t, reclaimable, window_idle)
            if (t - START) % STEP == timedelta(0) and e.state == "up":
                _sweep(kind, e, series[e.name], settings, t)
        t += PERIOD
    return state


def figures(state: dict[str, Replayed], pricer: Pricer | None = None) -> dict[str, Any]:
    def total(key: str, periodic_only: bool = False) -> int:
        return sum(e.counts.get(key, 0) for e in state.values() if TRAFFIC[e.name][0] or not periodic_only)

    price = (pricer or Pricer.shipped_only()).hourly(pricing.HOSTING, REGION, INSTANCE)
    prewarm_hours = total("prewarm") / 12
    return {
        "disruptions": total("disruptions", periodic_only=True),
        "disrupted_periods": total("disrupted_periods", periodic_only=True),
        "zeroed_in_traffic": total("zeroed_in_traffic"),
        "reclaimable_hours": total("reclaimable") / 12,
        "reclaimed_hours": total("reclaimed") / 12,
        "share": total("reclaimed") / total("reclaimable"),
        "idle_window_share": total("window_idle_zero") / total("window_idle"),
        "prewarm_hours": prewarm_hours,
        "prewarm_usd": None if price is None else round(prewarm_hours * price.usd, 2),
        "price_source": None if price is None else f"{price.source} ({price.as_of})",
        "schedules": total("schedules"),
        "schedules_a_month": total("schedules") * 30 // (HOURS // 24),
        "wakes": total("wakes"),
        "per_endpoint": {e.name: dict(sorted(e.counts.items())) for e in state.values()},
    }


WIRED = {
    "restore_function_arn": f"arn:aws:lambda:{REGION}:123456789012:function:restore",
    "scheduler_role_arn": "arn:aws:iam::123456789012:role/scheduler",
}


def configurations() -> dict[str, Settings]:
    """The default (as the stack deploys it: the restore function wired) acting at once, and with the
    default grace (60 min: warned, then acted on an hour later; the rhythm's warning given once: grace.py),
    from the deploy and in the steady state (WARMUP); learned wake turned off."""
    return {
        "default": Settings(mode="enforce", grace_minutes=0).with_kind(EndpointSettings(**WIRED)),
        "default_grace_60": Settings(mode="enforce").with_kind(EndpointSettings(**WIRED)),
        "default_steady": Settings(mode="enforce", grace_minutes=0).with_kind(EndpointSettings(**WIRED)),
        "default_grace_60_steady": Settings(mode="enforce").with_kind(EndpointSettings(**WIRED)),
        "learned_wake_off": Settings(mode="enforce", grace_minutes=0).with_kind(EndpointSettings(endpoint_learned_wake=False, **WIRED)),
    }


# hours of sweeps before the counted HOURS: the steady state, after the day in which each endpoint got its first warning
WARMUP = {"default_steady": 24, "default_grace_60_steady": 24}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results/endpoint-wake.json")
    args = parser.parse_args()
    out = {name: figures(replay(settings, WARMUP.get(name, 0))) for name, settings in configurations().items()}
    for name, f in out.items():
        print(
            f"{name}: {f['disruptions']} disruptions ({f['disrupted_periods']} periods), share {f['share']:.1%} "
            f"({f['reclaimed_hours']:.1f} of {f['reclaimable_hours']:.1f} h), idle-window share {f['idle_window_share']:.1%}, "
            f"pre-warm {f['prewarm_hours']:.1f} h = ${f['prewarm_usd']}, {f['schedules']} schedules"
        )
    Path(args.out).write_text(json.dumps(out, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()

"""Notebooks warned early on strong evidence, replayed: a sweep every 15 minutes over 48 hours through
the pipeline's decision (grace included: the warning tag is written as the pipeline would)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper import kinds
from reaper.core.model import Resource, Verdict
from reaper.core.settings import Settings
from reaper.core.timeutil import iso
from reaper.kinds.notebook.model import PERIOD, ActivitySignal, NotebookFacts, align
from reaper.sweep.pipeline import decide

START = datetime(2026, 11, 17, 0, 0, tzinfo=UTC)
SESSIONS = {  # name: working sessions (start hour, minutes), each day, from 5 past the hour (between sweeps)
    "morning-and-afternoon": [(9, 150), (14, 180)],
    "short-bursts": [(8, 20), (10, 30), (13, 15), (16, 40), (20, 25)],
    "night-training": [(22, 300)],
    "forgotten": [],
}


def busy(name: str, t: datetime) -> bool:
    day = t.replace(hour=0, minute=0, second=0, microsecond=0)
    return any(
        d + timedelta(hours=h, minutes=5) <= t < d + timedelta(hours=h, minutes=5 + m)
        for d in (day, day - timedelta(days=1))
        for h, m in SESSIONS[name]
    )


def replay(settings: Settings) -> dict[str, float]:
    kind, lc = kinds.get("notebook"), settings.agent_lifecycle_config
    up = dict.fromkeys(SESSIONS, True)
    warned: dict[str, datetime | None] = dict.fromkeys(SESSIONS)
    counts = {"idle": 0, "reclaimed": 0, "stopped_live": 0}
    t = START
    while t < START + timedelta(hours=48):
        for name in SESSIONS:
            if busy(name, t) and not up[name]:
                up[name] = True  # its owner starts it again
            if t.minute % 15 == 0 and up[name]:
                tags = {"ml:stage": "dev"} | ({"reaper:warned-at": iso(warned[name])} if warned[name] else {})
                r = Resource(
                    "notebook", name, f"arn:aws:sagemaker:us-east-1:1:notebook-instance/{name}", "us-east-1", "InService", tags=tags
                )
                r.facts = NotebookFacts(lifecycle_config=lc)
                end = align(t)
                series = [(end - PERIOD * k, 1.0 if busy(name, end - PERIOD * k) else 0.0) for k in range(24, 0, -1)]
                d, _ = decide(kind, r, ActivitySignal(series=series, window_end=end), settings, t)
                warned[name] = t if d.newly_warned else (None if d.clear_warning else warned[name])
                if d.verdict is Verdict.ACT:
                    counts["stopped_live"] += busy(name, t) or busy(name, t - PERIOD)
                    up[name], warned[name] = False, None
            counts["idle"] += not busy(name, t) and not busy(name, t - timedelta(minutes=settings.idle_for("notebook")))
            counts["reclaimed"] += not busy(name, t) and not up[name]
        t += PERIOD
    return {"share": counts["reclaimed"] / counts["idle"], "stopped_live": counts["stopped_live"]}


def test_strong_evidence_warns_early_and_reclaims_more_idle_hours_with_no_live_work_stopped():
    # Given four notebooks with labelled sessions, enforce with the default 60 min threshold and grace
    before = replay(Settings(mode="enforce", notebook_early_warning=False))
    # When strong evidence warns early
    after = replay(Settings(mode="enforce"))
    print(f"notebook replay: before {before}, after {after}")
    # Then a larger share of the idle notebook-hours is reclaimed, and no live work was stopped
    assert after["share"] > before["share"] and after["stopped_live"] == 0 == before["stopped_live"]

"""The early warning attacked: activity inside its window, whether or not a sweep sees it, and evidence
that is not strong. Sweeps go through the pipeline's decision (grace included), the warning tag written
as the pipeline would; the contract's rules are checked at every stop."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper import kinds
from reaper.core.model import Decision, Resource, Verdict
from reaper.core.settings import Settings
from reaper.core.timeutil import iso
from reaper.kinds.notebook.model import PERIOD, ActivitySignal, NotebookFacts, align
from reaper.kinds.notebook.settings import NotebookSettings
from reaper.sweep.pipeline import decide

KIND = kinds.get("notebook")
T0 = datetime(2026, 11, 18, 10, 0, tzinfo=UTC)  # a session ends here; sweeps run from here on
ENFORCE = Settings(mode="enforce")  # threshold 60 min, grace 60 min: warned after one quiet sample
WINDOW, GRACE = timedelta(minutes=60), timedelta(minutes=60)


def notebook(warned: datetime | None, stage: str = "dev") -> Resource:
    tags = {"ml:stage": stage} | ({"reaper:warned-at": iso(warned)} if warned else {})
    r = Resource("notebook", "nb", "arn:aws:sagemaker:us-east-1:1:notebook-instance/nb", "us-east-1", "InService", tags=tags)
    r.facts = NotebookFacts(lifecycle_config=ENFORCE.of(NotebookSettings).agent_lifecycle_config)
    return r


def signal(t: datetime, busy: set[datetime], missing: frozenset[datetime] = frozenset()) -> ActivitySignal:
    """The agent's samples up to the sweep at t: busy periods 1, the others 0, the missing ones absent."""
    end = align(t)
    periods = [end - PERIOD * k for k in range(36, 0, -1)]
    return ActivitySignal([(p, 1.0 if p in busy else 0.0) for p in periods if p not in missing], end)


def run(
    busy: set[datetime], every: timedelta, hours: int = 4, settings: Settings = ENFORCE
) -> list[tuple[datetime, Decision, datetime | None]]:
    """Sweeps every `every` from T0 until the notebook is stopped: (time, decision, the warning it stood on)."""
    warned: datetime | None = None
    out = []
    t = T0
    while t < T0 + timedelta(hours=hours):
        d, _ = decide(KIND, notebook(warned), signal(t, busy), settings, t)
        out.append((t, d, warned))
        if d.verdict is Verdict.ACT:
            break
        warned = t if d.newly_warned else (None if d.clear_warning else warned)
        t += every
    return out


def session_before(start: datetime) -> set[datetime]:
    return {start - PERIOD * k for k in range(1, 13)}  # an hour of work that ends at `start`


@pytest.mark.parametrize("every", [15, 30, 60, 90], ids=lambda m: f"sweep every {m} min")
@pytest.mark.parametrize("burst_at", range(5, 60, 5), ids=lambda m: f"burst {m} min after the warning")
def test_a_burst_inside_the_early_warning_window_is_never_stopped_before_a_fresh_threshold_and_grace(every, burst_at):
    # Given a notebook warned early (one quiet sample after its session), then 5 minutes of activity
    # inside the warning's window, seen live by a sweep or not (a sweep every 15 to 90 minutes)
    busy = session_before(T0)
    cadence = timedelta(minutes=every)
    warned_at = next(t for t, d, _ in run(busy, cadence) if d.newly_warned)
    burst = align(warned_at + timedelta(minutes=burst_at))
    busy |= {burst}
    # When it is swept at that cadence
    trace = run(busy, cadence, hours=8)
    # Then no stop stands on the warning given before the burst: any stop comes a whole threshold after
    # the burst, on a warning given after it and at least a grace before the stop, never during activity
    stops = [(t, warned) for t, d, warned in trace if d.verdict is Verdict.ACT]
    for t, warned in stops:
        assert warned is not None and warned >= burst + PERIOD and t - warned >= GRACE
        assert t - (burst + PERIOD) >= WINDOW and align(t) - PERIOD not in busy
    # and the burst, once a sweep sees it, clears the warning given before it
    seen = [d for t, d, warned in trace if warned is not None and warned < burst + PERIOD <= t]
    assert seen and seen[0].clear_warning and seen[0].verdict is Verdict.KEEP


@pytest.mark.parametrize("gap", range(12), ids=lambda k: f"sample {k + 1} back missing")
def test_incomplete_agent_data_gets_no_early_warning(gap):
    # Given 55 quiet minutes after an hour's session, but one sample of the idle window missing
    t = T0 + timedelta(minutes=55)
    missing = frozenset({align(t) - PERIOD * (gap + 1)})
    d, _ = decide(KIND, notebook(None), signal(t, session_before(T0), missing), ENFORCE, t)
    # Then nothing is warned: a gap is unknown, and unknown is never idle (nor nearly idle)
    assert d.verdict is Verdict.KEEP and not d.newly_warned and "early_warning" not in d.evidence


def test_a_warned_notebook_whose_data_then_has_a_gap_is_not_stopped():
    # Given a notebook warned early, then one sample of its window missing when the grace is over
    busy = session_before(T0)
    t = T0 + timedelta(minutes=65)
    d, _ = decide(KIND, notebook(T0 + timedelta(minutes=5)), signal(t, busy, frozenset({align(t) - PERIOD * 3})), ENFORCE, t)
    # Then it is kept (unknown), and the warning is cleared rather than left to stand on weak evidence
    assert d.verdict is Verdict.KEEP and d.clear_warning and d.unknown == "agent-no-data"


def test_no_early_warning_for_a_production_stage_in_dry_run_or_without_the_agent():
    t = T0 + timedelta(minutes=30)
    sig = signal(t, session_before(T0))
    # production stage: notify-only, so a "would stop" before the threshold would be wrong
    d, _ = decide(KIND, notebook(None, stage="prod"), sig, ENFORCE, t)
    assert d.verdict is Verdict.EXEMPT and "early_warning" not in d.evidence and not d.notify
    d, _ = decide(KIND, notebook(None), sig, Settings(), t)  # dry-run
    assert d.verdict is Verdict.KEEP
    other = notebook(None)
    other.facts = NotebookFacts(lifecycle_config="someone-elses-config")  # no agent: its data is not evidence
    d, _ = decide(KIND, other, sig, ENFORCE, t)
    assert d.verdict is Verdict.KEEP and d.unknown == "no-agent"


def test_the_warning_given_early_stands_quietly_until_the_threshold_and_the_grace_are_both_over():
    # Given a grace of 30 min (warned at 30 quiet minutes) and sweeps every 5 minutes
    trace = run(session_before(T0), timedelta(minutes=5), settings=Settings(mode="enforce", grace_minutes=30))
    warned = [t for t, d, _ in trace if d.newly_warned]
    stop = [t for t, d, _ in trace if d.verdict is Verdict.ACT]
    # Then one warning at 30 quiet minutes, quiet warnings after it, and the stop at the threshold
    assert warned == [T0 + timedelta(minutes=30)] and stop == [T0 + WINDOW]
    assert all(d.quiet for t, d, _ in trace if warned[0] < t < stop[0])


def test_past_its_kill_date_a_notebook_warned_early_is_stopped_when_the_grace_ends_not_held_to_the_threshold():
    # Given a notebook warned 60 min ago, quiet for 10 min now, past its reaper:kill-after date
    t = T0 + timedelta(minutes=10)
    r = notebook(t - GRACE)
    r.tags["reaper:kill-after"] = iso(T0 - timedelta(days=1))
    d, _ = decide(KIND, r, signal(t, session_before(T0)), ENFORCE, t)
    # Then the kill date decides (whatever the activity), the grace being over: stopped
    assert d.verdict is Verdict.ACT and d.evidence["policy"] == "kill-date"

"""The stalled-job judgement and rule as pure functions: what counts as progress, what is unknown,
and the rule's own warning and grace on top of the kind's grace of 0."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper import kinds
from reaper.core.model import Mode, Resource, Verdict
from reaper.core.settings import Settings
from reaper.kinds.training_job.model import Cluster, JobFacts, Progress, Span, TrainingSignal
from reaper.kinds.training_job.progress import _judge, _Seen
from reaper.kinds.training_job.settings import TrainingJobSettings
from reaper.sweep.pipeline import decide

KIND = kinds.get("training-job")
NOW = datetime(2026, 12, 2, 14, 7, tzinfo=UTC)
DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev", "ml:project": "vision"}
ENFORCE = Settings(mode=Mode.ENFORCE, grace_minutes=30).with_kind(TrainingJobSettings(stalled_job_action="stop"))


def transform(tags: dict[str, str] | None = None) -> Resource:
    start = NOW - timedelta(hours=3)
    c = Cluster("ml.m5.xlarge", 1, None, unpriced=("ml.m5.xlarge (batch transform)",))
    return Resource(
        kind="training-job", id="x", arn="arn:aws:sagemaker:us-east-1:123456789012:transform-job/x", region="us-east-1",
        state="InProgress", tags={**DEV, **(tags or {})}, instance_type="ml.m5.xlarge", instance_count=1, hourly_usd=None,
        facts=JobFacts(job_type="transform", started_at=start, spans=(Span(start, None, None),), cluster=c),
    )  # fmt: skip


STALLED = TrainingSignal(progress=Progress(60, True, NOW - timedelta(hours=2), 1, 0.4, 1))


def test_a_job_that_logs_or_computes_is_not_stalled_and_one_with_neither_source_is_unknown():
    assert _judge(_Seen(busiest=0.5, hosts=1, streams=1, logged=True), 60).stalled is False  # slow, but it logs
    assert _judge(_Seen(busiest=40.0, hosts=1, streams=1), 60).stalled is False  # silent, but it computes
    assert _judge(_Seen(busiest=1.0, hosts=1, streams=2), 60).stalled is True
    # no metric published: unknown, its logs not read (docs/performance.md: logs only for jobs the metrics call quiet)
    assert _judge(_Seen(streams=1), 60).stalled is None
    unknown = _judge(_Seen(), 60)
    assert unknown.stalled is None and unknown.error is not None and "unknown" in unknown.error
    failed = _judge(_Seen(busiest=1.0, hosts=1, error="logs unreadable (ThrottlingException)"), 60)
    assert failed.stalled is None and failed.error == "logs unreadable (ThrottlingException)"


def test_with_the_opt_in_a_stalled_job_is_warned_then_stopped_once_the_grace_has_passed():
    # first sweep: a warning, although the kind's own grace is 0
    first, _ = decide(KIND, transform(), STALLED, ENFORCE, NOW)
    assert first.verdict is Verdict.WARN and first.newly_warned and first.action == "stop"
    assert "no new log event in its 1 log stream(s)" in first.reason and "will stop in 30 min" in first.reason
    # within the grace: still a quiet warning
    warned = {"reaper:warned-at": (NOW - timedelta(minutes=10)).isoformat()}
    within, _ = decide(KIND, transform(warned), STALLED, ENFORCE, NOW)
    assert within.verdict is Verdict.WARN and within.quiet and not within.newly_warned
    # past the grace: stopped
    past = {"reaper:warned-at": (NOW - timedelta(minutes=31)).isoformat()}
    acted, _ = decide(KIND, transform(past), STALLED, ENFORCE, NOW)
    assert acted.verdict is Verdict.ACT and acted.action == "stop"
    # progress in between: kept, and the warning cleared
    moving = TrainingSignal(progress=Progress(60, False, NOW - timedelta(minutes=2), 1, 35.0, 1))
    kept, _ = decide(KIND, transform(past), moving, ENFORCE, NOW)
    assert kept.verdict is Verdict.KEEP and kept.clear_warning


def test_without_the_opt_in_a_stalled_job_is_told_and_kept_and_unknown_progress_is_never_a_stall():
    told, _ = decide(KIND, transform(), STALLED, Settings(mode=Mode.ENFORCE), NOW)
    assert told.verdict is Verdict.KEEP and told.notify and told.notify_key == "stalled"
    unknown = TrainingSignal(progress=Progress(60, None, error="neither a log stream nor a CPU or GPU metric: progress unknown"))
    kept, _ = decide(KIND, transform(), unknown, ENFORCE, NOW)
    assert kept.verdict is Verdict.KEEP and not kept.notify


def test_a_child_held_by_its_parent_is_not_stopped_alone():
    held = TrainingSignal(progress=Progress(60, True, None, 1, 0.0, 1, parent="aml"))
    decision, _ = decide(KIND, transform(), held, ENFORCE, NOW)
    assert decision.verdict is Verdict.KEEP and "as its parent aml" in decision.reason

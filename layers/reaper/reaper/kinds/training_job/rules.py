"""The training-job guard's decision for one running job. Pure: (job, evidence, tags, settings, now).

Stop (verdict act, action stop) when a job is past its runtime or cost ceiling, or, for a
training job, when it diverged (a metric or a nan/inf loss in its log). Otherwise keep, with a
notify-only message when something is worth telling: a ceiling passed its warning share (80 %
by default), a cost ceiling set by tag that cannot be judged, GPUs starved of data. Each such
message is posted once per set of findings (notify_key), so each finding is told once and is
repeated only as context when a new one joins it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from reaper.core.model import Decision, Resource, Verdict
from reaper.core.policy import TagView
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc, human_duration, iso
from reaper.kinds.training_job import ActionName
from reaper.kinds.training_job.checkguard import checkpoint_checks
from reaper.kinds.training_job.cost import estimate, hours
from reaper.kinds.training_job.divergence import MAX, MIN, Finding, direction_of, diverged
from reaper.kinds.training_job.gpu import idle_gpus
from reaper.kinds.training_job.model import RUNNING, WHAT, JobFacts, TrainingSignal
from reaper.kinds.training_job.plateau import Plateau, plateau
from reaper.kinds.training_job.settings import TrainingJobSettings
from reaper.kinds.training_job.signals import METRIC_LOOKBACK
from reaper.kinds.training_job.spot import spot_advice
from reaper.kinds.training_job.stalled import stall_decision, stall_evidence, stall_note, warned_first
from reaper.kinds.training_job.starved import input_advice, smaller_family
from reaper.kinds.training_job.warmpool import warm_pool_decision


@dataclass(frozen=True)
class Ceilings:
    hours: float
    max_hours: float
    hours_source: str
    usd: float | None
    max_usd: float
    usd_source: str
    usd_tagged: bool
    hours_tagged: bool


def ceilings(facts: JobFacts, view: TagView, settings: Settings, now: datetime) -> Ceilings:
    return Ceilings(
        hours=hours(facts.started_at, None, now),
        max_hours=view.max_hours or settings.max_hours,
        hours_source=f"tag {settings.tag('max-hours')}" if view.max_hours else "the stack default",
        usd=estimate(facts.spans, now),
        max_usd=view.max_usd or settings.max_usd,
        usd_source=f"tag {settings.tag('max-usd')}" if view.max_usd else "the stack default",
        usd_tagged=view.max_usd is not None,
        hours_tagged=view.max_hours is not None,
    )


@dataclass
class Findings:
    """What the steps of one decision found, in the order they were found."""

    evidence: dict[str, object]  # the figures behind the reason (Decision.evidence): free-form by design, shown as JSON
    stop: list[str] = field(default_factory=list)
    default_stop: list[str] = field(default_factory=list)  # past a ceiling the job does not carry: the stack's default
    notes: list[tuple[str, str]] = field(default_factory=list)  # (notify key, text)
    upper_bound: list[str] = field(default_factory=list)  # managed spot past the ceiling on the on-demand estimate alone
    summary: str = ""
    plateau: Plateau | None = None  # converged or flat: every watched metric stopped improving


def decide(resource: Resource, signal: TrainingSignal | None, view: TagView, settings: Settings, now: datetime) -> Decision:
    facts = resource.facts_as(JobFacts)
    if facts.warm_pool is not None and resource.state != RUNNING:
        return warm_pool_decision(resource, facts, view, settings, now)
    if resource.state != RUNNING:
        return Decision(Verdict.KEEP, f"{WHAT[facts.job_type]} not running ({resource.state})")
    c = ceilings(facts, view, settings, now)
    found = Findings(_evidence(resource, facts, c))
    _runtime_ceiling(found, c, settings)
    c = _spot_billed(found, facts, c)
    _cost_ceiling(found, resource, facts, c, settings)
    _tuning_notes(found, facts, view, settings)
    if facts.job_type == "training":
        _training_checks(found, resource, signal, view, settings, now)
        checkpoint_checks(found.evidence, found.stop, found.notes, facts, signal.checkpoint if signal else None, view, settings, now)
    progress = signal.progress if signal else None
    if progress is not None and not found.stop:
        stalled = stall_decision(facts, progress, found.evidence, view, settings, now)
        if stalled is not None:
            return stalled
        note = stall_note(facts, progress, settings)
        if note is not None:
            found.evidence["stalled"] = stall_evidence(progress)
            # a stalled job is not told its data loader is slow: nothing runs (docs/kinds/training-job.md#gpu-advisory)
            found.notes = [n for n in found.notes if n[0] != "gpu-idle"]
            found.evidence.pop("gpu", None)
            found.notes.append(note)
    if found.plateau is not None and not found.stop:
        stop = _plateau_finding(found, found.plateau, resource, view, settings, now)
        if stop is not None:
            return stop
    return _conclude(found, facts, resource, c, settings)


def _plateau_finding(found: Findings, p: Plateau, resource: Resource, view: TagView, settings: Settings, now: datetime) -> Decision | None:
    """A converged or flat run: told, or (opted in) warned then stopped after the grace."""
    text = p.text(resource.hourly_usd, now)
    if view.early_stop == "converged" or settings.of(TrainingJobSettings).converged_job_action == "stop":
        how = f"tag {settings.tag('early-stop')}=converged" if view.early_stop == "converged" else "ConvergedJobAction=stop"
        return warned_first(
            text + f" ({how})", ActionName.STOP, "unless it improves again", found.evidence, view, settings.grace_minutes, now, always=True
        )
    found.notes.append(
        ("flat" if p.flat else "converged", f"{text}. Told only: it bills until it ends; tag it {settings.tag('early-stop')}=converged "
         f"to have the reaper stop it, or {settings.tag('patience')}=N / {settings.tag('min-improvement')}=F to judge it differently")
    )  # fmt: skip
    return None


def _evidence(resource: Resource, facts: JobFacts, c: Ceilings) -> dict[str, object]:
    evidence: dict[str, object] = {
        "job_type": facts.job_type,
        "elapsed_hours": round(c.hours, 2),
        "max_hours": c.max_hours,
        "estimated_usd": c.usd,
        "max_usd": c.max_usd,
        "estimate_is_upper_bound": facts.spot,
        "instance_type": resource.instance_type,
        "instance_count": resource.instance_count,
    }
    if facts.job_type == "tuning":
        evidence["training_jobs"] = facts.training_jobs
        evidence["early_stopping"] = facts.early_stopping
    return evidence


def _runtime_ceiling(found: Findings, c: Ceilings, settings: Settings) -> None:
    share = settings.of(TrainingJobSettings).ceiling_warn_percent / 100.0
    if c.hours >= c.max_hours:
        (found.stop if c.hours_tagged or settings.of(TrainingJobSettings).training_default_ceilings_act else found.default_stop).append(
            f"ran {human_duration(c.hours * 60)}, past its {c.max_hours:g} h runtime ceiling ({c.hours_source})"
        )
    elif c.hours >= share * c.max_hours:
        found.notes.append(
            ("ceiling-80:hours", f"at {100 * c.hours / c.max_hours:.0f}% of its {c.max_hours:g} h runtime ceiling after "
             f"{human_duration(c.hours * 60)}: it will be stopped at {c.max_hours:g} h unless {settings.tag('max-hours')} is raised")
        )  # fmt: skip


def _spot_billed(found: Findings, facts: JobFacts, c: Ceilings) -> Ceilings:
    cl = facts.cluster
    if facts.spot and c.usd is not None and facts.billable_s is not None and cl.hourly_usd is not None:
        # Managed spot bills BillableTimeInSeconds at spot rates, not wall time at on-demand:
        # https://docs.aws.amazon.com/sagemaker/latest/dg/model-managed-spot-training.html
        billed = round(facts.billable_s / 3600.0 * cl.hourly_usd, 2)
        found.evidence["billable_seconds"] = facts.billable_s
        found.evidence["estimated_usd_billable"] = billed
        return replace(c, usd=billed)
    return c


def _cost_ceiling(found: Findings, resource: Resource, facts: JobFacts, c: Ceilings, settings: Settings) -> None:
    spot = facts.spot
    share = settings.of(TrainingJobSettings).ceiling_warn_percent / 100.0
    if c.usd is None:
        unpriced = ", ".join(facts.cluster.unpriced) if facts.cluster.unpriced else "its instance type"
        found.evidence["unpriced"] = unpriced
        if c.usd_tagged:
            found.notes.append(
                ("no-price", f"its cost ceiling ({settings.tag('max-usd')}={c.max_usd:g}) cannot be judged: no list price for "
                 f"{unpriced} in {resource.region} (the runtime ceiling still holds)")
            )  # fmt: skip
        return
    basis = _basis(resource, facts)
    if c.usd >= c.max_usd and spot and facts.billable_s is None:
        found.upper_bound.append(
            f"the on-demand estimate ${c.usd:,.2f} is past its ${c.max_usd:,.2f} cost ceiling ({c.usd_source}; {basis}), but it is "
            f"managed spot: it is billed for its billable time at spot rates, which SageMaker has not reported yet, so the estimate is "
            f"an upper bound and the job is not stopped on it (the runtime ceiling still holds)"
        )
    elif c.usd >= c.max_usd:
        (found.stop if c.usd_tagged or settings.of(TrainingJobSettings).training_default_ceilings_act else found.default_stop).append(
            f"estimated cost ${c.usd:,.2f} is past its ${c.max_usd:,.2f} cost ceiling ({c.usd_source}; {basis})"
        )
    elif c.usd >= share * c.max_usd:
        found.notes.append(
            ("ceiling-80:usd", f"estimated cost ${c.usd:,.2f} is {100 * c.usd / c.max_usd:.0f}% of its ${c.max_usd:,.2f} cost ceiling "
             f"({basis}): " + ("as managed spot it is not stopped on this upper bound" if spot and facts.billable_s is None
                               else f"it will be stopped at ${c.max_usd:,.2f} unless {settings.tag('max-usd')} is raised"))
        )  # fmt: skip


def _tuning_notes(found: Findings, facts: JobFacts, view: TagView, settings: Settings) -> None:
    if facts.job_type == "tuning" and facts.early_stopping == "Off" and view.early_stop != "median":
        # https://docs.aws.amazon.com/sagemaker/latest/dg/automatic-model-tuning-early-stopping.html
        found.notes.append(
            ("early-stopping-off", "early stopping is off (TrainingJobEarlyStoppingType=Off): every training job it launches runs to "
             "the end, losing or not. Set it to Auto on the next tuning job, or tag this one "
             f"{settings.tag('early-stop')}=median to have the reaper stop children losing to the median of their siblings")
        )  # fmt: skip


def _training_checks(
    found: Findings, resource: Resource, signal: TrainingSignal | None, view: TagView, settings: Settings, now: datetime
) -> None:
    """Divergence, a losing sweep child and starved GPUs: what only a training job's evidence shows."""
    diverged_texts, found.summary, div_evidence = divergence(signal, view, settings)
    found.evidence.update(div_evidence)
    found.stop.extend(diverged_texts)
    check = signal.early_stop if signal else None
    if check is not None:
        found.evidence["early_stop"] = {
            "tuning_job": check.tuning_job, "metric": check.metric, "direction": check.direction, "evaluation": check.evaluation,
            "value": check.value, "median": check.median, "siblings": dict(check.siblings), "losing": check.losing,
            "leading": check.leading,
        }  # fmt: skip
        if check.losing:
            found.stop.append(check.text())
    if not found.stop and signal is not None:
        found.plateau = _plateaued(resource, signal, view, settings, now)
        if found.plateau is not None:
            found.evidence["plateau"] = _plateau_evidence(found.plateau, resource.hourly_usd, now)
    own = settings.of(TrainingJobSettings)
    advice = idle_gpus(
        signal.gpu if signal else {}, resource.instance_type, signal.window_end or now if signal else now,
        own.gpu_idle_minutes, own.gpu_idle_percent,
    )  # fmt: skip
    if advice is not None and not found.stop:
        found.evidence["gpu"] = {"mean_percent": round(advice.mean, 1), "highest_percent": round(advice.highest, 1), "hosts": advice.hosts}
        facts = resource.facts_as(JobFacts)
        tips = [input_advice(facts.inputs)]
        if advice.per_gpu and (smaller := smaller_family(resource.instance_type, resource.instance_count, resource.region, advice.mean)):
            tips.append(smaller)
        found.notes.append(("gpu-idle", f"{advice.text(own.gpu_idle_percent)}: " + "; ".join(tips)))


def _conclude(found: Findings, facts: JobFacts, resource: Resource, c: Ceilings, settings: Settings) -> Decision:
    """One decision from the findings: stop, a default ceiling told, notes told, spot advice, or keep."""
    evidence = found.evidence
    if found.stop:
        return Decision(Verdict.ACT, "; ".join(found.stop), action=ActionName.STOP, evidence=evidence)
    if found.default_stop:
        # docs/safety.md, item 10: account-wide defaults that would stop work the owner did not ask to be
        # stopped notify only, unless the admin opts in (TrainingDefaultCeilingsAct).
        how = (
            f"nothing is stopped: the job carries no ceiling tag and the stack's default ceilings are notify-only. "
            f"Tag it {settings.tag('max-hours')}=N or {settings.tag('max-usd')}=N to have it stopped at a ceiling of its own"
        )
        return Decision(
            Verdict.KEEP,
            "; ".join(found.default_stop) + f" — {how}",
            evidence={**evidence, "default_ceiling": True},
            notify=True,
            notify_key="default-ceiling",
        )
    notes = list(found.notes)
    if found.upper_bound:
        notes.append(("spot-upper-bound", "; ".join(found.upper_bound)))
    if notes:
        notes.sort()
        return Decision(
            Verdict.KEEP,
            "; ".join(text for _, text in notes),
            evidence=evidence,
            notify=True,
            notify_key="+".join(key for key, _ in notes),
        )
    spot_tip = spot_advice(facts, resource.hourly_usd, c.hours)
    if spot_tip is not None:
        # The least urgent finding: told on its own, once, when there is nothing more pressing to say.
        return Decision(
            Verdict.KEEP,
            f"{_within(c, found.summary)}. Spot: {spot_tip.text}",
            evidence={**evidence, "spot_advice": spot_tip.evidence},
            notify=True,
            notify_key="spot-advice",
        )
    return Decision(Verdict.KEEP, _within(c, found.summary), evidence=evidence)


def _basis(resource: Resource, facts: JobFacts) -> str:
    cl = facts.cluster
    if facts.job_type == "tuning":
        text = f"{facts.training_jobs} training jobs on {cl.instance_type or '?'}"
    else:
        per_hour = f"${cl.hourly_usd:,.2f}/h" if cl.hourly_usd is not None else "?"
        source = f", {cl.price.label}" if cl.price is not None else ""  # where the figure comes from: docs/prices.md
        text = f"{resource.instance_count} x {resource.instance_type} at {per_hour} list price{source}"
    if cl.lower_bound:
        text += ", the cheapest of its instance configs: a lower bound"
    if facts.spot and facts.billable_s is not None:
        text += f"; managed spot: {facts.billable_s:,} billable seconds at the on-demand price, an upper bound of the spot bill"
    elif facts.spot:
        text += "; managed spot: this on-demand estimate is an upper bound"
    return text


def _within(c: Ceilings, summary: str) -> str:
    cost = f"est. ${c.usd:,.2f} of ${c.max_usd:,.2f}" if c.usd is not None else "cost not judged (no list price)"
    text = f"within its ceilings: {human_duration(c.hours * 60)} of {c.max_hours:g} h, {cost}"
    return f"{text}; {summary}" if summary else text


def divergence(signal: TrainingSignal | None, view: TagView, settings: Settings) -> tuple[list[str], str, dict[str, object]]:
    """(reasons to stop, a one-line summary when healthy, evidence)."""
    evidence: dict[str, object] = {}
    stop: list[str] = []
    if signal is None:
        return stop, "no training metrics read", evidence
    if signal.nan_lines:
        hit = signal.nan_lines[0]
        evidence["nan_lines"] = [{"stream": h.stream, "at": iso(h.at), "text": h.excerpt} for h in signal.nan_lines]
        stop.append(f"nan/inf loss in its log: {hit.excerpt!r} (stream {hit.stream}, {iso(hit.at)})")
    if signal.metrics_error:
        return stop, f"training metrics unreadable ({signal.metrics_error}): divergence not judged", evidence
    watched = _watched(signal, view)
    if view.watch_metric and not watched:
        return stop, f"watched metric {view.watch_metric[0]} not reported yet", evidence
    findings = [f for metric, direction in sorted(watched) if (f := _diverged(signal, metric, direction, settings)) is not None]
    if findings:
        evidence["diverged"] = [
            {"metric": f.metric, "direction": f.direction, "run": f.run, "last": f.last, "best": f.best} for f in findings
        ]
        stop.extend(f.text() for f in findings)
    if not watched:
        summary = "no loss or accuracy metric in CloudWatch: divergence not judged"
    else:
        ways = {MIN: "falling", MAX: "rising"}
        summary = "no divergence in " + ", ".join(f"{m} ({ways[d]})" for m, d in sorted(watched))
    if signal.logs_error:
        summary += f"; log not fully read ({signal.logs_error})"
    return stop, summary, evidence


def _watched(signal: TrainingSignal, view: TagView) -> list[tuple[str, str]]:
    """(metric, direction) pairs to judge: the tagged one, else every loss or accuracy metric."""
    if view.watch_metric:
        name, direction = view.watch_metric
        return [(m, direction) for m in signal.metrics if m.lower() == name.lower()]
    return [(m, d) for m in signal.metrics if (d := direction_of(m)) is not None]


def _plateaued(resource: Resource, signal: TrainingSignal, view: TagView, settings: Settings, now: datetime) -> Plateau | None:
    """The plateau of the first watched metric when every watched metric is on one; None otherwise.
    A tuning job's children are judged against their siblings instead (early-stop=median), never here."""
    facts = resource.facts_as(JobFacts)
    watched = _watched(signal, view)
    if facts.tuning_job_arn or signal.metrics_error or not watched:
        return None
    end = signal.window_end or now
    saw_start = facts.started_at is not None and as_utc(facts.started_at) >= end - METRIC_LOOKBACK
    patience = view.patience or settings.of(TrainingJobSettings).converged_patience
    gain = settings.of(TrainingJobSettings).converged_min_improvement if view.min_improvement is None else view.min_improvement
    found = [plateau(m, signal.metrics.get(m, []), d, patience, gain, saw_start) for m, d in sorted(watched)]
    if any(p is None for p in found):
        return None
    return found[0]


def _plateau_evidence(p: Plateau, hourly_usd: float | None, now: datetime) -> dict[str, object]:
    hours = max(0.0, (now - p.since).total_seconds() / 3600.0)
    return {
        "metric": p.metric, "direction": p.direction, "flat": p.flat, "since": iso(p.since), "at_least": p.at_least,
        "evaluations": p.evaluations, "first": p.first, "best": p.best, "last": p.last, "patience": p.patience,
        "min_improvement": p.min_improvement, "hours_since": round(hours, 2),
        "usd_since": None if hourly_usd is None else round(hours * hourly_usd, 2),
    }  # fmt: skip


def _diverged(signal: TrainingSignal, metric: str, direction: str, settings: Settings) -> Finding | None:
    values = [v for _, v in signal.metrics.get(metric, [])]
    own = settings.of(TrainingJobSettings)
    return diverged(metric, values, direction, own.divergence_points, own.divergence_ratio)

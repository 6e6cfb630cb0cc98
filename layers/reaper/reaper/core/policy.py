"""The rules every kind shares: reading reaper tags, exemptions, production stages, grace.

All pure functions of (tags, settings, now): no AWS calls here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from reaper.core.model import Decision, KindAction, ProjectSpend, Verdict
from reaper.core.rhythm import parse_pinned
from reaper.core.settings import Settings
from reaper.core.timeutil import iso, parse_instant

TRUE_VALUES = ("true",)
FALSE_VALUES = ("false",)

# Keys under the prefix that users set, and the ones the reaper writes itself. Any other key under
# the prefix is a typo (`reaper:exmept`), and a typo must not silently lose its protection.
USER_KEYS = (
    "exempt",
    "snooze-until",
    "idle-minutes",
    "max-hours",
    "max-usd",
    "watch-metric",
    "disposable",
    "kill-after",
    "budget-usd",
    "early-stop",
    "checkpoint-minutes",
    "wake",
    "patience",
    "min-improvement",
    "keep",  # on a backup or snapshot the reaper made: never deleted by a retention (docs/kinds/storage.md)
)
REAPER_KEYS = (
    "warned-at",
    "backup-id",
    "export-task",
    "source-fs",
    "restored-from",
    "source-capacity-gib",
    "source-deployment",
    "source-security-groups",
    "source-subnets",
    "source-throughput",
    # the storage kind's (docs/kinds/storage.md): the snapshot phase 1 took of a volume, and on that
    # snapshot what the volume was, so `reaper restore vol-…` makes the same volume again
    "snapshot-id",
    "source-volume",
    "source-az",
    "source-type",
    "source-size-gib",
    "source-iops",
)
STAGE, OWNER, PROJECT = "ml:stage", "ml:owner", "ml:project"

# Sane bounds (docs/safety.md, item 2; docs/tags.md): anything outside cannot be what was meant, so it is unreadable.
IDLE_MINUTES = (5, 10_080)  # five minutes to a week
MAX_HOURS = 8_760.0  # a year
MAX_USD = 1_000_000.0
PATIENCE = (1, 10_080)  # evaluations without improvement: one to a week of 1-minute values
MIN_IMPROVEMENT = (0.0, 0.5)  # a relative fraction: past half the best value, no run would ever improve
EARLY_STOP = ("median", "converged")
THRESHOLD_TOLD = 80.0  # a project's budget share at which its owners are told
INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


@dataclass(frozen=True)
class TagView:
    """The reaper's reading of one resource's tags. `problems` lists tags that cannot be read."""

    exempt: bool = False
    snooze_until: datetime | None = None
    idle_minutes: int | None = None
    max_hours: float | None = None
    max_usd: float | None = None
    watch_metric: tuple[str, str] | None = None  # (metric name, "min" | "max")
    disposable: bool = False
    keep: bool = False  # reaper:keep=true on a backup or snapshot the reaper made: never deleted by a retention
    kill_after: datetime | None = None
    budget_usd: float | None = None
    early_stop: str | None = None  # "median" on a tuning job; "converged" on a training job: stop it once converged or flat
    patience: int | None = None  # evaluations without improvement before it is told it converged
    min_improvement: float | None = None  # the relative gain that counts as an improvement
    checkpoint_minutes: int | None = None  # a job's newest checkpoint may be this old before its owner is told
    wake: str | None = None  # an endpoint's pinned hours (`mon-fri 08:00-18:00`), read by reaper.core.rhythm.parse_pinned
    warned_at: datetime | None = None
    stage: str | None = None
    owner: str | None = None
    project: str | None = None
    problems: tuple[str, ...] = ()


def read_tags(tags: dict[str, str], settings: Settings) -> TagView:
    """Read the reaper's tags (docs/tags.md). Keys match case-insensitively; values are trimmed.

    Never raises, whatever the tags hold: what cannot be read is a problem, and a resource with a
    problem is exempt (see `screen`).
    """
    r = _TagReader(tags, settings)
    watch = r.watch_metric()  # the order problems are listed in: as before
    early_stop = r.early_stop()
    idle = r.number("idle-minutes", integer=True, low=IDLE_MINUTES[0], high=IDLE_MINUTES[1], strict=False)
    checkpoint = r.number("checkpoint-minutes", integer=True, low=IDLE_MINUTES[0], high=IDLE_MINUTES[1], strict=False)
    patience = r.number("patience", integer=True, low=PATIENCE[0], high=PATIENCE[1], strict=False)
    view = TagView(
        exempt=r.flag("exempt"),
        snooze_until=r.instant("snooze-until"),
        idle_minutes=None if idle is None else int(idle),
        max_hours=r.number("max-hours", integer=False, low=0, high=MAX_HOURS, strict=True),
        max_usd=r.number("max-usd", integer=False, low=0, high=MAX_USD, strict=True),
        watch_metric=watch,
        disposable=r.flag("disposable"),
        keep=r.flag("keep"),
        kill_after=r.instant("kill-after"),
        budget_usd=r.number("budget-usd", integer=False, low=0, high=MAX_USD, strict=True),
        early_stop=early_stop,
        checkpoint_minutes=None if checkpoint is None else int(checkpoint),
        patience=None if patience is None else int(patience),
        min_improvement=r.number("min-improvement", integer=False, low=MIN_IMPROVEMENT[0], high=MIN_IMPROVEMENT[1], strict=False),
        wake=r.wake(),
        warned_at=r.instant("warned-at"),
        stage=(r.raw(STAGE, with_prefix=False) or None),
        owner=(r.raw(OWNER, with_prefix=False) or None),
        project=(r.raw(PROJECT, with_prefix=False) or None),
    )
    return view if not r.problems else _with_problems(view, r.problems)


class _TagReader:
    """One resource's tags, keyed case-insensitively, and the problems found reading them."""

    def __init__(self, tags: dict[str, str], settings: Settings) -> None:
        self.settings = settings
        self.prefix = settings.tag_prefix.lower()
        self.problems: list[str] = []
        self.by_key: dict[str, str] = {}
        for key, value in tags.items():
            k, v = str(key).strip().lower(), str(value).strip()
            # values compare case-insensitively (docs/tags.md): `true` and ` TRUE ` under two spellings of one key agree
            ours = k.startswith(self.prefix) or k in (STAGE, OWNER, PROJECT)
            if k in self.by_key and self.by_key[k].lower() != v.lower() and ours:
                self.problems.append(
                    f"tags {key!r} and another key differing only in case have different values ({self.by_key[k]!r}, {v!r})"
                )
            self.by_key.setdefault(k, v)
        known = {self.prefix + name for name in USER_KEYS + REAPER_KEYS}
        for k in sorted(self.by_key):
            if k.startswith(self.prefix) and k not in known:
                self.problems.append(f"tag {k!r} is not a reaper tag (a typo? known: {', '.join(settings.tag(n) for n in USER_KEYS)})")

    def raw(self, name: str, with_prefix: bool = True) -> str | None:
        key = (self.prefix + name) if with_prefix else name
        value = self.by_key.get(key)
        if value is not None and value == "" and with_prefix:
            self.problems.append(f"tag {self.settings.tag(name)} has no value")
            return None
        return value

    def bad(self, name: str, value: str, expected: str) -> None:
        shown = value if len(value) <= 40 else value[:37] + "..."
        self.problems.append(f"tag {self.settings.tag(name)}={shown!r} cannot be read ({expected})")

    def flag(self, name: str) -> bool:
        value = self.raw(name)
        if value is None:
            return False
        if value.lower() in TRUE_VALUES:
            return True
        if value.lower() in FALSE_VALUES:
            return False
        self.bad(name, value, "true or false expected")
        return False

    def number(self, name: str, *, integer: bool, low: float, high: float, strict: bool) -> float | None:
        value = self.raw(name)
        if value is None:
            return None
        n: float | None
        try:
            # plain ASCII decimals only: Python's int()/float() also take `1_000` and other scripts' digits,
            # which no one types as a threshold on purpose, so they are unreadable, not a silent 1000
            n = None if not (INTEGER if integer else DECIMAL).fullmatch(value) else int(value) if integer else float(value)
        except (ValueError, OverflowError):
            n = None
        if n is None or not math.isfinite(n) or n < low or (strict and n <= low) or n > high:
            what = "an integer" if integer else "a number"
            lower = f"> {low:g}" if strict else f"from {low:g}"
            self.bad(name, value, f"{what} {lower} to {high:,g} expected")
            return None
        return n

    def instant(self, name: str) -> datetime | None:
        value = self.raw(name)
        if value is None:
            return None
        try:
            return parse_instant(value)
        except (ValueError, OverflowError):
            self.bad(name, value, "an ISO 8601 date or date-time expected, e.g. 2026-12-31 or 2026-12-31T18:00Z")
            return None

    def watch_metric(self) -> tuple[str, str] | None:
        value = self.raw("watch-metric")
        if not value:
            return None
        name, _, direction = value.rpartition(":")
        if name.strip() and direction.strip().lower() in ("min", "max"):
            return (name.strip(), direction.strip().lower())
        self.bad("watch-metric", value, "NAME:min or NAME:max expected")
        return None

    def wake(self) -> str | None:
        value = self.raw("wake")
        if value is None:
            return None
        if parse_pinned(value, self.settings.off_hours.timezone, datetime(2026, 1, 5, tzinfo=UTC)) is None:
            self.bad("wake", value, "days and hours expected, e.g. mon-fri 08:00-18:00")
            return None
        return value

    def early_stop(self) -> str | None:
        value = self.raw("early-stop")
        if value is not None and value.lower() not in EARLY_STOP:
            self.bad("early-stop", value, "median (a tuning job) or converged (a training job) expected")
            return None
        return value.lower() if value else None


def _with_problems(view: TagView, problems: list[str]) -> TagView:
    return TagView(**{**view.__dict__, "problems": tuple(problems)})


def is_production(view: TagView, settings: Settings) -> bool:
    return view.stage is not None and view.stage.lower() in settings.production_stages


def is_dev(view: TagView, settings: Settings) -> bool:
    return view.stage is not None and view.stage.lower() in settings.dev_stages


def screen(view: TagView, settings: Settings, now: datetime) -> Decision | None:
    """Exempt before any rule runs: bad tag, exempt tag, active snooze. None = go on."""
    if view.problems:
        return Decision(
            Verdict.EXEMPT,
            "; ".join(view.problems) + " — left alone until the tag is fixed",
            evidence={"bad_tags": list(view.problems)},
            notify=True,
        )
    if view.exempt:
        return Decision(Verdict.EXEMPT, f"tagged {settings.tag('exempt')}=true")
    if view.snooze_until is not None and now < view.snooze_until:
        return Decision(Verdict.EXEMPT, f"snoozed until {iso(view.snooze_until)}")
    return None


def protected(view: TagView, settings: Settings, now: datetime) -> str | None:
    """Why no change may be made now whatever the rule says (a bad tag, exempt, an active snooze, a
    production stage: docs/safety.md, item 1), or None; what the gate asks just before every change."""
    screened = screen(view, settings, now)
    if screened is not None:
        return screened.reason
    if is_production(view, settings):
        return f"production stage {view.stage!r}"
    return None


def production_guard(decision: Decision, view: TagView, settings: Settings) -> Decision:
    """Production stages are notify-only: what would be done is said (and posted), never done."""
    if not is_production(view, settings) or decision.verdict is Verdict.ERROR:
        return decision
    if decision.verdict in (Verdict.ACT, Verdict.WARN):
        return decision.with_(
            verdict=Verdict.EXEMPT,
            reason=f"production stage {view.stage!r} is notify-only: would {decision.action} — {decision.reason}",
            notify=True,
        )
    return decision.with_(verdict=Verdict.EXEMPT, reason=f"production stage {view.stage!r}: {decision.reason}", action=None)


def kill_date(decision: Decision, view: TagView, settings: Settings, now: datetime, pick: Callable[[str], Decision | None]) -> Decision:
    """Past `reaper:kill-after`, a keep from the kind's rule becomes the kind's action, whatever the activity.

    Only a keep changes: exempt, snooze and bad tags were screened before the rule, an act or a
    warning stands as it is, an error is never hidden. `pick(reason)` is the kind's choice (its
    default action when the resource is in a state it may start from, or None: nothing to do).
    The usual warning and grace follow, and production stages still only hear of it.
    """
    if view.kill_after is None or now < view.kill_after or decision.verdict is not Verdict.KEEP:
        return decision
    when = iso(view.kill_after)
    reason = f"past its kill date {when} ({settings.tag('kill-after')}), whatever its activity (the rule said: {decision.reason})"
    picked = pick(reason)
    if picked is None:
        return decision.with_(reason=f"{decision.reason} (past its kill date {when}, but nothing to do in its current state)")
    return picked.with_(evidence={**decision.evidence, **picked.evidence, "kill_after": when, "policy": "kill-date"})


def over_budget(
    decision: Decision,
    view: TagView,
    settings: Settings,
    spend: Mapping[str, ProjectSpend],
    now: datetime,
    pick: Callable[[str], Decision | None],
) -> Decision:
    """The project's AWS Budget: at 80 % the owner is told (once a month); at 100 % a keep becomes the
    kind's action (after the usual warning) when the admin opted in (BudgetEnforce) and the budget is
    the admin's (ProjectSpend.enforceable); otherwise it is told what would be done. Like kill_date,
    only a keep changes."""
    s = spend.get(view.project) if view.project else None
    if s is None or s.percent < THRESHOLD_TOLD or decision.verdict is not Verdict.KEEP:
        return decision
    month = now.strftime("%Y-%m")
    figures = (
        f"project {s.project} has spent ${s.actual_usd:,.2f} of its ${s.limit_usd:,.2f} monthly AWS Budget {s.budget_name} "
        f"({s.percent:.0f} %; Budgets' figures lag by hours)"
    )
    evidence = {
        **decision.evidence,
        "budget": {"name": s.budget_name, "limit_usd": s.limit_usd, "actual_usd": s.actual_usd, "percent": round(s.percent, 1)},
    }
    acts = settings.budget_enforce and s.enforceable
    if not settings.budget_enforce:
        notify_only = "budgets are notify-only (the stack's BudgetEnforce is false)"
    else:  # a budget an admin neither made nor confirmed (a tag's proposal, or one made outside the stack)
        notify_only = f"{s.budget_name} only notifies until an admin confirms it (its amount is not the admin's)"
    if s.percent < 100:
        then = "its kind's action" if acts else f"a notice ({notify_only})"
        return decision.with_(
            reason=f"{figures}: at 100 % its running resources get {then} — {decision.reason}",
            evidence=evidence,
            notify=True,
            notify_key=f"budget-80:{s.budget_name}:{month}",
        )
    picked = pick(f"{figures}: over budget")
    if picked is None:
        return decision.with_(reason=f"{decision.reason} ({figures}; nothing to do in its current state)", evidence=evidence)
    if not acts:
        return decision.with_(
            reason=f"{figures}: would {picked.action} it, but {notify_only} — {decision.reason}",
            evidence={**evidence, "would": picked.action},
            notify=True,
            notify_key=f"budget-100:{s.budget_name}:{month}",
        )
    return picked.with_(evidence={**evidence, **picked.evidence, "policy": "budget"})


def experiment_gap(view: TagView, settings: Settings) -> str | None:
    """At creation: a resource with neither a kill date nor a budgeted project is told so, once.

    "Budgeted" is judged from what needs no call: the stack's ProjectBudgets and this resource's own
    reaper:budget-usd tag (a budget tagged only on the project's other resources is not seen here).
    """
    if view.exempt or view.problems or view.kill_after is not None or view.budget_usd is not None or is_production(view, settings):
        return None
    if view.project and view.project in settings.project_budgets:
        return None
    project = f"its ml:project ({view.project})" if view.project else "an ml:project"
    return (
        f"neither a kill date nor a budgeted project: tag {settings.tag('kill-after')}=YYYY-MM-DD to have it reaped after that "
        f"date, or give {project} a monthly budget ({settings.tag('budget-usd')}=N, or the stack's ProjectBudgets) so its spend is watched"
    )


def apply_grace(decision: Decision, view: TagView, grace_minutes: int, now: datetime) -> Decision:
    """In enforce: the first reapable finding warns; acting waits `grace_minutes` after the warning."""
    if decision.verdict is Verdict.KEEP and view.warned_at is not None:
        return decision.with_(clear_warning=True, reason=decision.reason + " (earlier warning cleared)")
    if decision.verdict is not Verdict.ACT or decision.skip_grace or grace_minutes == 0:
        return decision
    if view.warned_at is None:
        return decision.with_(
            verdict=Verdict.WARN,
            newly_warned=True,
            evidence={**decision.evidence, "grace_minutes": grace_minutes},
            reason=f"{decision.reason}; will {decision.action} in {grace_minutes} min unless that changes",
        )
    due = view.warned_at + timedelta(minutes=grace_minutes)
    if now >= due:
        return decision.with_(evidence={**decision.evidence, "warned_at": iso(view.warned_at)})
    return decision.with_(
        verdict=Verdict.WARN,
        quiet=True,
        reason=f"{decision.reason}; warned at {iso(view.warned_at)}, will {decision.action} after {iso(due)}",
    )


# the kind's own rule for one resource, its tags read: (view, settings, now) -> Decision (kinds.base.Kind.decide)
Rule = Callable[[TagView, Settings, datetime], Decision]
# the kind's choice past a kill date or over budget: (view, settings, now, reason) -> Decision, or None: nothing to
# do in the resource's state (kinds.base.Kind.kill_decision)
KillPick = Callable[[TagView, Settings, datetime, str], Decision | None]


def decide(
    tags: dict[str, str],
    settings: Settings,
    now: datetime,
    rule: Rule,
    pick: KillPick,
    spend: Mapping[str, ProjectSpend],
    grace_minutes: int | None,
) -> tuple[Decision, TagView]:
    """The whole decision for one resource, pure: its tags read, the exemptions screened, the kind's `rule`,
    then the kill date, the budget, the production guard and (in enforce: `grace_minutes` not None) the grace.
    The kind's parts come in as `rule` and `pick`, so the rules every kind shares run here in one call."""
    view = read_tags(tags, settings)
    decision = screen(view, settings, now) or rule(view, settings, now)

    def picked(reason: str) -> Decision | None:
        return pick(view, settings, now, reason)

    decision = kill_date(decision, view, settings, now, picked)
    decision = over_budget(decision, view, settings, spend, now, picked)
    decision = production_guard(decision, view, settings)
    if grace_minutes is not None and decision.verdict in (Verdict.ACT, Verdict.KEEP):
        decision = apply_grace(decision, view, grace_minutes, now)
    return decision, view


def off_hours_reason(settings: Settings) -> str:
    """Why a resource goes outside working hours, as every kind's message says it."""
    oh = settings.off_hours
    return f"outside working hours ({','.join(oh.days)} {oh.start:%H:%M}-{oh.end:%H:%M} {oh.timezone})"


def off_hours_stop(view: TagView, settings: Settings, now: datetime, action: KindAction) -> Decision | None:
    """Off-hours for a box someone works at (notebook, ec2): outside working hours a dev or
    stage-less one is stopped (the kind's `action`) whatever its activity; None in working hours or for other stages."""
    if not settings.off_hours.enabled or in_working_hours(settings, now) or not (view.stage is None or is_dev(view, settings)):
        return None
    return Decision(Verdict.ACT, off_hours_reason(settings), action=action, evidence={"policy": "off-hours"})


def in_working_hours(settings: Settings, now: datetime) -> bool:
    oh = settings.off_hours
    local = now.astimezone(ZoneInfo(oh.timezone))
    day = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")[local.weekday()]
    if day not in oh.days:
        return False
    t = local.time().replace(tzinfo=None)
    if oh.start <= oh.end:
        return oh.start <= t < oh.end
    return t >= oh.start or t < oh.end  # a window that spans midnight


def exempt_hint(arn: str, settings: Settings) -> str:
    """A command to copy that exempts the resource (any service the tagging API covers)."""
    return (
        f"aws resourcegroupstaggingapi tag-resources --resource-arn-list {arn} "
        f"--tags {settings.tag('exempt')}=true   # or {settings.tag('snooze-until')}=YYYY-MM-DD"
    )

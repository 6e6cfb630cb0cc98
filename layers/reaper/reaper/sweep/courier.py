"""Record and notify as the sweep goes: each outcome's log record is written right after its action,
and its message handed to the outbox in batches of ten.

Until a message is queued it is also kept in the action log as *unposted*; once queued it is
dropped from there. A sweep that dies (timeout, crash) leaves its unposted messages behind and
the next sweep posts them: an executed action reaches Slack at the latest through the next sweep.
A log or queue failure is that resource's `error`; the sweep goes on.

A change that was made is never posted as failed: its settlement (the record that replaces its
write-ahead copy) is retried with a short backoff within the sweep's deadline, and if it still cannot
be written its message is held, its write-ahead copy stays, and the next sweep of the kind reads the
resource's state, settles it and posts it once (reaper.sweep.reconcile).

With a grouped outbox (reaper.record.outbox.GroupedOutbox: Slack's bot mode, chosen in reaper.wiring)
messages are not queued one per resource: each outcome is
still recorded and kept as unposted as it happens, and `flush` (at the end of the sweep) queues
one summary per owner (reaper.slack.owner_summary) and then drops its members from the unposted list.
A sweep that dies first leaves them all unposted, and the next sweep posts them, grouped too.
"""

from __future__ import annotations

import json
import logging
import random
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from datetime import datetime

from reaper import kinds
from reaper.aws.faults import AwsError, short
from reaper.core.deadline import Deadline
from reaper.core.model import Mode, Outcome, Result, ResultCode, Verdict
from reaper.core.timeutil import as_utc
from reaper.record import owner_summary
from reaper.record.actionlog import Settlement, Unposted
from reaper.record.message import BadMessage, Message, NoticeMessage, VerdictMessage, from_record
from reaper.record.outbox import GroupedOutbox
from reaper.record.runtime import Runtime
from reaper.sweep import reconcile

log = logging.getLogger("reaper")

BATCH = 10  # SQS SendMessageBatch takes ten
SETTLE_TRIES = 4  # a settlement's plain writes, tried this often before its message is held for the next sweep
SETTLE_BACKOFF = 0.05  # seconds before the 2nd try, doubled each time, with full jitter (under a second in all)


def payload(outcome: Outcome) -> VerdictMessage:
    """The outcome's message, read from its JSON as the queue would carry it (what json.dumps could only
    write as a string, a string it is): a field the model refuses fails here, in the producer's tests."""
    data = outcome.to_json()
    data["type"] = "verdict"
    action = outcome.decision.action
    kind = kinds.REGISTRY.get(outcome.resource.kind) if outcome.resource.kind in kinds.KIND_PACKAGES else None
    if kind is not None and action is not None and action in kind.actions:
        data["past"] = kind.actions[action].past
    return VerdictMessage.model_validate_json(json.dumps(data, default=str))


def keyed(message: VerdictMessage, key: str | None = None) -> VerdictMessage:
    """The message under `key` (a new one when None): kept with its unposted copy, so a replay is posted once."""
    return message.model_copy(update={"message_key": key or uuid.uuid4().hex})


@dataclass
class _Pending:
    outcome: Outcome | None
    body: Message
    unposted_key: str | None
    quiet: bool = False  # a begun change not worth telling: its write-ahead copies are removed, nothing posted
    settlement: Settlement | None = None  # a begun change's: its message waits until this is written
    held: bool = False  # its settlement failed: the write-ahead copy stays and the next sweep posts it (reconciled)


@dataclass
class Courier:
    rt: Runtime
    now: datetime
    event_id: str
    pending: list[_Pending] = field(default_factory=list)
    begun: list[_Pending] = field(default_factory=list)  # messages of changes written ahead, waiting for their settlement
    unsettled: list[Settlement] = field(default_factory=list)  # those not written yet (see _take_begun)
    _told: frozenset[str] | None = None  # today's recorded message claims, read on first need
    deadline: Deadline = field(default_factory=Deadline.none)  # a settlement's retries stop short of it
    sleep: Callable[[float], None] = time.sleep

    def take(self, outcome: Outcome) -> None:
        """Record this outcome now (if it is worth telling) and queue its message soon."""
        if self.begun:
            self._settled()  # a change begun since settled those before it
        if outcome.written_ahead and self.rt.log is not None:
            self._take_begun(outcome)
            return
        if not outcome.should_notify():
            return
        body = keyed(payload(outcome))
        key: str | None = None
        log_ = self.rt.log
        if log_ is not None:
            try:
                claim = self._claim_key(outcome)
                if claim is not None and (claim in self._told_today() or not log_.claim(claim, self.now)):
                    return  # told already: neither logged nor posted again
                record = body.as_record()
                log_.record(record if claim is None else {**record, "message_claim": claim}, self.now, self.event_id)
                key = log_.put_unposted(record, self.now, self.event_id)
            except AwsError as exc:
                log.error("action log write failed for %s: %s", outcome.resource.arn, short(exc))
                self._fail(outcome, f"the action log could not be written ({short(exc)})")
                body = keyed(payload(outcome), body.message_key)
        self.pending.append(_Pending(outcome, body, key))
        if len(self.pending) >= BATCH and not self.grouped:
            self._send_pending()

    @property
    def grouped(self) -> bool:
        return isinstance(self.rt.outbox, GroupedOutbox)

    def flush(self) -> None:
        self._settle()
        self._send_pending()
        self.rt.forward_now()

    def _send_pending(self) -> None:
        if self.grouped:
            self._flush_grouped()
            return
        while self.pending:
            batch, self.pending = self.pending[:BATCH], self.pending[BATCH:]
            self._send(batch)

    def replay_unposted(self, only_kinds: Collection[str] | None = None) -> int:
        """Post what an earlier sweep recorded and never queued. Returns how many were queued.

        A change of one of `only_kinds` (None: any) whose end was never recorded is reconciled first: its
        resource's state read, its log entry settled in place, its message posted as what was done
        (reaper.sweep.reconcile). One of another kind waits for that kind's sweep (its function can read
        it), up to RECONCILE_WAIT."""
        if self.rt.log is None:
            return 0
        try:
            left = self.rt.log.unposted_entries(self.now)
        except AwsError as exc:
            log.error("could not read unposted messages: %s", short(exc))
            return 0
        taken = 0
        for u in left:
            try:
                body = from_record(u.body)
            except BadMessage as exc:  # kept in the log (it is a record), never posted: say so at every sweep
                log.error("unposted message %s is not a message and is not posted: %s", u.sort_key, exc)
                continue
            if isinstance(body, VerdictMessage):
                late = self._late(u, body, only_kinds)
                if late is None:
                    continue
                body = late
            self.pending.append(_Pending(None, body, u.sort_key))
            taken += 1
        self.flush()
        return taken

    def _late(self, u: Unposted, body: VerdictMessage, only_kinds: Collection[str] | None) -> VerdictMessage | None:
        """The late message of an unposted verdict; an unconfirmed change reconciled first. None: not now."""
        log_ = self.rt.log
        assert log_ is not None
        since = u.at or datetime.fromisoformat(u.sort_key.split("#", 1)[0])
        waited = as_utc(self.now) - since >= reconcile.RECONCILE_WAIT
        late = "the sweep that did this stopped first"
        if reconcile.needs_reading(body):
            late = "the sweep that started this stopped before recording whether it was done"
            final = None if only_kinds is not None and body.kind not in only_kinds else reconcile.reconcile(self.rt, body, since)
            if final is None and not waited:
                return None  # its own kind's sweep reads it (another function's), or reads it again next time
            if final is not None and not final.unconfirmed:
                # settled in place: the write-ahead log entry becomes what was done (an item kept before
                # `at` and `event_id` were kept with it gets a new entry, under this sweep's keys)
                try:
                    log_.record(final.as_record(), u.at or self.now, u.event_id or self.event_id)
                except AwsError as exc:
                    log.error("could not settle %s %s: %s; the next sweep tries again", body.kind, body.id, short(exc))
                    return None
                late = "its sweep could not record it; a later sweep read its state"
            body = final or body
        return body.model_copy(update={"reason": f"{body.reason} (posted late: {late})"})

    def report_not_reached(
        self, outcomes: list[Outcome], unreached: int = 0, kind: str = "", region: str = "", later: list[str] | None = None, why: str = ""
    ) -> None:
        """One message for everything the sweep had no time for, never one per resource.

        `unreached` resources (of `kind` in `region`) and the regions `later` were never looked at: a sweep
        whose next part could not be arranged (`why`) says so here.
        """
        missed = [o for o in outcomes if o.result is not None and o.result.code is ResultCode.NOT_REACHED]
        total = len(missed) + unreached
        if not total and not later:
            return
        places = sorted({f"{o.resource.kind} ({o.resource.region})" for o in missed} | ({f"{kind} ({region})"} if unreached else set()))
        first = missed[0].resource if missed else None
        text = f"Not reached this time: {total} in {', '.join(places)}"
        if later:
            text += f", and regions {', '.join(later)} not started"
        text += ". Nothing was changed on them; the next sweep decides again."
        if why:
            text += f" The rest of the sweep could not be arranged: {why}."
        body = NoticeMessage(
            kind=first.kind if first else kind,
            id="*",
            arn="",
            region=first.region if first else region,
            title=f"Sweep ran out of time: {total} resource(s) not reached",
            text=text,
        )
        key: str | None = None
        if self.rt.log is not None:
            try:
                self.rt.log.record(body.as_record(), self.now, self.event_id)
                key = self.rt.log.put_unposted(body.as_record(), self.now, self.event_id)
            except AwsError as exc:
                log.error("action log write failed for the not-reached notice: %s", short(exc))
        self.pending.append(_Pending(None, body, key))

    # -- internals -----------------------------------------------------------------------
    def _take_begun(self, outcome: Outcome) -> None:
        """A change written ahead (reaper.sweep.pipeline._begin). Its record replaces the write-ahead one
        and its lease is given back in the next change's write-ahead write (`unsettled`, handed to the
        sweep's ActContext), or by `_settle` before the sweep's messages are queued; its message waits
        for that. Until then the write-ahead copies stand for it, as they would if the sweep died here."""
        log_ = self.rt.log
        assert log_ is not None
        body: VerdictMessage | None = None
        entry: dict[str, object] | None = None
        if outcome.should_notify():
            # the write-ahead copy's key: if that copy outlives this sweep (its replacement failed), the
            # next sweep's replay and this message are one message to the notifier, posted once
            body = keyed(payload(outcome), outcome.message_key)
            entry = dict(body.as_record())
            claim = self._claim_key(outcome)  # None for an act or a warning: claimed with the change
            try:
                if claim is not None and (claim in self._told_today() or not log_.claim(claim, self.now)):
                    body = entry = None  # told already: neither logged nor posted again
                elif claim is not None:
                    entry["message_claim"] = claim
            except AwsError as exc:
                log.error("action log write failed for %s: %s", outcome.resource.arn, short(exc))
                self._fail(outcome, f"the action log could not be written ({short(exc)})")
                body = keyed(payload(outcome), body.message_key if body else None)
                entry = dict(body.as_record())
        r = outcome.resource
        settlement = Settlement(arn=r.arn, holder=self.event_id, kind=r.kind, id=r.id, entry=entry, now=self.now, event_id=self.event_id)
        self.unsettled.append(settlement)
        self.begun.append(_Pending(outcome, body or payload(outcome), None, quiet=body is None, settlement=settlement))
        self._settled()

    def _settled(self) -> None:
        """Messages of changes settled by now go on to be queued, in order."""
        waiting = {id(s) for s in self.unsettled}
        done = [p for p in self.begun if id(p.settlement) not in waiting]
        if not done:
            return
        self.begun = [p for p in self.begun if id(p.settlement) in waiting]
        for p in done:
            if not p.quiet and p.unposted_key is None and not p.held:
                assert self.rt.log is not None
                p.unposted_key = self.rt.log.unposted_sort_key(p.body.as_record(), self.now, self.event_id)
        self.pending.extend(p for p in done if not p.quiet and not p.held)
        if len(self.pending) >= BATCH and not self.grouped:
            self._send_pending()  # the settled ones; a change still unsettled waits for the next write

    def _settle(self) -> None:
        """Settle what no later change took along: batched, and one by one where a batch fails."""
        if not self.unsettled or self.rt.log is None:
            return
        unsettled = list(self.unsettled)
        del self.unsettled[:]  # the same list object the sweep's ActContext holds
        try:
            self.rt.log.settle(unsettled)
        except AwsError as exc:
            log.warning("could not settle %d change(s) in one write, settling them one by one: %s", len(unsettled), short(exc))
            for s in unsettled:
                self._settle_apart(s)
        self._settled()

    def _settle_apart(self, s: Settlement) -> None:
        """One settlement, tried SETTLE_TRIES times with backoff. When it still fails, the change's message is
        held: its write-ahead copy (unconfirmed) stays unposted, and the next sweep reads the resource's
        state, settles the entry and posts what was done, once (reaper.sweep.reconcile). A change that was
        made is never posted as failed because its record could not be written."""
        log_ = self.rt.log
        assert log_ is not None
        p = next(p for p in self.begun if p.settlement is s)
        assert p.outcome is not None
        for attempt in range(SETTLE_TRIES):
            try:
                log_.settle_apart(s)
                return
            except AwsError as exc:
                last = exc
                pause = random.uniform(0, SETTLE_BACKOFF * 2**attempt)
                if attempt + 1 == SETTLE_TRIES or self._too_late(pause):
                    break
                self.sleep(pause)
        log.error("action log write failed for %s, its message held for the next sweep: %s", p.outcome.resource.arn, short(last))
        p.held = True
        before = p.outcome.result
        if before is not None and before.code is ResultCode.DONE:
            note = "not yet confirmed in the action log (it could not be written): the next sweep reads its state and posts it"
            p.outcome.result = replace(before, detail=f"{before.detail}; {note}" if before.detail else note)

    def _too_late(self, pause: float) -> bool:
        left = self.deadline.left()
        return left is not None and left - pause < 5.0  # the sweep's last seconds go to queueing its messages

    def _flush_grouped(self) -> None:
        """One summary per owner for this sweep's verdicts; notices still go one by one."""
        verdicts = [(p, p.body) for p in self.pending if isinstance(p.body, VerdictMessage)]
        others = [p for p in self.pending if not isinstance(p.body, VerdictMessage)]
        self.pending = []
        members: dict[str, list[_Pending]] = {}
        for p, v in verdicts:
            members.setdefault((v.owner or "").strip(), []).append(p)
        summaries = owner_summary.group([v for _, v in verdicts], self.event_id)
        groups = [s.model_copy(update={"message_key": uuid.uuid4().hex}) for s in summaries]
        for i in range(0, len(groups), BATCH):
            batch = groups[i : i + BATCH]
            try:
                problems = self.rt.outbox.send(batch)
            except Exception as exc:  # the queue itself failed: every summary in the batch
                problems = {n: f"queueing failed: {short(exc)}" for n in range(len(batch))}
            for n, g in enumerate(batch):
                owned = members.get((g.owner or "").strip(), [])
                if n in problems:
                    log.error(problems[n])
                    for p in owned:
                        if p.outcome is not None:
                            kept = " (kept in the action log; the next sweep posts it)" if p.unposted_key else ""
                            self._fail(p.outcome, f"its message could not be queued: {problems[n]}{kept}")
                    continue
                for p in owned:
                    if p.outcome is not None:
                        p.outcome.posted = True
                self._drop([p.unposted_key for p in owned if p.unposted_key])
        for i in range(0, len(others), BATCH):
            self._send(others[i : i + BATCH])

    def _drop(self, keys: list[str]) -> None:
        if keys and self.rt.log is not None:
            try:
                self.rt.log.drop_unposted(keys)
            except AwsError as exc:  # they would be posted twice: say so, but nothing is lost
                log.error("could not mark %d message(s) as posted: %s", len(keys), short(exc))

    def _send(self, batch: list[_Pending]) -> None:
        try:
            problems = self.rt.outbox.send([p.body for p in batch])
        except Exception as exc:  # the queue itself failed (throttled, gone): every message in the batch
            problems = {i: f"queueing failed: {short(exc)}" for i in range(len(batch))}
        sent = [p for i, p in enumerate(batch) if i not in problems]
        for i, problem in problems.items():
            log.error(problem)
            outcome = batch[i].outcome
            if outcome is not None:
                kept = " (kept in the action log; the next sweep posts it)" if batch[i].unposted_key else ""
                self._fail(outcome, f"its message could not be queued: {problem}{kept}")
        for p in sent:
            if p.outcome is not None:
                p.outcome.posted = True
        self._drop([p.unposted_key for p in sent if p.unposted_key])

    def _claim_key(self, o: Outcome) -> str | None:
        """The message's claim: once a day per finding (or once per notify_key); None for enforce act/warn
        messages, which were claimed with the action."""
        d = o.decision
        if o.mode is Mode.ENFORCE and d.verdict in (Verdict.ACT, Verdict.WARN) and o.result is not None:
            return None  # the action's claim already made this unique to the event
        token = f"key:{d.notify_key}" if d.notify_key else f"day:{as_utc(self.now):%Y-%m-%d}"
        verdict = o.verdict.value
        return f"{o.resource.arn or o.resource.kind + '/' + o.resource.region}|msg|{o.mode.value}|{verdict}|{d.action}|{token}"

    def _told_today(self) -> frozenset[str]:
        """The message claims recorded in today's log, read once per sweep (a Query page holds hundreds):
        a message recorded there was claimed first, so its claim would fail. Saves a conditional
        PutItem per finding per sweep; the claim stays the judge of anything not found here."""
        if self._told is None:
            assert self.rt.log is not None
            end = as_utc(self.now)
            try:
                self._told = frozenset(
                    e.message_claim
                    for e in self.rt.log.entries(end.replace(hour=0, minute=0, second=0, microsecond=0), end)
                    if e.message_claim
                )
            except AwsError as exc:  # the claims decide alone, as they would without this read
                log.warning("could not read today's action log; each message is claimed: %s", short(exc))
                self._told = frozenset()
        return self._told

    @staticmethod
    def _fail(outcome: Outcome, why: str) -> None:
        """The record or the message failed: that resource's error, keeping what the action did."""
        before = outcome.result
        message = f"{outcome.reason}; but {why}"
        outcome.result = Result.failed(message, executed=before.executed if before else False, detail=before.detail if before else None)

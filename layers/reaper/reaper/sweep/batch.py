"""Changes made many at a time where the API takes many (a kind's action declares `batch`: EC2
StopInstances takes many instance ids).

Nothing about one change is shared with another but the call that makes them: each change is begun
alone (lease, claim and write-ahead record: reaper.sweep.pipeline._begin) and held; when the batch is
full, or the chunk or the time is at its end, each held change passes the gate alone (state,
protection and the kind's guards read again, reaper.sweep.gate; where the kind reads many in one call,
`KindDeclaration.read_many`, the state of all of them, and their tags where it returns them, come from
that one read, made just before the gates), then one call makes those the gate let through, then each settles from the call's
answer. Fewer than BATCH_FROM after the gate: each is
made alone, the one-resource path.

A call fails as a whole (EC2 refuses every id for one it will not stop). Then:
- refused (a client error, throttling aside): the service changed nothing, so each change is taken
  alone again, gate included, so one bad resource never holds or mis-records the others;
- throttled, a server error or no answer: each change of the call is an error saying so (nothing was
  confirmed), and the next sweep decides again; the throttled API is not called once per resource.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from botocore.exceptions import ClientError

from reaper.aws.faults import AwsError, error_code, short
from reaper.aws.tagging import remove_tags
from reaper.core.errors import ActionRefused
from reaper.core.model import Outcome, Result, ResultCode
from reaper.kinds.base import ActContext, Action, BatchAnswer, Kind, ReadNow
from reaper.sweep.gate import gate

log = logging.getLogger("reaper")

# Below three, a batch saves at most one call; each change is made alone, with its own answer.
BATCH_FROM = 3

# Error codes that say the request was not processed for its rate (EC2: RequestLimitExceeded).
# https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html
THROTTLED = frozenset(
    {"RequestLimitExceeded", "Throttling", "ThrottlingException", "ThrottledException", "TooManyRequestsException", "RequestThrottled"}
)

# (outcome, action, gate again) -> Result: the one-resource path (pipeline._act): the gate unless it
# was just passed, then the kind's `run`; the batch settles what it made (`finished`: the warning tag removed)
Single = Callable[[Outcome, Action, bool], Result]


@dataclass
class Batch:
    """Changes of one kind begun (written ahead) and waiting for the call that makes them."""

    kind: Kind
    ctx: ActContext
    single: Single
    held: list[tuple[Outcome, Action]] = field(default_factory=list)

    def hold(self, outcome: Outcome, action: Action) -> bool:
        """Keep this begun change for a batched call (True), or leave it to the one-resource path (False)."""
        if action.batch is None:
            return False
        self.held.append((outcome, action))
        return True

    def holds(self, outcome: Outcome) -> bool:
        return any(o is outcome for o, _ in self.held)

    @property
    def full(self) -> bool:
        return any(sum(1 for _, a in self.held if a.name == action.name) >= action.batch_size for _, action in self.held)

    def flush(self) -> list[Outcome]:
        """Gate, make and settle every held change; returns them in the order they were held."""
        held, self.held = self.held, []
        actions = {a.name: a for _, a in held}
        for name, action in actions.items():
            self._make(action, [o for o, a in held if a.name == name])
        return [o for o, _ in held]

    def _make(self, action: Action, group: list[Outcome]) -> None:
        if len(group) < BATCH_FROM:
            for o in group:
                _safely(o, partial(self._alone, o, action, True))
            return
        read = self._read_many(group)
        passed = [o for o in group if self._gated(action, o, read.get(o.resource.arn))]
        if len(passed) < BATCH_FROM:
            for o in passed:  # each made alone, with what its own gate read (ActContext.gated)
                _safely(o, partial(self._alone, o, action, False))
            self.ctx.read_batch.clear()
            return
        try:
            answer = action.batch_runner()(self.ctx, [(o.resource, o.decision) for o in passed])
        except Exception as exc:  # a bug in the kind's batch: an error on each, as process() does for one
            log.exception("batched %s failed", action.name)
            answer = BatchAnswer(failed={o.resource.id: exc for o in passed})
        finally:
            self.ctx.read_batch.clear()  # the gates' reads were for this call only
        for o in passed:
            _safely(o, partial(self._settled, action, o, answer, len(passed)))

    def _read_many(self, group: list[Outcome]) -> dict[str, ReadNow]:
        """The members' state and tags in one read where the kind has one; {} (each gate reads alone) when it
        has none or the read fails."""
        try:
            return self.kind.read_many(self.ctx.clients, [o.resource for o in group])
        except AwsError as exc:
            log.warning("reading %d %s resources at once failed (%s): each read alone", len(group), self.kind.name, short(exc))
            return {}

    def _gated(self, action: Action, o: Outcome, read: ReadNow | None = None) -> bool:
        """The gate, alone, just before the batch's call: True when this change may be made."""
        try:
            o.result = gate(self.kind, action, o.resource, self.ctx, o.decision.reason, read, ruled=o.decision)
            if o.result is None:  # what its gate read goes to its own change, made with the batch's
                self.ctx.read_batch[o.resource.arn] = dict(self.ctx.read_now)
        except AwsError as exc:
            o.result = Result.failed(f"{o.decision.action} failed: {short(exc)}")
        except Exception as exc:  # a bug in a kind's check: this resource's error, as process() makes it
            log.exception("the gate failed for %s", o.resource.arn)
            o.result = Result.failed(f"{o.decision.action} failed: {short(exc)}")
        return o.result is None

    def _alone(self, o: Outcome, action: Action, gate_again: bool) -> Result:
        """One held change made alone (the one-resource path), then settled as every made change is."""
        return finished(action, o, self.ctx, self.single(o, action, gate_again))

    def _settled(self, action: Action, o: Outcome, answer: BatchAnswer, n: int) -> Result:
        rid = o.resource.id
        if rid in answer.done:
            return finished(action, o, self.ctx, Result.done(answer.done[rid]))
        if rid in answer.own:  # made in its own call: settled as the one-resource path settles it
            return _own_error(o, answer.own[rid])
        exc = answer.failed.get(rid)
        if exc is None:  # the call went through and did not list it: ask for it alone (it was gated just now)
            return self._alone(o, action, False)
        if refused_whole(exc):
            log.warning("batched %s of %d refused (%s): each alone", action.name, n, short(exc))
            return self._alone(o, action, True)
        return Result.failed(
            f"{o.decision.action} failed: {short(exc)} (one call for {n} resources; nothing was confirmed, the next sweep decides again)"
        )


def _safely(o: Outcome, make: Callable[[], Result]) -> None:
    """One held change made (or settled); a bug on it is its own error, never the end of the sweep."""
    try:
        o.result = make()
    except Exception as exc:
        log.exception("enforcing failed for %s", o.resource.arn)
        o.result = Result.failed(f"{o.decision.action} failed: {short(exc)}")


def _own_error(o: Outcome, exc: BaseException) -> Result:
    """A change of a batch made in its own call that failed, said as reaper.sweep.pipeline._act says it."""
    if isinstance(exc, ActionRefused):
        return Result.refused(f"refused to {o.decision.action}: {exc.reason}")
    if isinstance(exc, AwsError):
        return Result.failed(f"{o.decision.action} failed: {short(exc)}")
    raise exc  # a bug: _safely makes it this resource's error


def refused_whole(exc: BaseException) -> bool:
    """A client error other than throttling: the service refused the request and changed nothing."""
    if not isinstance(exc, ClientError) or error_code(exc) in THROTTLED:
        return False
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return not isinstance(status, int) or 400 <= status < 500


def finished(action: Action, outcome: Outcome, ctx: ActContext, result: Result) -> Result:
    """A change settled: when it was made (`result` done), a resource that stays loses its warning tag, and a tag
    that could not be removed is said in the detail; any other result is returned as it is. Where every made change
    is settled, alone (reaper.sweep.pipeline.enforce) or in a batch."""
    d, r = outcome.decision, outcome.resource
    warned_key = ctx.settings.tag("warned-at")
    if result.code is not ResultCode.DONE or action.removes_resource or not (warned_key in r.tags or d.evidence.get("warned_at")):
        return result
    try:
        remove_tags(ctx.clients, r.arn, [warned_key])
    except AwsError as exc:
        return Result.done(f"{result.detail or ''} (could not remove {warned_key}: {short(exc)})".strip())
    return result

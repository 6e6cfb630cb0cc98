"""reaper.sweep.batch on its own: which failures of a batched call send each change back alone (the
service refused the request and changed nothing) and which are an error on each (throttled, a server
error, no answer: nothing confirmed, nothing hammered), and what becomes of an id the call's answer
leaves out. The kind's gate and its calls are stubbed; tests/integration/test_ec2_batched_stops.py
runs the same against moto's EC2."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from reaper.core.model import Decision, Mode, Outcome, Resource, Result, ResultCode, Verdict
from reaper.core.settings import Settings
from reaper.kinds.base import ActContext, Action, BatchAnswer, Kind, KindDeclaration
from reaper.sweep import batch as batch_module
from reaper.sweep.batch import BATCH_FROM, Batch, refused_whole

ANSWER: dict[str, BatchAnswer] = {}


def run_batch(ctx: ActContext, items: Sequence[tuple[Resource, Decision]]) -> BatchAnswer:
    ANSWER["ids"] = BatchAnswer(done={r.id: None for r, _ in items})  # what was asked, for the test to read
    return ANSWER["next"]


ACTION = Action("stop", "stopped", (), frozenset({"running"}), "unused:run", batch=f"{__name__}:run_batch", batch_size=10)


def error(code: str, status: int | None) -> ClientError:
    response: dict[str, Any] = {"Error": {"Code": code, "Message": "m"}}
    if status is not None:
        response["ResponseMetadata"] = {"HTTPStatusCode": status}
    return ClientError(response, "StopInstances")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("exc", "alone"),
    [
        (error("IncorrectInstanceState", 400), True),
        (error("OperationNotPermitted", 400), True),
        (error("UnauthorizedOperation", 403), True),
        (error("RequestLimitExceeded", 503), False),
        (error("ThrottlingException", None), False),
        (error("InternalError", 500), False),
        (error("Unavailable", 503), False),
        (ReadTimeoutError(endpoint_url="https://ec2.us-east-1.amazonaws.com"), False),
    ],
)
def test_only_a_request_the_service_refused_is_taken_apart(exc: BaseException, alone: bool) -> None:
    assert refused_whole(exc) is alone


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> tuple[Batch, list[tuple[str, bool]]]:
    monkeypatch.setattr(batch_module, "gate", lambda *args, **kwargs: None)  # every change passes its gate
    singles: list[tuple[str, bool]] = []

    def single(o: Outcome, action: Action, gate_again: bool) -> Result:
        singles.append((o.resource.id, gate_again))
        return Result.done("alone")

    kind = Kind(KindDeclaration(name="k", tag_resource_types=(), tag_service="ec2", read_permissions=(), actions={}, **_parts()))
    ctx = ActContext(clients=None, settings=Settings(), now=datetime.now(UTC), log=None, event_id="e")  # type: ignore[arg-type]
    b = Batch(kind, ctx, single)
    for i in range(4):
        r = Resource(kind="k", id=f"i-{i}", arn=f"arn:k:i-{i}", region="us-east-1", state="running")
        assert b.hold(Outcome(r, Decision(Verdict.ACT, "idle", action="stop"), Mode.ENFORCE), ACTION)
    return b, singles


def _parts() -> dict[str, str]:
    return {"parts": "x:PARTS"}  # never read: the batch only holds and makes changes


def test_a_throttled_or_unanswered_call_is_an_error_on_each_and_none_is_called_again(held) -> None:
    b, singles = held
    ANSWER["next"] = BatchAnswer(failed={f"i-{i}": error("InternalError", 500) for i in range(4)})
    made = b.flush()
    assert singles == [] and [o.result.code for o in made if o.result] == [ResultCode.FAILED] * 4
    assert all("one call for 4 resources" in (o.result.message or "") for o in made if o.result)


def test_a_refused_call_sends_each_back_through_its_gate_and_an_unlisted_one_is_asked_alone(held) -> None:
    b, singles = held
    refused = error("IncorrectInstanceState", 400)
    ANSWER["next"] = BatchAnswer(done={"i-0": "stopping"}, failed={"i-1": refused, "i-2": refused})
    made = b.flush()
    # i-0 done by the call; i-1, i-2 alone with their gate again; i-3 (not in the answer) alone, just gated
    assert made[0].result == Result.done("stopping")
    assert singles == [("i-1", True), ("i-2", True), ("i-3", False)]
    assert sorted(ANSWER["ids"].done) == ["i-0", "i-1", "i-2", "i-3"]


def test_fewer_than_batch_from_are_made_alone(held) -> None:
    b, singles = held
    b.held = b.held[: BATCH_FROM - 1]
    b.flush()
    assert singles == [(f"i-{i}", True) for i in range(BATCH_FROM - 1)]


def test_every_change_the_batch_makes_loses_its_warning_tag_alone_or_in_the_call(held, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given four warned changes: one made by the call, two refused by it (each made alone, gate again), one left out
    b, singles = held
    for o, _ in b.held:
        o.resource = Resource(kind="k", id=o.resource.id, arn=o.resource.arn, region="us-east-1", state="running",
                              tags={"reaper:warned-at": "2026-12-05T10:00:00Z"})  # fmt: skip
    removed: list[str] = []
    monkeypatch.setattr(batch_module, "remove_tags", lambda clients, arn, keys: removed.extend(f"{arn} {k}" for k in keys))
    refused = error("IncorrectInstanceState", 400)
    ANSWER["next"] = BatchAnswer(done={"i-0": "stopping"}, failed={"i-1": refused, "i-2": refused})
    # When the batch is made
    made = b.flush()
    # Then each is done and its warning tag removed, whichever way it was made (the one-resource path settles none)
    assert [o.result.code for o in made if o.result] == [ResultCode.DONE] * 4
    assert removed == [f"arn:k:i-{i} reaper:warned-at" for i in range(4)]


def test_a_warning_tag_that_cannot_be_removed_is_said_and_the_change_stays_done(held, monkeypatch: pytest.MonkeyPatch) -> None:
    b, _ = held
    b.held = b.held[: BATCH_FROM - 1]
    for o, _ in b.held:
        o.decision = Decision(Verdict.ACT, "idle", action="stop", evidence={"warned_at": "2026-12-05T10:00:00Z"})

    def throttled(clients: Any, arn: str, keys: list[str]) -> None:
        raise error("ThrottlingException", 400)

    monkeypatch.setattr(batch_module, "remove_tags", throttled)
    made = b.flush()
    assert [o.result for o in made] == [
        Result.done("alone (could not remove reaper:warned-at: ThrottlingException: m)"),
    ] * (BATCH_FROM - 1)

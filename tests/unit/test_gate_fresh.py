"""The gate's one read down (reaper.kinds.base.Kind.fresh): the state first, then (only in a state the action may
start from) the protection tags of the resource and of what guards it, then the kind's guard on the fresh tags,
each read only when what came before lets the change go on (docs/safety.md, items 1 and 9). The tag reads are
recorded through the module's `current_tags`; reaper.sweep.gate turns the answer into its Result."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.core.model import Decision, Resource, ResultCode, Verdict
from reaper.core.policy import TagView, protected, read_tags
from reaper.core.settings import Settings
from reaper.kinds import base
from reaper.kinds.base import ActContext, Action, Kind, KindDeclaration, Parts
from reaper.sweep.gate import gate

NOW = datetime(2026, 12, 5, 12, tzinfo=UTC)
SPACE = "arn:aws:sagemaker:us-east-1:111122223333:space/d-1/team"
APP = "arn:aws:sagemaker:us-east-1:111122223333:app/d-1/team/jupyterlab/default"
STOP = Action("stop", "stopped", (), frozenset({"InService"}), "unused:run")
SEEN: dict[str, Any] = {}


def _state(clients: Any, resource: Resource) -> str | None:
    state: str | None = SEEN["state"]
    return state


def _guard(resource: Resource, view: TagView, settings: Settings, ruled: Decision | None) -> str | None:
    SEEN["guarded"] = (resource.tags, view.owner)
    why: str | None = SEEN.get("why")
    return why


PARTS: Parts[Any] = Parts(
    discover=lambda clients, settings, now: [],
    signals=lambda ctx, resources: {},
    decide=lambda resource, signal, view, settings, now: Decision(Verdict.KEEP, "unused"),
    current_state=_state,
    undo_hint=lambda resource, action: None,
    guard=_guard,
)
KIND = Kind(KindDeclaration("k", (), "sagemaker", (), {}, parts=f"{__name__}:PARTS"))


@pytest.fixture
def tags(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, str]]:
    """The tags each ARN has now; every read of them is recorded in SEEN["read"]."""
    now: dict[str, dict[str, str]] = {APP: {"ml:owner": "ada@example.com"}, SPACE: {}}
    SEEN.clear()
    SEEN.update(state="InService", read=[])

    def current_tags(clients: Any, arn: str) -> dict[str, str]:
        SEEN["read"].append(arn)
        return now[arn]

    monkeypatch.setattr(base, "current_tags", current_tags)
    return now


def app() -> Resource:
    return Resource(kind="k", id="default", arn=APP, region="us-east-1", state="InService", guarded_by=(SPACE,))


def ctx() -> ActContext:
    return ActContext(clients=None, settings=Settings(), now=NOW, log=None, event_id="e")  # type: ignore[arg-type]


def test_a_resource_gone_or_moved_on_has_no_tag_read(tags: dict[str, dict[str, str]]) -> None:
    for state in (None, "Stopped"):
        SEEN["state"] = state
        fresh = KIND.fresh(None, Settings(), NOW, app(), STOP)  # type: ignore[arg-type]
        assert (fresh.state, fresh.protected, fresh.guarded) == (state, None, None)
        assert SEEN["read"] == [] and "guarded" not in SEEN


def test_a_production_stage_on_the_space_protects_its_app_and_the_guard_is_not_asked(tags: dict[str, dict[str, str]]) -> None:
    tags[SPACE] = {"ml:stage": "prod"}
    result = gate(KIND, STOP, app(), ctx())
    assert result is not None and result.code is ResultCode.PROTECTED
    assert result.message == "production stage 'prod' on space/d-1/team (read again just before the change): nothing done"
    assert SEEN["read"] == [APP, SPACE] and "guarded" not in SEEN


def test_an_exempt_app_is_protected_before_its_space_is_read(tags: dict[str, dict[str, str]]) -> None:
    tags[APP] = {"reaper:exempt": "true"}
    result = gate(KIND, STOP, app(), ctx())
    assert result is not None and result.code is ResultCode.PROTECTED and SEEN["read"] == [APP]


def test_the_guard_judges_the_fresh_tags_and_a_batch_read_is_not_read_again(tags: dict[str, dict[str, str]]) -> None:
    SEEN["why"] = "instance store"
    result = gate(KIND, STOP, app(), ctx(), read=("InService", {"ml:owner": "bo@example.com"}))
    assert result is not None and result.code is ResultCode.REFUSED
    assert result.message == "refused to stop: instance store (read again just before the change): nothing done"
    assert SEEN["guarded"] == ({"ml:owner": "bo@example.com"}, "bo@example.com")
    assert SEEN["read"] == [SPACE]  # the app's tags came with the batch's read; its space's did not


def test_what_the_gate_let_through_goes_to_the_action(tags: dict[str, dict[str, str]]) -> None:
    c = ctx()
    assert gate(KIND, STOP, app(), c) is None
    assert c.gated(APP, "tags") == {"ml:owner": "ada@example.com"}


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ({}, None),
        ({"reaper:exempt": "true"}, "tagged reaper:exempt=true"),
        ({"reaper:snooze-until": "2026-12-31"}, "snoozed until 2026-12-31T00:00:00Z"),
        ({"ml:stage": "Production"}, "production stage 'Production'"),
        ({"reaper:exmept": "true"}, "not a reaper tag"),
    ],
)
def test_protected_says_why_no_change_may_be_made(given: dict[str, str], why: str | None) -> None:
    said = protected(read_tags(given, Settings()), Settings(), NOW)
    assert (said is None) if why is None else (said is not None and why in said)

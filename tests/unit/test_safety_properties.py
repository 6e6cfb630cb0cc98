"""Safety properties over every kind, for arbitrary tags, rule outcomes, states, modes and times:

1. no tag set makes reading tags raise;
2. a resource whose tags are unreadable, exempt, snoozed or production never gets `act` or `warn`,
   whatever the kind's rule said;
3. in enforce, a protective tag present when the action is about to run (set after discovery)
   stops the action and the warning: nothing is called that changes the resource.

The kind's own rule is replaced by whatever hypothesis draws, so the properties hold for every
decision any kind can make. `make test` runs 500 examples each; `make props` runs 10,000
(MLREAPER_PROP_EXAMPLES).
"""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from reaper import kinds
from reaper.core.model import Decision, Mode, Outcome, Resource, Verdict
from reaper.core.policy import USER_KEYS, is_production, read_tags, screen
from reaper.core.settings import Settings
from reaper.kinds import base
from reaper.kinds.base import ActContext, Kind
from reaper.sweep import pipeline

EXAMPLES = int(os.environ.get("MLREAPER_PROP_EXAMPLES", "500"))
PROPS = hsettings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck)
)  # a loaded CI machine must not fail a health check
HERE = "tests.unit.test_safety_properties"
NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)


# -- strategies ---------------------------------------------------------------------------------
def _cases(key: str) -> st.SearchStrategy[str]:
    return st.sampled_from([key, key.upper(), key.title(), f" {key} "])


reaper_keys = st.one_of(
    st.sampled_from(USER_KEYS + ("warned-at",)).flatmap(lambda k: _cases("reaper:" + k)),
    st.text(min_size=0, max_size=12).map(lambda s: "reaper:" + s),  # typos and junk under the prefix
)
other_keys = st.sampled_from(["ml:stage", "ML:Stage", "ml:owner", "ml:project", "Name", "team"])
values = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "true",
            "TRUE ",
            "false",
            "yes",
            "0",
            "5",
            "60",
            "-1",
            "1e400",
            "nan",
            "inf",
            "9" * 40,
            "prod",
            "Production",
            "dev",
            "2020-01-01",
            "2099-12-31",
            "9999-12-31T23:59:59-14:00",
            "0001-01-01T00:00:00+14:00",
            "loss:min",
            "acc:max",
            "median",
            "x:sideways",
        ]
    ),
    st.text(max_size=30),
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(lambda d: d.isoformat()),
)
tag_sets = st.dictionaries(st.one_of(reaper_keys, other_keys), values, max_size=8)
settings_strategy = st.builds(Settings, mode=st.sampled_from(list(Mode)), grace_minutes=st.integers(0, 240))
nows = st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2035, 1, 1), timezones=st.just(UTC))

# what the replaced rule decides, per draw (module state: hypothesis runs examples one at a time)
_drawn: dict[str, Any] = {}


def drawn_decide(resource: Resource, signal: Any, view: Any, settings: Settings, now: datetime) -> Decision:
    decision: Decision = _drawn["decision"]
    return decision


def drawn_state(clients: Any, resource: Resource) -> str:
    state: str = _drawn["state"]
    return state


def forbidden_action(ctx: Any, resource: Resource, decision: Decision) -> str:
    _drawn["acted"] = True
    return "changed"


def with_drawn_parts(kind: Kind) -> Kind:
    d = kind.declaration
    actions = {name: dataclasses.replace(a, run=f"{HERE}:forbidden_action") for name, a in d.actions.items()}
    # the kind's own rules (decide, and the kill-date choice that reads the kind's facts) are
    # replaced by what hypothesis draws: the properties must hold whatever a rule decides
    parts = dataclasses.replace(
        kind.parts,
        decide=drawn_decide,
        current_state=drawn_state,
        current_read=None,  # the gate reads the drawn state
        undo_hint=lambda resource, action: None,
        kill_decision=None,
        guard=None,  # the kind's own keep-reasons are rules too (the gate reads them)
    )
    # the declaration names its parts by reference (kinds/<kind>/parts.py): this module holds the drawn ones
    name = "drawn_parts_" + d.name.replace("-", "_")
    globals()[name] = parts
    return Kind(dataclasses.replace(d, parts=f"{HERE}:{name}", actions=actions))


def decisions(kind: Kind) -> st.SearchStrategy[Decision]:
    actions = sorted(kind.actions)
    return st.builds(
        Decision,
        verdict=st.sampled_from([Verdict.ACT, Verdict.WARN, Verdict.KEEP]),
        reason=st.just("drawn"),
        action=st.sampled_from(actions) if actions else st.none(),
        newly_warned=st.booleans(),
        skip_grace=st.booleans(),
    )


def protected(tags: dict[str, str], settings: Settings, now: datetime) -> bool:
    view = read_tags(tags, settings)
    return screen(view, settings, now) is not None or is_production(view, settings)


def resource(kind: Kind, tags: dict[str, str]) -> Resource:
    return Resource(kind.name, "r-1", f"arn:aws:sagemaker:us-east-1:123456789012:{kind.name}/r-1", "us-east-1", "InService", tags)


KIND_NAMES = sorted(kinds.KIND_PACKAGES)


# -- 1. reading tags never raises -----------------------------------------------------------------
@PROPS
@given(tags=tag_sets, settings=settings_strategy, now=nows)
def test_reading_any_tags_never_raises(tags: dict[str, str], settings: Settings, now: datetime) -> None:
    view = read_tags(tags, settings)
    screen(view, settings, now)
    is_production(view, settings)


# -- 2. protected resources never get act or warn ---------------------------------------------
@pytest.mark.parametrize("kind_name", KIND_NAMES)
def test_protected_resources_never_get_act_or_warn(kind_name: str) -> None:
    kind = with_drawn_parts(kinds.get(kind_name))

    @PROPS
    @given(tags=tag_sets, settings=settings_strategy, now=nows, decision=decisions(kind))
    def check(tags: dict[str, str], settings: Settings, now: datetime, decision: Decision) -> None:
        _drawn["decision"] = decision
        final, _view = pipeline.decide(kind, resource(kind, tags), None, settings, now)
        if protected(tags, settings, now):
            assert final.verdict not in (Verdict.ACT, Verdict.WARN), (tags, final)

    check()


# -- 3. a protective tag present at action time stops every change -----------------------------
@pytest.mark.parametrize("kind_name", KIND_NAMES)
def test_a_protective_tag_at_action_time_stops_the_change(kind_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = with_drawn_parts(kinds.get(kind_name))
    fresh: dict[str, dict[str, str]] = {}
    writes: list[str] = []
    monkeypatch.setattr(base, "current_tags", lambda clients, arn: fresh["tags"])  # the gate re-reads protection (Kind.fresh)
    monkeypatch.setattr(pipeline, "write_tags", lambda clients, arn, tags: writes.append(arn))
    monkeypatch.setattr(pipeline, "remove_tags", lambda clients, arn, keys: None)
    verdict = st.sampled_from([Verdict.ACT, Verdict.WARN])
    actions = sorted(kind.actions)

    @PROPS
    @given(late=tag_sets, settings=settings_strategy, now=nows, v=verdict, action=st.sampled_from(actions), data=st.data())
    def check(late: dict[str, str], settings: Settings, now: datetime, v: Verdict, action: str, data: st.DataObject) -> None:
        spec = kind.actions[action]
        _drawn.update(state=data.draw(st.sampled_from(sorted(spec.valid_origin_states))), acted=False)
        fresh["tags"] = late
        writes.clear()
        decision = Decision(v, "drawn", action=action, newly_warned=v is Verdict.WARN)
        outcome = Outcome(resource(kind, {}), decision, Mode.ENFORCE)
        ctx = ActContext(clients=None, settings=settings, now=now + timedelta(seconds=1), log=None, event_id="prop")  # type: ignore[arg-type]
        result = pipeline.enforce(kind, outcome, ctx)
        if protected(late, settings, ctx.now):
            assert not _drawn["acted"] and not writes, (late, result)
            refused_first = spec.needs_log and v is Verdict.ACT  # no action log: refused before any read
            assert result is not None and result.code.value == ("refused" if refused_first else "protected")
        else:
            warned_already = v is Verdict.WARN and any(k.strip().lower() == settings.tag("warned-at") for k in late)
            expected = ("refused",) if spec.needs_log and v is Verdict.ACT else ("duplicate",) if warned_already else ("done", "warned")
            assert result is not None and result.code.value in expected

    check()

"""The ec2 rule and guard on a box with an instance store, pure: the reading decides (empty: stop; files: keep
with the figure), without one today's rule; the guard lets the stop through only on an empty reading of this
sweep or a consent that covers what is on it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reaper.core.model import CONSENT, Decision, Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.ec2 import ActionName
from reaper.kinds.ec2.model import StoreMount, StoreReading
from reaper.kinds.ec2.rules import STORE_EMPTY, STORE_USED_GB, guard
from tests.helpers.ec2_rules import FACTS, run, signal

STORE_FACTS = replace(FACTS, instance_store_gib=250)
DATA = StoreReading("read", ("nvme1n1",), (StoreMount("nvme1n1", "/opt/dlami/nvme", 48_000_000_000, True),))
EMPTY = StoreReading("read", ("nvme1n1",), (StoreMount("nvme1n1", "/opt/dlami/nvme", 72_000_000, False),))
UNMOUNTED = StoreReading("read", ("nvme1n1",))


def idle(store: StoreReading | None):
    return replace(signal(gpu=[0.0] * 36), store=store)


def box() -> Resource:
    return Resource("ec2", "i-0abc", "arn:aws:ec2:us-east-1:1:instance/i-0abc", "us-east-1", "running", {}, facts=STORE_FACTS)


@pytest.mark.parametrize(("store", "words"), [(EMPTY, "/opt/dlami/nvme (no files)"), (UNMOUNTED, "nothing mounted")])
def test_an_idle_box_whose_store_holds_nothing_is_stopped_saying_so(store, words):
    decision = run(STORE_FACTS, idle(store))
    assert decision.verdict is Verdict.ACT and decision.action is ActionName.STOP
    assert words in decision.reason and "the stop loses nothing" in decision.reason and decision.evidence[STORE_EMPTY] is True


def test_an_idle_box_with_files_on_its_store_is_kept_with_how_much_and_where():
    decision = run(STORE_FACTS, idle(DATA))
    assert decision.verdict is Verdict.KEEP and decision.notify
    assert "48.0 GB of files at /opt/dlami/nvme (48.0 GB)" in decision.reason and decision.evidence[STORE_USED_GB] == 48.0


@pytest.mark.parametrize(
    "store",
    [None, StoreReading("failed", detail="x"), StoreReading("read")],  # no reading, a failed one, no store device found
)
def test_without_a_reading_the_rule_is_todays(store):
    decision = run(STORE_FACTS, idle(store))
    assert decision.verdict is Verdict.KEEP and "tag reaper:disposable=true" in decision.reason and STORE_EMPTY not in decision.evidence


def test_a_busy_box_is_kept_whatever_its_store_holds():
    assert run(STORE_FACTS, replace(signal(gpu=[80.0] * 36), store=EMPTY)).verdict is Verdict.KEEP


def test_the_guard_lets_a_stop_through_only_on_an_empty_reading_or_a_consent_that_covers_it():
    settings = Settings()
    view = read_tags({}, settings)
    act = Decision(Verdict.ACT, "idle", action=ActionName.STOP)
    assert "instance store" in (guard(box(), view, settings) or "")
    assert "instance store" in (guard(box(), view, settings, act) or "")
    assert guard(box(), view, settings, act.with_(evidence={STORE_EMPTY: True})) is None
    assert guard(box(), view, settings, act.with_(evidence={CONSENT: {"gb": 48.0, "user": "U1"}, STORE_USED_GB: 48.0})) is None
    assert guard(box(), view, settings, act.with_(evidence={CONSENT: {"gb": 48.0, "user": "U1"}})) is None  # no fresh figure
    grown = guard(box(), view, settings, act.with_(evidence={CONSENT: {"gb": 48.0, "user": "U1"}, STORE_USED_GB: 200.0}))
    assert grown is not None and "more than the 48.0 GB consented to" in grown
    # a consent is for the instance store only: a cluster's node stays its cluster's
    managed = replace(box(), tags={"aws:autoscaling:groupName": "g"})
    assert "Auto Scaling" in (guard(managed, read_tags(managed.tags, settings), settings, act.with_(evidence={CONSENT: {"gb": 1.0}})) or "")

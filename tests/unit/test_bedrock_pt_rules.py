"""The bedrock-pt decision, pure: a committed Provisioned Throughput is never deleted, unknown is not idle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.core.model import Resource, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.bedrock_pt.model import PtFacts, PtSignal
from reaper.kinds.bedrock_pt.rules import decide, kill_decision

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)
SETTINGS = Settings()


def pt(commitment: str | None = None, expires: datetime | None = None, created: datetime = NOW - timedelta(days=8)) -> Resource:
    facts = PtFacts("pt", "arn:m", "arn:f", 2, 2, commitment, expires, created, created, 20.0)
    arn = "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/0123abcd4567"
    return Resource("bedrock-pt", "pt", arn, "us-east-1", "InService", instance_count=2, hourly_usd=40.0, facts=facts)


def test_no_data_read_is_unknown_not_idle():
    # Given an old PT without commitment whose invocations could not be read
    d = decide(pt(), None, read_tags({}, SETTINGS), SETTINGS, NOW)
    # Then it is kept
    assert d.verdict is Verdict.KEEP and "unknown is not idle" in d.reason


def test_a_committed_pt_is_never_deleted_even_idle_or_past_its_kill_date():
    r = pt("SixMonths", NOW + timedelta(days=60))
    d = decide(r, PtSignal([]), read_tags({}, SETTINGS), SETTINGS, NOW)
    assert d.verdict is Verdict.KEEP and d.action is None and d.notify and "$6,720.00 idle over 168 h" in d.reason
    assert kill_decision(r, PtSignal([]), read_tags({}, SETTINGS), SETTINGS, NOW, "kill date passed") is None
    assert kill_decision(pt(), PtSignal([]), read_tags({}, SETTINGS), SETTINGS, NOW, "kill date passed").action == "delete"


def test_the_renewal_notice_starts_7_days_before_the_term_ends_once_per_term():
    view = read_tags({}, SETTINGS)
    far = decide(pt("OneMonth", NOW + timedelta(days=8)), PtSignal([]), view, SETTINGS, NOW)
    near = decide(pt("OneMonth", NOW + timedelta(days=7)), PtSignal([]), view, SETTINGS, NOW)
    assert "renews automatically" not in far.reason and "renews automatically" in near.reason
    assert near.notify_key and near.notify_key.startswith("bedrock-pt-renewal:") and near.notify_key != far.notify_key


def test_a_shorter_window_from_the_tag_decides_on_its_own_hours():
    view = read_tags({"reaper:idle-minutes": "1440"}, SETTINGS)
    old_calls = PtSignal([(NOW - timedelta(days=3), 5.0)])
    d = decide(pt(), old_calls, view, SETTINGS, NOW)
    assert d.verdict is Verdict.ACT and "$960.00 idle over 24 h" in d.reason


def test_no_data_for_a_pt_whose_series_was_never_listed_is_unknown_told_and_never_deleted():
    # Given an old PT without commitment, no invocations in the window, and no series of its own ever listed
    d = decide(pt(), PtSignal([], series_seen=False), read_tags({}, SETTINGS), SETTINGS, NOW)
    # Then it is kept as unknown with its reason code, and its owner is told once, with what it costs
    assert d.verdict is Verdict.KEEP and d.action is None and d.unknown == "bedrock-series-never-seen"
    assert d.notify and d.notify_key == f"bedrock-series-never-seen:{pt().arn}"
    assert "lists no AWS/Bedrock Invocations series" in d.reason and "$6,720.00 idle over 168 h" in d.reason and "not deleted" in d.reason


def test_no_data_for_a_pt_whose_series_was_listed_is_judged_as_before():
    d = decide(pt(), PtSignal([], series_seen=True), read_tags({}, SETTINGS), SETTINGS, NOW)
    assert d.verdict is Verdict.ACT and d.action == "delete" and d.unknown is None


def test_the_never_seen_code_is_registered_with_a_fix():
    from reaper.core.coverage import REASONS

    assert "bedrock-series-never-seen" in REASONS and "kill-after" in REASONS["bedrock-series-never-seen"].fix

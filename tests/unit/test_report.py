"""`reaper report` from action-log entries: honest per kind, bounded, grouped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.report import format_report, group, reclaimed, would_act

NOW = datetime(2026, 12, 2, 18, 0, tzinfo=UTC)


def entry(at: datetime, rid: str, verdict: str = "act", executed: bool = True, kind: str = "notebook", hourly: float | None = 2.0, owner: str = "ana", **evidence: object) -> dict:
    return {"logged_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "kind": kind, "id": rid, "region": "us-east-1", "verdict": verdict,
            "executed": executed, "action": "stop", "hourly_usd": hourly, "owner": owner, "project": "llm", "evidence": dict(evidence)}


def test_a_stopped_notebook_saves_its_price_until_it_is_seen_running_again():
    # Given a notebook stopped 10 h ago and warned again (so running) 4 h later
    entries = [entry(NOW - timedelta(hours=10), "nb"), entry(NOW - timedelta(hours=6), "nb", verdict="warn", executed=False)]
    (r,) = reclaimed(entries, NOW)
    assert r.hours_off == 4 and r.saved_usd == 8


def test_off_until_now_when_nothing_says_it_came_back():
    (r,) = reclaimed([entry(NOW - timedelta(hours=3), "nb")], NOW)
    assert r.hours_off == 3 and r.saved_usd == 6


def test_an_endpoint_restore_ends_its_time_off():
    restored = {"logged_at": (NOW - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), "type": "notice", "kind": "endpoint", "id": "ep", "region": "us-east-1", "title": "Restored endpoint ep"}
    (r,) = reclaimed([entry(NOW - timedelta(hours=5), "ep", kind="endpoint"), restored], NOW)
    assert r.hours_off == 4


def test_a_stopped_job_saves_at_most_what_its_ceiling_left_never_a_month():
    # $40/h job, 2 h of a 10 h ceiling, $80 of a $200 ceiling: dollars bind first ($120 < 8 h * $40)
    job = entry(NOW - timedelta(hours=1), "j", kind="training-job", hourly=40.0, estimated_usd=80.0, max_usd=200.0, elapsed_hours=2.0, max_hours=10.0)
    (r,) = reclaimed([job], NOW)
    assert r.hours_off is None and r.saved_usd == 120
    past = entry(NOW, "k", kind="training-job", hourly=40.0, estimated_usd=250.0, max_usd=200.0, elapsed_hours=2.0, max_hours=10.0)
    assert reclaimed([past], NOW)[0].saved_usd == 0


def test_dry_run_and_errors_reclaim_nothing_and_unpriced_is_said():
    entries = [entry(NOW - timedelta(hours=2), "dry", executed=False), entry(NOW - timedelta(hours=2), "bad", verdict="error", executed=False),
               entry(NOW - timedelta(hours=2), "nop", hourly=None, owner="bo")]
    items = reclaimed(entries, NOW)
    assert [r.entry["id"] for r in items] == ["nop"]
    groups = group(items, "owner")
    text = format_report(groups, "owner", NOW - timedelta(days=7), would_act(entries))
    assert "1 without a price" in text and "1 resource(s) would have been acted on" in text


def test_grouped_by_owner_kind_or_project_with_missing_values_named():
    entries = [entry(NOW - timedelta(hours=2), "a"), entry(NOW - timedelta(hours=1), "b", owner=""), entry(NOW - timedelta(hours=1), "c", kind="ec2", hourly=10.0)]
    by_owner = {g.key: g for g in group(reclaimed(entries, NOW), "owner")}
    assert set(by_owner) == {"ana", "(no owner)"} and by_owner["ana"].saved_usd == 14
    by_kind = group(reclaimed(entries, NOW), "kind")
    assert [g.key for g in by_kind] == ["ec2", "notebook"]  # most saved first
    assert group(reclaimed(entries, NOW), "project")[0].to_json("project") == {
        "project": "llm", "resources": 3, "actions": 3, "hours_off": 4.0, "saved_usd": 16.0, "unpriced": 0, "jobs_stopped": 0}


def test_entries_with_unreadable_times_are_skipped_not_fatal():
    assert reclaimed([{"logged_at": "garbage", "verdict": "act", "executed": True}, {"verdict": "act"}], NOW) == []

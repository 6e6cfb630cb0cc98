"""`reaper report` from action-log entries: honest per kind, bounded, grouped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.record.logentry import BadEntry, from_mapping
from reaper.report.summary import daily_savings, format_report, group, off_now, reclaimed, unconfirmed, would_act
from tests.helpers.log_entries import JOB_UNDER_CEILING, endpoint_notice, logged_stop

NOW = datetime(2026, 12, 2, 18, 0, tzinfo=UTC)


entry = logged_stop  # a stop as the log reads it back (tests/helpers/log_entries.py)


def test_a_stopped_notebook_saves_its_price_until_it_is_seen_running_again():
    # Given a notebook stopped 10 h ago and warned again (so running) 4 h later
    entries = [entry(NOW - timedelta(hours=10), "nb"), entry(NOW - timedelta(hours=6), "nb", verdict="warn", executed=False)]
    (r,) = reclaimed(entries, NOW)
    assert r.hours_off == 4 and r.saved_usd == 8


def test_off_until_now_when_nothing_says_it_came_back():
    (r,) = reclaimed([entry(NOW - timedelta(hours=3), "nb")], NOW)
    assert r.hours_off == 3 and r.saved_usd == 6


def test_an_endpoint_restore_ends_its_time_off():
    restored = from_mapping(endpoint_notice(NOW - timedelta(hours=1), "Restored endpoint ep"))
    (r,) = reclaimed([entry(NOW - timedelta(hours=5), "ep", kind="endpoint"), restored], NOW)
    assert r.hours_off == 4


def test_a_stopped_job_saves_at_most_what_its_ceiling_left_never_a_month():
    # $40/h job, 2 h of a 10 h ceiling, $80 of a $200 ceiling: dollars bind first ($120 < 8 h * $40)
    job = entry(
        NOW - timedelta(hours=1),
        "j",
        **JOB_UNDER_CEILING,
    )
    (r,) = reclaimed([job], NOW)
    assert r.hours_off is None and r.saved_usd == 120
    past = entry(NOW, "k", kind="training-job", hourly=40.0, estimated_usd=250.0, max_usd=200.0, elapsed_hours=2.0, max_hours=10.0)
    assert reclaimed([past], NOW)[0].saved_usd == 0


def test_dry_run_and_errors_reclaim_nothing_and_unpriced_is_said():
    entries = [
        entry(NOW - timedelta(hours=2), "dry", executed=False),
        entry(NOW - timedelta(hours=2), "bad", verdict="error", executed=False),
        entry(NOW - timedelta(hours=2), "nop", hourly=None, owner="bo"),
    ]
    items = reclaimed(entries, NOW)
    assert [r.entry.id for r in items] == ["nop"]
    groups = group(items, "owner")
    text = format_report(groups, "owner", NOW - timedelta(days=7), would_act(entries))
    assert "1 without a price" in text and "1 resource(s) would have been acted on" in text


def test_grouped_by_owner_kind_or_project_with_missing_values_named():
    entries = [
        entry(NOW - timedelta(hours=2), "a"),
        entry(NOW - timedelta(hours=1), "b", owner=""),
        entry(NOW - timedelta(hours=1), "c", kind="ec2", hourly=10.0),
    ]
    by_owner = {g.key: g for g in group(reclaimed(entries, NOW), "owner")}
    assert set(by_owner) == {"ana", "(no owner)"} and by_owner["ana"].saved_usd == 14
    by_kind = group(reclaimed(entries, NOW), "kind")
    assert [g.key for g in by_kind] == ["ec2", "notebook"]  # most saved first
    assert group(reclaimed(entries, NOW), "project")[0].to_json("project") == {
        "project": "llm",
        "resources": 3,
        "actions": 3,
        "hours_off": 4.0,
        "saved_usd": 16.0,
        "unpriced": 0,
        "jobs_stopped": 0,
    }


def test_entries_with_unreadable_times_are_skipped_not_fatal():
    assert reclaimed([from_mapping({"logged_at": "garbage", "verdict": "act", "executed": True})], NOW) == []
    with pytest.raises(BadEntry, match="logged_at"):  # no time at all: refused where it is read (ActionLog.entries skips it)
        from_mapping({"verdict": "act"})


def test_savings_per_day_split_at_midnight_jobs_on_their_day_unpriced_nowhere():
    # Given a $2/h notebook stopped at 20:00 two days ago and still off, a job stopped yesterday, an unpriced stop
    stop = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
    entries = [
        entry(stop, "nb"),
        entry(NOW - timedelta(days=1), "job", kind="training-job", hourly=40.0, estimated_usd=100.0, max_usd=300.0),
        entry(NOW - timedelta(hours=3), "free", hourly=None),
    ]
    # When the savings are spread over the days of the report
    days = daily_savings(reclaimed(entries, NOW), NOW - timedelta(days=7), NOW)
    # Then every day is there, the notebook saves 4 h, 24 h and 18 h of $2, and the job's bound counts once
    assert len(days) == 8 and days[datetime(2026, 11, 25).date()] == {}
    assert days[datetime(2026, 11, 30).date()] == {"notebook": 8.0}
    assert days[datetime(2026, 12, 1).date()] == {"notebook": 48.0, "training-job": 200.0}
    assert days[datetime(2026, 12, 2).date()] == {"notebook": 36.0}
    assert sum(v for d in days.values() for v in d.values()) == 8 + 48 + 36 + 200


def test_an_endpoint_said_to_be_back_is_no_longer_off_and_off_now_counts_the_rest():
    back = from_mapping(endpoint_notice(NOW - timedelta(hours=1), "Endpoint ep is back: InService"))
    entries = [
        entry(NOW - timedelta(hours=5), "ep", kind="endpoint", hourly=3.0),
        back,
        entry(NOW - timedelta(hours=2), "nb", hourly=1.5),
        entry(NOW - timedelta(hours=2), "box", kind="ec2", hourly=None),
        entry(NOW - timedelta(hours=2), "job", kind="training-job", estimated_usd=1.0),
    ]
    items = reclaimed(entries, NOW)
    assert next(r for r in items if r.entry.id == "ep").hours_off == 4
    assert off_now(items) == (2, 1.5, 1)  # nb and box (unpriced); not ep, and a job is never "off"
    text = format_report(group(items, "kind"), "kind", NOW - timedelta(days=1), 0, 120, items)
    assert "off now: 2 resource(s) that cost $1.50/h together, about $36.00 a day while they stay off; 1 without a price" in text


def test_the_report_table_fits_its_width_with_a_long_owner():
    entries = [
        entry(NOW - timedelta(hours=2), "a", owner="x" * 300),
        entry(NOW - timedelta(hours=2), "job", kind="training-job", estimated_usd=1.0, max_usd=5.0),
    ]
    items = reclaimed(entries, NOW)
    for width in (120, 80, 60):
        lines = format_report(group(items, "owner"), "owner", NOW - timedelta(days=7), 3, width, items).splitlines()
        assert all(len(line) <= width for line in lines), (width, max(map(len, lines)))
        assert any(line.startswith("x") and "…" in line for line in lines)


def test_a_change_recorded_ahead_and_never_confirmed_is_neither_done_nor_saved():
    # Given a stop written ahead of the call (executed, unconfirmed) whose sweep died, and one confirmed stop
    begun = from_mapping({**entry(NOW - timedelta(hours=5), "nb-begun").stored, "unconfirmed": True})
    entries = [begun, entry(NOW - timedelta(hours=3), "nb-done")]
    # Then only the confirmed stop is reclaimed, by the report, its savings per day and the metric's code
    assert [r.entry.id for r in reclaimed(entries, NOW)] == ["nb-done"]
    assert sum(v for day in daily_savings(reclaimed(entries, NOW), NOW - timedelta(days=1), NOW).values() for v in day.values()) == 6
    assert unconfirmed(entries) == 1 and would_act(entries) == 0
    from reaper.report.savings_metric import saved_between

    assert sum(f.saved_usd for f in saved_between(entries, NOW - timedelta(days=1), NOW).values()) == 6


def test_reaper_log_never_shows_an_unconfirmed_change_as_done():
    from reaper.cli.formats import as_logged, log_row
    from reaper.cli.output import format_log_line

    begun = from_mapping({**entry(NOW - timedelta(hours=5), "nb-begun").stored, "unconfirmed": True, "reason": "idle"})
    assert " unconfirmed stop " in format_log_line(begun)
    assert as_logged(begun)["executed"] is False and as_logged(begun)["unconfirmed"] is True
    assert log_row(begun)["executed"] is False


def test_each_days_bar_is_drawn_over_its_own_day_not_centred_on_its_midnight():
    # Given savings on three days, the middle one by two kinds (a stacked bar)
    from matplotlib.dates import date2num

    from reaper.report.chart import savings_figure

    days = [NOW.date() - timedelta(days=n) for n in (2, 1, 0)]
    daily = {days[0]: {"notebook": 3.0}, days[1]: {"notebook": 1.0, "endpoint": 2.0}, days[2]: {}}
    # When the chart is drawn
    bars = savings_figure(daily, "t").axes[0].patches
    # Then every bar (each kind of each day) lies inside the day it counts, from its midnight to the next
    assert len(bars) == 2 * len(days)
    for i, bar in enumerate(bars):
        midnight = float(date2num(days[i % len(days)]))
        assert midnight < bar.get_x() and bar.get_x() + bar.get_width() < midnight + 1, (i, bar.get_x())

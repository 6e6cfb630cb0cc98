"""Usual hours by hour of week: learned from hourly traffic, or pinned by the reaper:wake tag."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.core.policy import read_tags
from reaper.core.rhythm import learn, parse_pinned, slot_of
from reaper.core.settings import Settings

NOW = datetime(2026, 11, 18, 6, 10, tzinfo=UTC)  # a Wednesday


def test_an_hour_of_week_busy_in_both_weeks_is_usual_and_a_one_off_is_not():
    # Given traffic on Tuesdays at 14:00 in both past weeks, and once on a Monday at 11:00
    tuesdays = [datetime(2026, 11, 10, 14, tzinfo=UTC), datetime(2026, 11, 17, 14, tzinfo=UTC)]
    rhythm = learn([(t, 4.0) for t in tuesdays] + [(datetime(2026, 11, 16, 11, tzinfo=UTC), 1.0)], NOW)
    # Then Tuesday 14:00 is usual, Monday 11:00 is not, and the next start is next Tuesday 14:00
    assert rhythm.slots == {slot_of(tuesdays[0])}
    assert rhythm.next_start(NOW) == datetime(2026, 11, 24, 14, tzinfo=UTC)


def test_an_hour_of_day_busy_on_three_of_seven_days_is_usual_every_day():
    # Given a nightly batch at 02:00 on the last three days
    rhythm = learn([(NOW.replace(hour=2, minute=0) - timedelta(days=d), 9.0) for d in range(3)], NOW)
    # Then 02:00 is usual on every day, and it is needed within 30 min at 01:40 (not at 00:30)
    assert len(rhythm.slots) == 7
    assert rhythm.needed_within(datetime(2026, 11, 19, 1, 40, tzinfo=UTC), timedelta(minutes=30))
    assert not rhythm.needed_within(datetime(2026, 11, 19, 0, 30, tzinfo=UTC), timedelta(minutes=30))


def test_no_traffic_learns_no_usual_hours():
    assert learn([], NOW).next_start(NOW) is None


def test_a_pinned_schedule_is_read_in_the_working_hours_timezone():
    # Given mon-fri 08:00-18:00 in Berlin (UTC+1 in November)
    rhythm = parse_pinned("mon-fri 08:00-18:00", "Europe/Berlin", NOW)
    # Then its hours are 07:00-17:00 UTC on weekdays
    assert rhythm is not None and len(rhythm.slots) == 50
    assert rhythm.needed_at(datetime(2026, 11, 18, 7, 0, tzinfo=UTC)) and not rhythm.needed_at(datetime(2026, 11, 21, 10, tzinfo=UTC))


def test_a_malformed_wake_tag_is_a_bad_tag():
    # Given wake tags that do not parse, and one that does
    settings = Settings()
    for value in ("weekdays", "mon-fri 8-18", "mon-fri 25:00-26:00", "xyz 08:00-09:00", "mon 08:00-08:00"):
        # Then each is a problem (the resource is exempt), and the good one is read
        assert read_tags({"reaper:wake": value}, settings).problems, value
    assert read_tags({"reaper:wake": " Mon-Fri 08:00-18:00 "}, settings).wake == "Mon-Fri 08:00-18:00"

"""The cursor of a long sweep: the next full sweep's interval, when a continuation is stale."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.continuation import FALLBACK_MAX_AGE, Cursor, event, interval, parse, stale
from reaper.errors import BadEventError
from reaper.settings import Settings

STARTED = datetime(2026, 12, 2, 3, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        ("rate(15 minutes)", timedelta(minutes=15)),
        ("rate(1 hour)", timedelta(hours=1)),
        (" RATE(2 days) ", timedelta(days=2)),
        ("cron(0 17 * * ? *)", None),
        ("", None),
        (None, None),
        ("rate(-5 minutes)", None),
    ],
)
def test_interval_of_a_rate_schedule(schedule, expected):
    assert interval(schedule) == expected


def test_a_continuation_is_stale_once_the_next_full_sweep_is_due():
    c = Cursor("endpoint", "us-east-1", "ep-9", STARTED, 2, "ev")
    s = Settings(sweep_schedule="rate(15 minutes)")
    assert stale(c, s, STARTED + timedelta(minutes=14, seconds=59)) is None
    assert "next full sweep" in (stale(c, s, STARTED + timedelta(minutes=15)) or "")
    # a cron schedule: an hour at most
    cron = Settings(sweep_schedule="cron(0 * * * ? *)")
    assert stale(c, cron, STARTED + FALLBACK_MAX_AGE - timedelta(seconds=1)) is None
    assert stale(c, cron, STARTED + FALLBACK_MAX_AGE) is not None


def test_the_event_a_schedule_delivers_parses_back_to_its_cursor():
    c = Cursor("endpoint", "eu-west-1", "", STARTED, 7, "budget:0a1b")
    ev = event(c, STARTED + timedelta(minutes=6))
    assert parse(ev["detail"], "endpoint", ("us-east-1", "eu-west-1"), STARTED + timedelta(minutes=6)) == c
    with pytest.raises(BadEventError, match="does not sweep"):
        parse(ev["detail"], "endpoint", ("us-east-1",), STARTED)


@pytest.mark.parametrize("kind", ["studio-app", "endpoint"])
def test_the_example_continuation_events_are_what_the_functions_take(kind):
    import json
    from pathlib import Path

    from reaper.continuation import DETAIL_TYPE, SOURCE, schedule_name
    from reaper.events import parse_eventbridge

    ev = parse_eventbridge(json.loads((Path(__file__).parents[2] / "events" / f"{kind}-continuation.json").read_text()))
    assert (ev.source, ev.detail_type) == (SOURCE, DETAIL_TYPE)
    cursor = parse(ev.detail, kind, ("us-east-1",), STARTED + timedelta(minutes=5))
    assert cursor.kind == kind and cursor.part == 2 and ev.id == schedule_name(cursor)

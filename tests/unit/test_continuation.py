"""The cursor of a long sweep, the schedule's interval, and when a chain record is alive."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.core.errors import BadEventError
from reaper.core.timeutil import interval
from reaper.record.chain_record import DELAY, RUNNING, WINDOW, ChainRecord
from reaper.sweep.continuation import Cursor, event, parse

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


def test_a_chain_is_alive_while_its_next_part_was_arranged_within_the_window():
    # the window: twice the part delay plus the Lambda maximum timeout (never the function's own, shorter one)
    assert 2 * (DELAY + timedelta(minutes=15)) == WINDOW
    arranged = STARTED + timedelta(minutes=14)
    rec = ChainRecord("ev", STARTED, 5, RUNNING, arranged, arranged + DELAY)
    assert rec.alive(arranged + WINDOW) and not rec.alive(arranged + WINDOW + timedelta(seconds=1))
    # long after the chain started (past any schedule interval) it is alive as long as it keeps arranging parts
    assert rec.alive(STARTED + timedelta(minutes=40))
    # a finished or ended chain is never alive; nor a record without its arranging time
    assert not ChainRecord("ev", STARTED, 5, "finished", arranged, arranged).alive(arranged)
    assert not ChainRecord("ev", STARTED, 5, RUNNING).alive(arranged)
    assert "part 5 due 2026-12-02T03:30:00Z" in rec.describe()


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

    from reaper.core.events import parse_eventbridge
    from reaper.sweep.continuation import DETAIL_TYPE, SOURCE, schedule_name

    ev = parse_eventbridge(json.loads((Path(__file__).parents[2] / "events" / f"{kind}-continuation.json").read_text()))
    assert (ev.source, ev.detail_type) == (SOURCE, DETAIL_TYPE)
    cursor = parse(ev.detail, kind, ("us-east-1",), STARTED + timedelta(minutes=5))
    assert cursor.kind == kind and cursor.part == 2 and ev.id == schedule_name(cursor)

"""Reading the contract's tags: values trimmed and case-insensitive; unreadable = exempt."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reaper.model import Verdict
from reaper.policy import read_tags, screen
from reaper.settings import Settings

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
S = Settings()


def test_values_are_trimmed_and_case_insensitive():
    view = read_tags({"reaper:exempt": " TRUE ", "ML:Stage": " Dev", "reaper:idle-minutes": " 90 "}, S)
    assert view.exempt is True and view.stage == "Dev" and view.idle_minutes == 90 and view.problems == ()


@pytest.mark.parametrize(
    "key,value",
    [
        ("reaper:exempt", "yes"),
        ("reaper:idle-minutes", "4"),
        ("reaper:idle-minutes", "1.5"),
        ("reaper:idle-minutes", "soon"),
        ("reaper:max-hours", "0"),
        ("reaper:max-hours", "-2"),
        ("reaper:max-usd", "nan"),
        ("reaper:max-usd", "inf"),
        ("reaper:snooze-until", "next friday"),
        ("reaper:watch-metric", "loss"),
        ("reaper:watch-metric", "loss:lower"),
        ("reaper:disposable", "maybe"),
    ],
)
def test_an_unreadable_reaper_tag_exempts_and_names_the_tag(key, value):
    view = read_tags({key: value}, S)
    decision = screen(view, S, NOW)
    assert decision is not None and decision.verdict is Verdict.EXEMPT
    assert key in decision.reason and decision.notify is True


@pytest.mark.parametrize(
    "value,expected",
    [
        ("2026-12-05", datetime(2026, 12, 5, tzinfo=UTC)),
        ("2026-12-05T18:30:00", datetime(2026, 12, 5, 18, 30, tzinfo=UTC)),
        ("2026-12-05T18:30:00Z", datetime(2026, 12, 5, 18, 30, tzinfo=UTC)),
        ("2026-12-05T18:30:00+02:00", datetime(2026, 12, 5, 16, 30, tzinfo=UTC)),
    ],
)
def test_snooze_dates_are_utc_unless_an_offset_is_given(value, expected):
    assert read_tags({"reaper:snooze-until": value}, S).snooze_until == expected


def test_snooze_exempts_before_and_not_after():
    view = read_tags({"reaper:snooze-until": "2026-12-03"}, S)
    assert screen(view, S, NOW) is not None
    assert screen(view, S, datetime(2026, 12, 3, 0, 0, tzinfo=UTC)) is None


def test_watch_metric_reads_name_and_direction():
    assert read_tags({"reaper:watch-metric": "validation:loss : MIN"}, S).watch_metric == ("validation:loss", "min")
    assert read_tags({"reaper:watch-metric": "val_acc:max"}, S).watch_metric == ("val_acc", "max")


def test_a_changed_prefix_is_honoured():
    settings = Settings(tag_prefix="acme-reaper/")
    assert read_tags({"acme-reaper/exempt": "true"}, settings).exempt is True
    assert read_tags({"reaper:exempt": "true"}, settings).exempt is False

"""Reading the contract's tags: values trimmed and case-insensitive; unreadable = exempt."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reaper.core.model import Verdict
from reaper.core.policy import read_tags, screen
from reaper.core.settings import Settings

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


@pytest.mark.parametrize(
    "tags",
    [
        {"reaper:exempt": "true", "REAPER:EXEMPT": " TRUE "},
        {"ml:stage": "dev", "ML:Stage": "DEV"},
        {"reaper:idle-minutes": "90", "Reaper:Idle-Minutes": "90 "},
    ],
)
def test_two_spellings_of_a_key_whose_values_agree_case_insensitively_are_no_problem(tags):
    # values are compared case-insensitively (the contract), so only different values make a conflict
    assert read_tags(tags, S).problems == ()


@pytest.mark.parametrize(
    "key,value",
    [
        ("reaper:idle-minutes", "1_000"),  # Python's int() takes it; no one means 1000 by it
        ("reaper:idle-minutes", "\u0663\u0660"),  # Arabic-Indic 30: int() takes it too
        ("reaper:max-hours", "1_0"),
        ("reaper:max-usd", "\uff15\uff10"),  # full-width 50
        ("reaper:budget-usd", "0x10"),
        ("reaper:max-hours", "1e-400"),  # parses to 0.0: not > 0
    ],
)
def test_numbers_other_than_plain_ascii_decimals_are_unreadable(key, value):
    decision = screen(read_tags({key: value}, S), S, NOW)
    assert decision is not None and decision.verdict is Verdict.EXEMPT and key in decision.reason


@pytest.mark.parametrize(
    "key,value,field,expected",
    [
        ("reaper:idle-minutes", "5", "idle_minutes", 5),
        ("reaper:idle-minutes", "10080", "idle_minutes", 10080),
        ("reaper:idle-minutes", "+30", "idle_minutes", 30),
        ("reaper:max-hours", "8760", "max_hours", 8760.0),
        ("reaper:max-hours", ".5", "max_hours", 0.5),
        ("reaper:max-usd", "1000000", "max_usd", 1_000_000.0),
        ("reaper:max-usd", "2.5e3", "max_usd", 2500.0),
        ("reaper:budget-usd", " 300 ", "budget_usd", 300.0),
    ],
)
def test_numbers_at_the_bounds_and_in_plain_forms_are_read(key, value, field, expected):
    view = read_tags({key: value}, S)
    assert view.problems == () and getattr(view, field) == expected


@pytest.mark.parametrize(
    "key,value",
    [("reaper:idle-minutes", "10081"), ("reaper:max-hours", "8760.01"), ("reaper:max-usd", "1000000.01"), ("reaper:budget-usd", "-0")],
)
def test_numbers_just_past_the_bounds_are_unreadable(key, value):
    assert any(key in p for p in read_tags({key: value}, S).problems)

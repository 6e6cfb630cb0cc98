from __future__ import annotations

import pytest

from reaper.core.errors import ConfigError
from reaper.core.model import Mode
from reaper.core.settings import Settings


def test_defaults_are_the_safe_ones():
    s = Settings.from_env({})
    assert s.mode is Mode.DRY_RUN and s.grace_minutes == 60 and s.idle_for("notebook") == 60
    assert s.production_stages == ("prod", "production") and s.off_hours.enabled is False


def test_environment_as_the_template_sets_it():
    s = Settings.from_env(
        {
            "REAPER_MODE": "Enforce",
            "REAPER_KIND_MODES": "notebook=dry-run",
            "REAPER_GRACE_MINUTES": "0",
            "REAPER_PRODUCTION_STAGES": "Prod, live",
            "REAPER_OFF_HOURS": "true",
            "REAPER_TIMEZONE": "Europe/Berlin",
            "REAPER_WORK_DAYS": "mon-fri",
            "REAPER_WORK_START": "07:30",
            "REAPER_IDLE_MINUTES_NOTEBOOK": "90",
        }
    )
    assert s.mode_for("notebook") is Mode.DRY_RUN and s.mode_for("endpoint") is Mode.ENFORCE
    assert s.grace_for("notebook") == 0 and s.production_stages == ("prod", "live")
    assert s.off_hours.days == ("mon", "tue", "wed", "thu", "fri") and s.off_hours.start.hour == 7
    assert s.idle_for("notebook") == 90


@pytest.mark.parametrize(
    "env,word",
    [
        ({"REAPER_MODE": "yolo"}, "mode"),
        ({"REAPER_GRACE_MINUTES": "-1"}, "grace_minutes"),
        ({"REAPER_KIND_MODES": "notebook"}, "REAPER_KIND_MODES"),
        ({"REAPER_KIND_MODES": "printer=enforce"}, "printer"),
        ({"REAPER_TIMEZONE": "Mars/Olympus"}, "timezone"),
        ({"REAPER_WORK_START": "25:00"}, "start"),
        ({"REAPER_WORK_DAYS": "mon,funday"}, "funday"),
        ({"REAPER_IDLE_MINUTES_NOTEBOOK": "2"}, "idle"),
    ],
)
def test_bad_configuration_is_one_clear_line(env, word):
    with pytest.raises(ConfigError) as err:
        Settings.from_env(env)
    message = str(err.value)
    assert "\n" not in message and word in message
    assert "Value error" not in message and "Assertion failed" not in message  # no library wording (issue 39)


def test_weekend_day_ranges_wrap():
    s = Settings.from_env({"REAPER_WORK_DAYS": "sat-mon"})
    assert s.off_hours.days == ("sat", "sun", "mon")

"""Off-hours, shared by the notebook and ec2 kinds (policy.off_hours_stop) and worded once for every
kind (policy.off_hours_reason): the same hours, stages and message wherever it applies."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reaper.core.model import Verdict
from reaper.core.policy import off_hours_reason, off_hours_stop, read_tags
from reaper.core.settings import OffHours, Settings
from reaper.kinds.notebook import ActionName

STOP = ActionName.STOP  # the kind's own action member (notebook and ec2 both call theirs "stop")

ON = Settings(off_hours=OffHours(enabled=True, timezone="Europe/Berlin", start="08:00", end="19:00"))
WEDNESDAY_NOON = datetime(2026, 12, 2, 11, 0, tzinfo=UTC)  # 12:00 in Berlin
WEDNESDAY_NIGHT = datetime(2026, 12, 2, 18, 30, tzinfo=UTC)  # 19:30 in Berlin: past the end
SATURDAY_NOON = datetime(2026, 12, 5, 11, 0, tzinfo=UTC)


@pytest.mark.parametrize("tags", [{"ml:stage": "dev"}, {"ml:stage": " SANDBOX "}, {}])
def test_dev_and_stage_less_boxes_stop_outside_working_hours(tags):
    for when in (WEDNESDAY_NIGHT, SATURDAY_NOON):
        d = off_hours_stop(read_tags(tags, ON), ON, when, STOP)
        assert d is not None and d.verdict is Verdict.ACT and d.action == "stop" and d.evidence == {"policy": "off-hours"}
        assert d.reason == "outside working hours (mon,tue,wed,thu,fri 08:00-19:00 Europe/Berlin)" == off_hours_reason(ON)


@pytest.mark.parametrize("tags", [{"ml:stage": "prod"}, {"ml:stage": "research"}])
def test_other_stages_are_left_to_their_activity(tags):
    assert off_hours_stop(read_tags(tags, ON), ON, WEDNESDAY_NIGHT, STOP) is None


def test_nothing_in_working_hours_or_when_off_hours_is_off():
    dev = read_tags({"ml:stage": "dev"}, ON)
    assert off_hours_stop(dev, ON, WEDNESDAY_NOON, STOP) is None
    assert off_hours_stop(dev, Settings(), WEDNESDAY_NIGHT, STOP) is None


def test_a_window_across_midnight_is_read_in_its_own_timezone():
    night_shift = Settings(off_hours=OffHours(enabled=True, timezone="America/New_York", start="22:00", end="06:00", days=("wed",)))
    dev = read_tags({"ml:stage": "dev"}, night_shift)
    assert off_hours_stop(dev, night_shift, datetime(2026, 12, 3, 4, 0, tzinfo=UTC), STOP) is None  # Wed 23:00 in New York: working
    assert off_hours_stop(dev, night_shift, datetime(2026, 12, 2, 20, 0, tzinfo=UTC), STOP) is not None  # Wed 15:00: off


def test_notebook_and_ec2_decide_off_hours_alike_whatever_their_activity():
    from tests.helpers import ec2_rules as ec2
    from tests.helpers import notebook_rules as notebook

    # Given working hours of 01:00-02:00 UTC, a busy dev notebook and a busy dev GPU box in the afternoon
    night = Settings(off_hours=OffHours(enabled=True, timezone="UTC", start="01:00", end="02:00"))
    dev = {"ml:stage": "dev"}
    expected = off_hours_stop(read_tags(dev, night), night, ec2.NOW, STOP)
    # When each kind decides
    box = ec2.run(sig=ec2.signal(cpu=[90.0] * 36), tags=dev, settings=night)
    nb = notebook.decide(notebook.nb(dev), notebook.signal([1] * 12), night, notebook.NOW)
    # Then both stop it, for the same reason, with the same evidence
    assert expected is not None and box == expected and nb == expected

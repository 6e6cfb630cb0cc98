"""A budget that reaches only part of the Jupyter servers must not leave the same ones unread every sweep
(at N = 1,000 on a loaded machine a sweep read 632: in the listing's order, the same 368 were never read)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reaper.aws import jupyter as reader
from reaper.core.jupyter_verdict import JupyterReading
from reaper.core.timeutil import interval, sweep_turn

KEYS = [f"nb-{i:04d}" for i in range(1000)]


def reached(turn: int, share: float) -> set[str]:
    return set(reader.reading_order(KEYS, turn)[: int(share * len(KEYS))])


def test_every_turn_reads_every_key_once():
    for turn in (0, 1, 29_000_000, 29_000_015):
        order = reader.reading_order(list(reversed(KEYS)), turn)
        assert sorted(order) == KEYS and len(order) == len(set(order))


@pytest.mark.parametrize("share", [0.62, 0.632, 0.9])
@pytest.mark.parametrize("schedule", ["rate(15 minutes)", "rate(5 minutes)", "rate(1 hour)", None, "cron(0/15 * * * ? *)"])
def test_no_key_is_unread_in_two_sweeps_in_a_row_while_a_sweep_reaches_enough(share, schedule):
    # Given a day of sweeps on the schedule, each starting up to 50 seconds late, each reaching `share` of the keys
    every = interval(schedule) or timedelta(minutes=15)
    t, turns = datetime(2026, 12, 3, 0, 0, 7, tzinfo=UTC), []
    while t < datetime(2026, 12, 4, tzinfo=UTC):
        turns.append(sweep_turn(t + timedelta(seconds=len(turns) * 13 % 50), schedule))
        t += every
    # Then a key missed by one sweep is read by the next
    for a, b in zip(turns, turns[1:], strict=False):
        assert b == a + 1
        missed_twice = set(KEYS) - reached(a, share) - reached(b, share)
        assert not missed_twice, (share, a, b, len(missed_twice))


@pytest.mark.parametrize("share", [0.2, 0.3, 0.4])
def test_a_budget_below_the_bound_still_moves_on(share):
    # Given sweeps reaching only part of the keys, below the two-in-a-row bound: in listing order the same
    # keys would wait forever; rotated, no key waits more than twice the sweeps a perfect rotation needs
    waits = dict.fromkeys(KEYS, 0)
    longest = 0
    for turn in range(29_000_000, 29_000_200):
        seen = reached(turn, share)
        for k in KEYS:
            waits[k] = 0 if k in seen else waits[k] + 1
        longest = max(longest, *waits.values())
    assert longest <= 2 / share


def test_the_budget_cuts_the_rotated_order_not_the_listing_order():
    # Given readings that never finish within the budget except the first ones submitted
    submitted: list[str] = []

    def presign_for(key: str):
        def presign() -> str:
            submitted.append(key)
            raise reader.Failed(reader.UNREACHABLE, "test: not served")

        return presign

    door = reader.Door("TestPresign", "the test's URL", "no fix")
    readings = reader.read_all(door, {k: presign_for(k) for k in KEYS[:20]}, workers=1, turn=7)
    # Then every key has a reading, and they were opened in the rotated order
    assert set(readings) == set(KEYS[:20]) and all(isinstance(r, JupyterReading) for r in readings.values())
    assert submitted == reader.reading_order(KEYS[:20], 7)

"""The contract's tag values, attacked through the real `reaper sweep` against moto: blank and
whitespace values, numbers at and past their bounds or in forms Python reads but no one writes,
dates past and future with and without an offset (under a local timezone far from UTC), wrong
case in keys and values, two spellings of one key. Each resource is an idle notebook (tag reading
is shared by every kind; tests/integration/test_contract_every_kind.py holds it per kind).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from reaper.cli.main import main
from reaper_devkit import seed

IDLE, BUSY = [0.0] * 36, [1.0] * 36
OWNER = {"ml:owner": "ana@example.com"}


def cases(now: datetime) -> dict[str, tuple[dict[str, str], list[float], str, str]]:
    """name -> (tags, activity, verdict in enforce with grace 0, words the reason must hold)."""
    later, earlier = now + timedelta(hours=2), now - timedelta(hours=2)
    today, tomorrow = now.strftime("%Y-%m-%d"), (now + timedelta(days=1)).strftime("%Y-%m-%d")
    east, west = timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-5))
    return {
        "plain": ({}, IDLE, "act", "no activity"),
        # exempt: blank is unreadable, any case and padding is read
        "exempt-whitespace": ({"reaper:exempt": "   "}, IDLE, "exempt", "reaper:exempt has no value"),
        "exempt-false-any-case": ({"Reaper:Exempt": " FALSE "}, IDLE, "act", "no activity"),
        "exempt-true-any-case": ({"REAPER:EXEMPT": "True"}, IDLE, "exempt", "tagged reaper:exempt=true"),
        # idle minutes: 5 to 10,080, plain integers only
        "idle-at-floor": ({"reaper:idle-minutes": "5"}, IDLE, "act", "no activity"),
        "idle-at-ceiling": ({"reaper:idle-minutes": "10080"}, IDLE, "keep", ""),  # a week asked, 3 h of data: unknown
        "idle-past-ceiling": ({"reaper:idle-minutes": "10081"}, IDLE, "exempt", "reaper:idle-minutes"),
        "idle-under-floor": ({"reaper:idle-minutes": "4"}, IDLE, "exempt", "reaper:idle-minutes"),
        "idle-decimal": ({"reaper:idle-minutes": "30.0"}, IDLE, "exempt", "reaper:idle-minutes"),
        "idle-underscore": ({"reaper:idle-minutes": "1_0"}, IDLE, "exempt", "reaper:idle-minutes"),
        "idle-other-digits": ({"reaper:idle-minutes": "\u0663\u0660"}, IDLE, "exempt", "reaper:idle-minutes"),
        # hours and dollars: > 0 and within bounds, on any kind (an unreadable reaper tag exempts whatever it is)
        "hours-overflow": ({"reaper:max-hours": "1e999"}, IDLE, "exempt", "reaper:max-hours"),
        "dollars-past-bound": ({"reaper:max-usd": "1000000.5"}, IDLE, "exempt", "reaper:max-usd"),
        "budget-zero": ({"reaper:budget-usd": "0"}, IDLE, "exempt", "reaper:budget-usd"),
        # snooze: date or date-time, UTC when no offset, whatever the machine's timezone
        "snooze-future-offset": ({"reaper:snooze-until": later.astimezone(west).isoformat()}, IDLE, "exempt", "snoozed until"),
        "snooze-past-offset": ({"reaper:snooze-until": earlier.astimezone(east).isoformat()}, IDLE, "act", "no activity"),
        "snooze-naive-future": ({"reaper:snooze-until": later.strftime("%Y-%m-%dT%H:%M:%S")}, IDLE, "exempt", "snoozed until"),
        "snooze-naive-past": ({"reaper:snooze-until": earlier.strftime("%Y-%m-%dT%H:%M:%S")}, IDLE, "act", "no activity"),
        "snooze-today": ({"reaper:snooze-until": today}, IDLE, "act", "no activity"),
        "snooze-tomorrow": ({"reaper:snooze-until": tomorrow}, IDLE, "exempt", "snoozed until"),
        "snooze-key-case": ({"REAPER:SNOOZE-UNTIL": f" {tomorrow} "}, IDLE, "exempt", "snoozed until"),
        "snooze-impossible": ({"reaper:snooze-until": "2026-02-30"}, IDLE, "exempt", "reaper:snooze-until"),
        "snooze-calendar-edge": ({"reaper:snooze-until": "0001-01-01T00:00:00+14:00"}, IDLE, "exempt", "reaper:snooze-until"),
        # production in any case, padded
        "prod-any-case": ({"ML:STAGE": " PRODUCTION "}, IDLE, "exempt", "production stage"),
        # two spellings of one key: a conflict only when the values differ (case-insensitively)
        "spellings-agree": ({"reaper:exempt": "true", "REAPER:EXEMPT": "TRUE"}, IDLE, "exempt", "tagged reaper:exempt=true"),
        "stage-spellings-agree": ({"ml:stage": "dev", "ML:Stage": "DEV"}, IDLE, "act", "no activity"),
        "spellings-differ": ({"reaper:idle-minutes": "5", "REAPER:IDLE-MINUTES": "500"}, IDLE, "exempt", "differing only in case"),
        "typo-key": ({"reaper:snooze_until": tomorrow}, IDLE, "exempt", "not a reaper tag"),
        # kill date: past means reaped whatever the activity, with an offset too
        "kill-past-busy": ({"reaper:kill-after": earlier.astimezone(timezone(timedelta(hours=14))).isoformat()}, BUSY, "act", "kill date"),
        "kill-future-busy": ({"reaper:kill-after": tomorrow}, BUSY, "keep", ""),
        "kill-blank": ({"reaper:kill-after": ""}, BUSY, "exempt", "reaper:kill-after has no value"),
        # the reaper's own tag, written by a user as garbage: fail safe
        "warned-at-garbage": ({"reaper:warned-at": "soon"}, IDLE, "exempt", "reaper:warned-at"),
    }


@pytest.fixture
def far_timezone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's local time 14 hours ahead of UTC: a date-time without an offset is still UTC."""
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_every_tag_value_is_read_as_the_contract_says_and_none_fails_the_sweep(sm: Any, cw: Any, far_timezone: None, capsys: Any) -> None:
    # Given one idle (or busy) notebook per hostile tag value
    now = datetime.now(UTC)
    table = cases(now)
    for name, (tags, activity, _, _) in table.items():
        seed.notebook(sm, name, {**OWNER, **tags})
        seed.activity(cw, name, now, activity)
    # When the command line sweeps in enforce with no grace
    code = main(["sweep", "--kind", "notebook", "--mode", "enforce", "--grace-minutes", "0", "--json"])
    rows = {r["id"]: r for r in (json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip())}
    # Then the sweep succeeded, every notebook has the verdict its tags call for, and only the acted ones were stopped
    assert code == 0 and set(rows) == set(table)
    wrong = []
    for name, (_, _, verdict, words) in table.items():
        row = rows[name]
        status = sm.describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceStatus"]
        stopped = status in ("Stopping", "Stopped")
        if (
            row["verdict"] != verdict
            or words.lower() not in row["reason"].lower()
            or stopped != (verdict == "act")
            or row["executed"] != stopped
        ):
            wrong.append(f"{name}: {row['verdict']} executed={row['executed']} {status} — {row['reason'][:160]}")
    assert wrong == []


def test_a_protective_tag_in_any_spelling_blocks_even_the_warning_tag(sm: Any, cw: Any, capsys: Any) -> None:
    # Given idle notebooks protected by tags in odd spellings, and a sweep in enforce with the default grace
    now = datetime.now(UTC)
    protected = {
        "exempt-padded": {" reaper:exempt ": " true "},
        "prod-padded": {"Ml:Stage": " Prod "},
        "snoozed-upper": {"REAPER:SNOOZE-UNTIL": (now + timedelta(days=1)).strftime("%Y-%m-%dT%H:%MZ")},
    }
    for name, tags in protected.items():
        seed.notebook(sm, name, {**OWNER, **tags})
        seed.activity(cw, name, now, IDLE)
    # When the sweep runs twice (a warning sweep, then one past any grace)
    assert main(["sweep", "--kind", "notebook", "--mode", "enforce", "--json"]) == 0
    assert main(["sweep", "--kind", "notebook", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    # Then each was exempt both times, never warned, never tagged, never stopped
    assert {(r["id"], r["verdict"]) for r in rows} == {(n, "exempt") for n in protected}
    for name in protected:
        desc = sm.describe_notebook_instance(NotebookInstanceName=name)
        tags = {t["Key"] for t in sm.list_tags(ResourceArn=desc["NotebookInstanceArn"])["Tags"]}
        assert desc["NotebookInstanceStatus"] == "InService" and not any("warned-at" in k.lower() for k in tags), name

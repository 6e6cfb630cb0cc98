"""The kind handler's one route (reaper.handlers): the event is parsed and checked against the stack's own
regions and budget topic before anything is read, and the chain record comes back from the action log
typed (reaper.record.chain_record), through moto.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from reaper.core.errors import BadEventError
from reaper.core.settings import Settings
from reaper.handlers import handle_kind_event
from reaper.record.actionlog import ActionLog
from reaper.record.chain_record import RUNNING, ChainRecord
from reaper.record.org_settings_reader import CentralSettingsReader
from reaper.record.runtime import Runtime
from tests.conftest import ROOT

NOW = datetime(2026, 12, 2, 3, 21, tzinfo=UTC)
CONTINUATION = json.loads((ROOT / "events" / "studio-app-continuation.json").read_text())
BUDGET = json.loads((ROOT / "events" / "budget-notification.json").read_text())
CENTRAL_TABLE = "arn:aws:dynamodb:us-east-1:111122223333:table/mlreaper-org-settings"


def _runtime(aws: boto3.session.Session, table: str, **settings: Any) -> tuple[Runtime, CentralSettingsReader]:
    reader = CentralSettingsReader(aws.client("dynamodb"), CENTRAL_TABLE, "123456789012", "follow")
    rt = Runtime(
        settings=Settings(**settings),
        home_region="us-east-1",
        session=aws,
        log=ActionLog(aws.client("dynamodb"), table),
        central_settings=reader,
    )
    return rt, reader


def test_a_continuation_for_a_region_the_stack_does_not_sweep_is_refused_before_central_settings_are_read(aws, table):
    # Given a stack that follows central settings and sweeps us-east-1 alone, and a continuation for eu-west-1
    rt, reader = _runtime(aws, table)
    event = copy.deepcopy(CONTINUATION)
    event["detail"]["region"] = "eu-west-1"
    # When the studio-app function is handed it
    with pytest.raises(BadEventError, match="does not sweep"):
        handle_kind_event(event, "studio-app", rt, NOW)
    # Then it was refused on its own: the central settings were never read (nor a notice written about them)
    assert reader._cached is None
    assert reader.told is None


def test_a_budget_notification_from_another_topic_is_refused_before_central_settings_are_read(aws, table):
    # Given a stack whose budget topic is not the one the notification came from
    rt, reader = _runtime(aws, table, budget_topic_arn="arn:aws:sns:us-east-1:123456789012:another-topic")
    # When the endpoint function is handed it
    with pytest.raises(BadEventError, match="not the budget topic"):
        handle_kind_event(copy.deepcopy(BUDGET), "endpoint", rt, NOW)
    # Then nothing was read first
    assert reader._cached is None


def test_the_action_log_hands_back_the_chain_record_typed(aws, table):
    # Given a chain record as this version writes it, and one another version left with fields it cannot read
    log = ActionLog(aws.client("dynamodb"), table)
    fields: dict[str, str | int] = {
        "event_id": "ev-1",
        "started": "2026-12-02T03:15:00Z",
        "part": 2,
        "status": RUNNING,
        "arranged_at": "2026-12-02T03:20:00Z",
        "due": "2026-12-02T03:21:00Z",
    }
    assert log.put_chain("studio-app", "us-east-1", fields, "attribute_not_exists(pk)", {})
    assert log.put_chain(
        "endpoint", "us-east-1", {"event_id": "old", "part": "two", "arranged_at": "yesterday"}, "attribute_not_exists(pk)", {}
    )
    # When each is read
    record, odd = log.chain("studio-app", "us-east-1"), log.chain("endpoint", "us-east-1")
    # Then the first comes back parsed (times as times), the second with what it cannot read as unknown, and none is a dict
    assert record == ChainRecord(
        "ev-1",
        datetime(2026, 12, 2, 3, 15, tzinfo=UTC),
        2,
        RUNNING,
        datetime(2026, 12, 2, 3, 20, tzinfo=UTC),
        datetime(2026, 12, 2, 3, 21, tzinfo=UTC),
        raw_arranged_at="2026-12-02T03:20:00Z",
    )
    assert record.alive(NOW)
    assert odd == ChainRecord("old", None, 0, "", None, None, raw_arranged_at="yesterday")
    assert not odd.alive(NOW)
    assert log.chain("notebook", "us-east-1") is None

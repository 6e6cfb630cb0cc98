"""The action log lists entries in the order they happened, also within one second."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper.record.actionlog import ActionLog

WARNED = datetime(2026, 12, 2, 4, 9, 0, 900_000, tzinfo=UTC)


def test_a_warning_and_the_action_in_the_same_second_are_listed_in_order(aws, table):
    # Given a warning and, 50 ms later, the action (two quick sweeps), whose event ids sort the other way
    log = ActionLog(aws.client("dynamodb"), table)
    log.record({"kind": "fsx", "id": "fs-0123abcd", "verdict": "warn"}, WARNED, "cli-ffffffff-warn")
    log.record({"kind": "fsx", "id": "fs-0123abcd", "verdict": "act"}, WARNED + timedelta(milliseconds=50), "cli-00000000-act")
    # When the log is read
    verdicts = [e["verdict"] for e in log.stored_entries(WARNED - timedelta(hours=1), WARNED + timedelta(minutes=1))]
    # Then the warning comes first
    assert verdicts == ["warn", "act"]


def test_entries_from_the_since_second_on_are_found_also_keys_in_whole_seconds(aws, table):
    log = ActionLog(aws.client("dynamodb"), table)
    log.record({"kind": "fsx", "id": "a", "verdict": "keep"}, WARNED - timedelta(seconds=1), "before")
    log.record({"kind": "fsx", "id": "b", "verdict": "keep"}, WARNED, "at")
    # a key as written before keys carried microseconds
    aws.client("dynamodb").put_item(
        TableName=table,
        Item={
            "pk": {"S": "LOG#2026-12-02"},
            "sk": {"S": "2026-12-02T04:09:00Z#fsx#c#old"},
            "entry": {"S": '{"kind": "fsx", "id": "c", "logged_at": "2026-12-02T04:09:00Z"}'},
        },
    )
    found = [e["id"] for e in log.stored_entries(WARNED, WARNED + timedelta(minutes=1))]
    assert found == ["b", "c"]

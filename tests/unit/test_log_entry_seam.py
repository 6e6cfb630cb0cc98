"""The action log read through its model (reaper.record.logentry): old entries still read, key for key, and
read the same by `reaper log`, `reaper report`, the digest, the savings metric and the coverage view; an
entry that is not one is said and skipped, never fatal.

The old entries are tests/fixtures/log_entries_before_model.jsonl: captured by tests/plugins/log_capture.py
from the code before the model (issue 35): 125 from 20 integration test files on the branch `logentry`'s base,
41 more from main at d4ffeeb (test_anomaly_alerts, test_bill_report, test_endpoint_told, test_settle_unconfirmed:
entries with their price's source, an anomaly, a cost entry); what a member's log recorded and what the
organisation's central table took; each with what the read side of main at d4ffeeb (the last code before the
model) made of it (tests/helpers/log_renderings.py), and of all of them together on its first line.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper.record.actionlog import ActionLog, create_table
from reaper.record.logentry import BadEntry, LogEntry, parse_entry
from tests.conftest import ROOT, TABLE
from tests.helpers.log_renderings import each, together

FIXTURE = ROOT / "tests" / "fixtures" / "log_entries_before_model.jsonl"
HEAD, *OLD = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line]
NOW = datetime.now(UTC)


def test_the_capture_holds_what_members_and_the_organisation_log():
    types = {(c["source"], json.loads(c["entry"]).get("type")) for c in OLD}
    assert {s for s, _ in types} == {"member", "central"}
    assert {t for _, t in types} >= {"verdict", "notice", "coverage"}
    verdicts = {json.loads(c["entry"]).get("verdict") for c in OLD}
    assert {"act", "warn", "keep"} <= verdicts


@pytest.mark.parametrize("captured", OLD, ids=lambda c: f"{c['source']}-{json.loads(c['entry']).get('type')}")
def test_every_old_entry_validates_keeps_every_key_and_reads_as_before(captured: dict[str, Any]):
    entry = parse_entry(captured["entry"])
    stored = json.loads(captured["entry"])
    assert entry.stored == stored  # every key, every value, as stored
    assert set(entry.model_dump(exclude_unset=True)) == set(stored)
    got, want = each(captured["entry"]), captured["rendered"]
    for width in ("line", "narrow"):  # since the capture, `reaper log` wraps a reason whole where it cut it with "…"
        if "…" in want[width]:
            assert _cut_of(want[width], got[width]), (width, want[width], got[width])
            got[width] = want[width]
    assert got == want


def _cut_of(cut: str, whole: str) -> bool:
    """`cut` (the old `reaper log` line, cut with "…") says nothing `whole` (today's, every word kept) does not:
    its words, in order, are words of `whole`, and a word it cut ("nb-…") begins one of them."""
    words = iter(whole.split())
    for w in cut.split():
        stem = w.rstrip("…")
        if not stem:
            continue
        if not any((v.startswith(stem) if w.endswith("…") else v == w) for v in words):
            return False
    return True


def test_together_the_old_entries_report_digest_and_cover_as_before():
    got = together([c["entry"] for c in OLD])
    for key, want in HEAD["together"].items():
        if key == "digest":  # a field the digest gained since the capture (right-size advice), empty for these entries
            kept = {k: v for k, v in json.loads(got[key]).items() if not (k == "advice" and v is None)}
            got[key] = json.dumps(kept, separators=(",", ":"), ensure_ascii=False)
        if isinstance(want, dict):  # a kind added since the capture (mlflow, storage) has a zero line, nothing more
            added = {k: v for k, v in got[key].items() if k not in want}
            assert all("saved_usd=0.0, unpriced=0, resources=0" in str(v) for v in added.values()), (key, added)
            assert {k: v for k, v in got[key].items() if k in want} == want, key
        else:
            assert got[key] == want, key


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"kind": "notebook", "id": "nb", "verdict": "act"}', "logged_at: Field required"),
        ('{"logged_at": "2026-12-03T10:00:00Z", "hourly_usd": "2.5"}', "hourly_usd: Input should be a valid number"),
        ('{"logged_at": "2026-12-03T10:00:00Z", "executed": "yes"}', "executed: Input should be a valid boolean"),
        (
            '{"logged_at": 5, "id": 7, "kind": ["x"], "owner": {}}',
            "logged_at: Input should be a valid string; kind: Input should be a valid string; id: Input should be a valid string; and 1 more",  # noqa: E501
        ),
        ("[1, 2]", "not a JSON object (a list)"),
        ("{not json", "not JSON"),
    ],
)
def test_a_malformed_entry_is_refused_with_its_field_and_problem_never_its_value(text: str, said: str):
    with pytest.raises(BadEntry) as refused:
        parse_entry(text)
    assert said in str(refused.value)
    assert "2.5" not in str(refused.value) and "yes" not in str(refused.value)


def _put(dynamodb: Any, at: datetime, key: str, text: str) -> None:
    sk = f"{at:%Y-%m-%dT%H:%M:%S.%f}Z#notebook#{key}#e"
    dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": f"LOG#{at:%Y-%m-%d}"}, "sk": {"S": sk}, "entry": {"S": text}})


@pytest.fixture
def spoiled(aws: Any) -> ActionLog:
    """A log with two good entries and, between them, a missing field, a wrong type and a non-JSON entry."""
    dynamodb = aws.client("dynamodb")
    create_table(dynamodb, TABLE)
    log = ActionLog(dynamodb, TABLE)
    at = NOW - timedelta(hours=2)
    good = {"kind": "notebook", "region": "us-east-1", "verdict": "act", "action": "stop", "executed": True, "hourly_usd": 2.0}
    log.record({**good, "id": "nb-1", "reason": "idle 3 h"}, at, "sweep-1")
    _put(dynamodb, at + timedelta(minutes=1), "no-time", json.dumps({**good, "id": "no-time"}))
    _put(dynamodb, at + timedelta(minutes=2), "wrong-type", json.dumps({**good, "id": "wrong", "logged_at": "x", "hourly_usd": "lots"}))
    _put(dynamodb, at + timedelta(minutes=3), "garbled", "{")
    log.record({**good, "id": "nb-2", "reason": "idle 4 h"}, at + timedelta(minutes=4), "sweep-2")
    return log


def test_the_log_skips_a_malformed_entry_and_says_which_and_why(spoiled: ActionLog):
    got = list(spoiled.entries(NOW - timedelta(hours=3), NOW))
    assert [e.id for e in got] == ["nb-1", "nb-2"] and all(isinstance(e, LogEntry) for e in got)
    assert len(spoiled.skipped) == 3
    assert "#no-time#" in spoiled.skipped[0] and "logged_at: Field required" in spoiled.skipped[0]
    assert "#wrong-type#" in spoiled.skipped[1] and "hourly_usd" in spoiled.skipped[1] and "lots" not in spoiled.skipped[1]
    assert "#garbled#" in spoiled.skipped[2] and "not JSON" in spoiled.skipped[2]


@pytest.mark.parametrize(
    "command",
    [["log", "--since", "1d"], ["log", "--since", "1d", "--output", "json"], ["log", "--since", "1d", "--output", "csv"], ["report"]],
)
def test_reaper_log_and_report_go_on_past_a_malformed_entry(spoiled: ActionLog, command: list[str], capsys, monkeypatch):
    monkeypatch.setenv("REAPER_TABLE", TABLE)
    assert main([*command, "--since", "1d"] if command == ["report"] else command) == 0
    out, err = capsys.readouterr()
    assert "nb-1" in out and "nb-2" in out if command[0] == "log" else "about $" in out
    assert err.count("skipped a malformed log entry") == 3 and "logged_at: Field required" in err

"""Attacks on the one CloudTrail reader (reaper/aws/cloudtrail.py) and its two readers, through the real mlflow
function and the storage kind's app-start read against the kit's LookupEvents (moto_ext/cloudtrail_lookup): an
event whose record cannot be read, a lookup throttled after its first page, events older than the window. Each
leaves what it could not read unknown, never judged idle on half a read (docs/safety.md, *Attacks on this round's
new surfaces*)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from reaper.aws import cloudtrail
from reaper.kinds.mlflow import ui_opens
from reaper.kinds.storage import app_starts
from reaper_devkit import mlflow_api, seed_mlflow
from reaper_devkit.moto_ext import cloudtrail_lookup
from tests.conftest import drain, event, load_function
from tests.helpers.modes import enforce_mode

OPEN = "CreatePresignedMlflowTrackingServerUrl"
NOW = datetime.now(UTC).replace(microsecond=0)


def recorded(aws: Any) -> list[dict[str, Any]]:
    """The kit's recorded events of the test account's us-east-1 (what LookupEvents answers from)."""
    from moto.cloudtrail import models

    return cloudtrail_lookup._events(models.cloudtrail_backends["123456789012"]["us-east-1"])


@pytest.fixture
def fleet(sm: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("REAPER_MLFLOW_READS", "on")
    with mlflow_api.serving():
        yield seed_mlflow.reads_fleet(sm, datetime.now(UTC))


@pytest.mark.parametrize("record", ["not json", '{"eventName": "x"}', '{"requestParameters": {"expiresInSeconds": 300}}'])
def test_a_ui_open_whose_record_cannot_be_read_keeps_its_server_unknown_never_stopped(
    aws, sm, fleet, deployed_env, lambda_context, monkeypatch, record
):
    # Given MlflowReads on, enforce, and ts-ui idle by its runs but its UI opened 2 h ago: that open's CloudTrail
    # record truncated or missing its requestParameters (whose open it was cannot be read)
    [opened] = [e for e in recorded(aws) if e["EventName"] == OPEN]
    opened["CloudTrailEvent"] = record
    enforce_mode(monkeypatch)
    # When the scheduled sweep runs
    result = load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)
    # Then ts-ui is not stopped on a read that skipped an event: it is unknown, said as such
    assert "ts-ui" not in result["acted"], result
    assert seed_mlflow.status(sm, "ts-ui") == "Created"
    said = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("kind") == "mlflow"}
    assert "ts-ui" not in said or said["ts-ui"]["verdict"] != "act", said.get("ts-ui")


def test_a_ui_open_read_whole_still_keeps_its_server(aws, sm, fleet, deployed_env, lambda_context, monkeypatch):
    # The same world with the record intact: ts-ui kept, ts-idle stopped (the attack above can fail)
    enforce_mode(monkeypatch)
    result = load_function("mlflow").handler(event("mlflow-schedule.json"), lambda_context)
    assert result["acted"] == ["ts-idle"] and seed_mlflow.status(sm, "ts-ui") == "Created"


def throttled_after(trail: Any, pages: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """LookupEvents answers `pages` pages, then is throttled past botocore's retries."""
    real, asked = trail.lookup_events, [0]

    def lookup_events(**kwargs: Any) -> Any:
        asked[0] += 1
        if asked[0] > pages:
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "LookupEvents")
        return real(**kwargs)

    monkeypatch.setattr(trail, "lookup_events", lookup_events)
    return asked


def test_a_lookup_throttled_after_its_first_page_is_unreadable_for_both_readers(aws, monkeypatch):
    # Given 120 UI opens of ts-1 and 120 app starts, and LookupEvents throttled after one page
    for n in range(120):
        cloudtrail_lookup.record(OPEN, {"trackingServerName": "ts-1"}, NOW - timedelta(minutes=n + 1))
        cloudtrail_lookup.record("CreateApp", {"domainId": "d-1", "spaceName": f"s-{n}"}, NOW - timedelta(hours=n + 1))
    trail = aws.client("cloudtrail")
    throttled_after(trail, 1, monkeypatch)
    # Then the MLflow read raises (every server unknown), never a half read taken as whole
    with pytest.raises(cloudtrail.TrailUnreadable, match="ThrottlingException"):
        ui_opens.opens(trail, ["ts-1", "ts-2"], NOW - timedelta(days=1), NOW)
    # and the Studio spaces' read knows nothing (not 50 spaces' starts and the rest idle)
    starts = app_starts.read(trail, NOW)
    assert starts.unread is not None and "ThrottlingException" in starts.unread and starts.last == {} and starts.since is None


@pytest.mark.parametrize("record", ["not json", '{"requestParameters": null}', '{"requestParameters": {"spaceName": "s"}}'])
def test_an_app_start_whose_record_cannot_be_read_leaves_every_space_unknown(aws, record):
    # Given two app starts, the newer one's record unreadable
    cloudtrail_lookup.record("CreateApp", {"domainId": "d-1", "spaceName": "old"}, NOW - timedelta(days=3))
    cloudtrail_lookup.record("CreateApp", {"domainId": "d-1", "spaceName": "new"}, NOW - timedelta(hours=1))
    [newer] = [e for e in recorded(aws) if e["EventName"] == "CreateApp" and "new" in e["CloudTrailEvent"]]
    newer["CloudTrailEvent"] = record
    starts = app_starts.read(aws.client("cloudtrail"), NOW)
    assert starts.unread is not None and starts.last == {} and starts.since is None


def test_events_older_than_the_window_are_never_asked_for_nor_counted(aws):
    # Given a UI open 10 days ago and the window the last 2 days
    cloudtrail_lookup.record(OPEN, {"trackingServerName": "ts-1"}, NOW - timedelta(days=10))
    cloudtrail_lookup.record(OPEN, {"trackingServerName": "ts-1"}, NOW - timedelta(hours=1))
    found, whole = ui_opens.opens(aws.client("cloudtrail"), ["ts-1"], NOW - timedelta(days=2), NOW)
    assert found == {"ts-1": [NOW - timedelta(hours=1)]} and whole

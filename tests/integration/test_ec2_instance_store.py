"""Instance stores with evidence and consent (issue 37, item 1), through the real ec2 and interactions functions
against the kit: with GpuSsmReads on, a GPU box whose instance store holds nothing (unmounted, or mounted with
no files) is stopped after the grace like any other; one with files is kept with the figure and where, and a
"Stop anyway" button only its owner or an admin may click, recorded once as their consent; no box with data is
stopped without it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest

from reaper.handlers import handle_kind_event
from reaper.record.actionlog import ActionLog
from reaper.record.message import OwnerSummaryMessage, VerdictMessage
from reaper.record.owner_summary import group
from reaper.slack.owner_summary import render
from reaper_devkit import seed_ec2
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import ssm_commands
from reaper_devkit.slack_api import SlackApi
from tests.conftest import REGION, drain, event, load_function
from tests.helpers.slack import ADMIN, OTHER, OWNER, interactions, signed

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
GB = 1_000_000_000
# g5.xlarge: one 250 GB instance-store NVMe disk (nvme1n1) beside the EBS root
WITH_DATA = ssm_commands.box_output(disks=("nvme1n1",), mounts=(("nvme1n1", 48 * GB, True, "/opt/dlami/nvme"),))
MOUNTED_EMPTY = ssm_commands.box_output(disks=("nvme1n1",), mounts=(("nvme1n1", 72_000_000, False, "/opt/dlami/nvme"),))
UNMOUNTED = ssm_commands.box_output(disks=("nvme1n1",))
# a RAID 0 over two instance-store disks (p4d's, e.g.), with files
RAID_DATA = ssm_commands.box_output(
    disks=("nvme1n1", "nvme2n1"),
    holders=(("md0", "nvme1n1"), ("md0", "nvme2n1")),
    mounts=(("md0", 3 * GB, True, "/scratch"),),
)


pytestmark = pytest.mark.usefixtures("fresh_ec2_catalog")


@pytest.fixture
def reading_boxes(deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The deployed environment in enforce with a 60-minute grace and GpuSsmReads on: a sweep asks each box what its
    instance store holds (tests/conftest.py's `enforce` is the same without the reads and the grace)."""
    monkeypatch.setenv("REAPER_GPU_SSM_READS", "on")
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "60")
    return deployed_env


def store_box(ec2: Any, cw: Any, kit: Any, now: datetime, output: str | None) -> str:
    """An idle g5.xlarge (CPU, network and GPU series all quiet) whose box prints `output` (None: no SSM Agent)."""
    iid = seed_ec2.instance(ec2, "g5.xlarge", DEV, now=now)
    seed_ec2.metrics(cw, iid, now)
    if output is not None:
        ssm_commands.register(kit, iid)
        ssm_commands.stdout(kit, iid, output)
    return iid


def arn(iid: str) -> str:
    return f"arn:aws:ec2:{REGION}:123456789012:instance/{iid}"


def click_body(api: SlackApi, button: dict[str, Any], user: str) -> str:
    """The click Slack sends for one of our rendered buttons (its action_id and value, as rendered)."""
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "response_url": api.response_url(f"{button['action_id']}-{user}"),
        "container": {"message_ts": "1700000000.000100"},
        "actions": [{"action_id": button["action_id"], "value": button["value"]}],
    }
    return urlencode({"payload": json.dumps(payload)})


def buttons(summary: OwnerSummaryMessage) -> list[dict[str, Any]]:
    return [e for b in render(summary).blocks if b.get("type") == "actions" for e in b["elements"]]


def test_a_replay_stops_every_empty_store_after_the_grace_and_keeps_every_box_with_data(
    aws, ec2, cw, ssm_kit, reading_boxes, lambda_context
):
    # Given idle GPU boxes with an instance store: files on it, mounted empty, unmounted, RAID with files, no SSM Agent
    now = datetime.now(UTC)
    boxes = {
        "data": store_box(ec2, cw, ssm_kit, now, WITH_DATA),
        "empty": store_box(ec2, cw, ssm_kit, now, MOUNTED_EMPTY),
        "unmounted": store_box(ec2, cw, ssm_kit, now, UNMOUNTED),
        "raid": store_box(ec2, cw, ssm_kit, now, RAID_DATA),
        "no-ssm": store_box(ec2, cw, ssm_kit, now, None),
    }
    app = load_function("ec2")
    # When the first enforce sweep runs
    with recording() as calls:
        first = app.handler(event("ec2-schedule.json"), lambda_context)
    said = {m["id"]: m for m in drain(aws, reading_boxes["REAPER_QUEUE_URL"]) if m.get("type") == "verdict"}
    # Then the empty stores are warned (the stop loses nothing, and the message says so), nothing is stopped yet
    assert first["acted"] == [] and calls.calls["ec2:StopInstances"] == 0
    for name in ("empty", "unmounted"):
        assert said[boxes[name]]["verdict"] == "warn" and "holds nothing" in said[boxes[name]]["reason"], name
        assert "the stop loses nothing" in said[boxes[name]]["reason"]
    assert "nothing mounted" in said[boxes["unmounted"]]["reason"] and "/opt/dlami/nvme (no files)" in said[boxes["empty"]]["reason"]
    # and the boxes with files are kept, with how much and where
    assert said[boxes["data"]]["verdict"] == "keep" and "48.0 GB of files at /opt/dlami/nvme" in said[boxes["data"]]["reason"]
    assert said[boxes["raid"]]["verdict"] == "keep" and "3.0 GB of files at /scratch" in said[boxes["raid"]]["reason"]
    # one command asked both (nvidia-smi is not needed where a GPU series exists, the store is)
    assert sorted(i for ids in ssm_kit._reaper_ssm.sent for i in ids) == sorted(v for k, v in boxes.items() if k != "no-ssm")
    # When the next sweep runs after the grace
    later = now + timedelta(minutes=65)
    for iid in boxes.values():
        seed_ec2.metrics(cw, iid, later)
    done = handle_kind_event(event("ec2-schedule.json", id="later"), "ec2", app.RUNTIME, now=later)
    # Then exactly the empty stores are stopped; every box with data (or no reading) still runs
    assert sorted(done["acted"]) == sorted([boxes["empty"], boxes["unmounted"]])
    assert {n: seed_ec2.state(ec2, i) for n, i in boxes.items()} == {
        "data": "running",
        "empty": "stopped",
        "unmounted": "stopped",
        "raid": "running",
        "no-ssm": "running",
    }


def test_without_gpu_ssm_reads_every_instance_store_box_is_kept_as_today(aws, ec2, cw, ssm_kit, deployed_env, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    empty = store_box(ec2, cw, ssm_kit, now, UNMOUNTED)
    with recording() as calls:
        result = load_function("ec2").handler(event("ec2-schedule.json"), lambda_context)
    assert result["acted"] == [] and seed_ec2.state(ec2, empty) == "running"
    assert not {a for a in calls.actions if a.startswith("ssm:")}


def test_a_reading_that_is_not_the_commands_shape_keeps_it(aws, ec2, cw, ssm_kit, reading_boxes, lambda_context, monkeypatch):
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    now = datetime.now(UTC)
    odd = store_box(ec2, cw, ssm_kit, now, UNMOUNTED + "something else entirely\n")
    result = load_function("ec2").handler(event("ec2-schedule.json"), lambda_context)
    assert result["acted"] == [] and seed_ec2.state(ec2, odd) == "running"


@pytest.fixture
def slack(aws: Any, table: str) -> Any:
    with interactions(aws, table) as parts:
        yield parts


def test_stop_anyway_is_the_owners_consent_recorded_once_and_stops_the_box(aws, ec2, cw, ssm_kit, reading_boxes, lambda_context, slack):
    # Given an idle box kept for the 48 GB of files on its instance store, and its owner's summary
    now = datetime.now(UTC)
    iid = store_box(ec2, cw, ssm_kit, now, WITH_DATA)
    load_function("ec2").handler(event("ec2-schedule.json"), lambda_context)
    verdicts = [
        VerdictMessage.model_validate_json(json.dumps(m))
        for m in drain(aws, reading_boxes["REAPER_QUEUE_URL"])
        if m.get("type") == "verdict"
    ]
    [summary] = group(verdicts, "sweep")
    # Then the summary offers Stop anyway with the figure, and no Stop now
    by_action = {b["action_id"]: b for b in buttons(summary)}
    assert "reaper:stop" not in by_action
    anyway = by_action["reaper:stop-anyway"]
    assert anyway["text"]["text"] == "Stop anyway (the 48.0 GB on the instance store is lost)"
    # When someone else clicks it, Then it is refused and nothing is handed over
    slack["call"](signed(click_body(slack["api"], anyway, OTHER), now), now)
    assert slack["invoked"] == [] and "neither this resource's owner nor an mlreaper admin" in slack["api"].responses[-1]["text"]
    # When a plain Stop now is asked of it, Then the guard refuses it: data is lost only with consent
    stop_now = {"action_id": "reaper:stop", "value": json.dumps({"arn": arn(iid), "kind": "ec2"})}
    slack["call"](signed(click_body(slack["api"], stop_now, OWNER), now), now)
    [(target, plain)] = slack["invoked"]
    refused = load_function(target).handler(plain, lambda_context)
    assert refused["stop_now"] == "keep" and "instance store" in refused["said"] and seed_ec2.state(ec2, iid) == "running"
    slack["invoked"].clear()
    # When the owner clicks Stop anyway twice (two signed requests, a second apart)
    slack["call"](signed(click_body(slack["api"], anyway, OWNER), now), now)
    slack["call"](signed(click_body(slack["api"], anyway, OWNER), now + timedelta(seconds=1)), now + timedelta(seconds=1))
    # Then the consent is recorded once and the stop handed over once
    log = ActionLog(aws.client("dynamodb"), reading_boxes["REAPER_TABLE"])
    entries = log.entries(now - timedelta(hours=1), now + timedelta(minutes=5))
    consents = [e for e in entries if e.type == "instance-store-consent"]
    assert len(consents) == 1 and consents[0].value("user") == OWNER and consents[0].value("gb") == 48.0
    assert "already asked from this message" in slack["api"].responses[-1]["text"]
    [(target, anyway_event)] = slack["invoked"]
    # When the ec2 function takes it (twice: Lambda's async retry)
    app = load_function(target)
    first = app.handler(anyway_event, lambda_context)
    again = app.handler(anyway_event, lambda_context)
    # Then the box is stopped once, and the record says whose consent
    assert first["stop_now"] == "act" and again["stop_now"] == "gone"  # ec2 lists running instances only
    assert seed_ec2.state(ec2, iid) in ("stopping", "stopped")
    acted = [e for e in log.entries(now - timedelta(hours=1), now + timedelta(minutes=5)) if e.verdict == "act" and e.executed]
    assert len(acted) == 1 and f"asked in Slack by {OWNER}, who consented to losing the 48.0 GB" in str(acted[0].reason)


def test_an_admin_may_consent_but_not_to_more_than_the_button_showed(aws, ec2, cw, ssm_kit, reading_boxes, lambda_context, slack):
    # Given a box kept for 48 GB of files, whose store then fills to 200 GB
    now = datetime.now(UTC)
    iid = store_box(ec2, cw, ssm_kit, now, WITH_DATA)
    button = {"action_id": "reaper:stop-anyway", "value": json.dumps({"arn": arn(iid), "kind": "ec2", "gb": 48.0})}
    ssm_commands.stdout(ssm_kit, iid, ssm_commands.box_output(disks=("nvme1n1",), mounts=(("nvme1n1", 200 * GB, True, "/opt/dlami/nvme"),)))
    # When an admin clicks Stop anyway on the 48 GB message
    slack["call"](signed(click_body(slack["api"], button, ADMIN), now), now)
    [(target, ev)] = slack["invoked"]
    result = load_function(target).handler(ev, lambda_context)
    # Then the fresh reading refuses it: the consent covered 48 GB, not 200
    assert result["stop_now"] == "keep" and "more than the 48.0 GB consented to" in result["said"]
    assert seed_ec2.state(ec2, iid) == "running"

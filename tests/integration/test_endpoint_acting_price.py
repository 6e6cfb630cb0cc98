"""What zeroing an idle dev endpoint costs beyond the dry run's reads and the changes, counted call by
call as the server sees them (one per API call): the gate's two reads, whose description and tags the
action takes instead of reading them again, the conditional write ahead, and what the restore record
needs fresh: its models (a classic delete), and per batch of changes one DescribeScalableTargets and one
write of every record (issue 35, item 6). Not timed: counted."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from reaper import kinds
from reaper.core.model import Decision, Mode, Outcome, Verdict
from reaper.core.settings import Settings
from reaper.handlers import handle_kind_event
from reaper.kinds.base import ActContext
from reaper.record.actionlog import ActionLog
from reaper.sweep import gate, pipeline
from reaper.wiring import build_runtime
from reaper_devkit import seed_endpoint as se
from reaper_devkit.calls import recording
from tests.conftest import TABLE, drain, event, load_function

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
CHANGES = ("Delete", "Update", "Register", "Put")  # the action itself: DeleteEndpoint, or the async path's writes
# calls per action beyond the dry run's reads and the changes: 49 for these 12 (4.08; a sweep's own log and queue
# calls weigh more on 12 than on 1,000: docs/performance.md). Before issue 35's batch: 88 (7.33), a DescribeScalableTargets,
# a DescribeEndpointConfig, a DescribeModel and a PutItem each; before that 108 (9.0), the gate's reads read again
PINNED = 49 / 12


def test_zeroing_idle_dev_endpoints_costs_the_gate_once_and_what_the_restore_record_needs(aws, sm, deployed_env, monkeypatch):
    # Given 8 idle dev classic endpoints and 4 idle dev asynchronous ones, swept in dry-run without the log
    # and the queue (the sweep's own reads, as the bench counts them)
    now = datetime.now(UTC)
    classic = [f"c-{i}" for i in range(8)]
    queued = [f"a-{i}" for i in range(4)]
    for name in classic:
        se.classic(sm, name, DEV)
    for name in queued:
        se.asynchronous(sm, name, DEV)
    for name in classic + queued:
        se.age(name, now, 300)
    for name in ("REAPER_TABLE", "REAPER_QUEUE_URL"):
        monkeypatch.delenv(name)
    # prices from the shipped copy in both runs: with the table, the live prices' cache (one Query per service and
    # region, one PutItem per type read: docs/prices.md) would count as acting, which it is not
    monkeypatch.setenv("REAPER_LIVE_PRICES", "off")
    app = load_function("endpoint")
    with recording() as dry:
        handle_kind_event(event("endpoint-schedule.json", id="dry"), "endpoint", app.RUNTIME, now=now)
    assert not [op for op in dry.calls if op.startswith(("dynamodb:", "sqs:"))]
    # When the enforce sweep, with the log and the queue, takes them all to zero
    for name in ("REAPER_TABLE", "REAPER_QUEUE_URL"):
        monkeypatch.setenv(name, deployed_env[name])
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    app = load_function("endpoint")
    with recording() as live:
        handle_kind_event(event("endpoint-schedule.json", id="live"), "endpoint", app.RUNTIME, now=now)
    ops, acted = live.by_operation(), len(classic) + len(queued)
    assert ops["sagemaker:DeleteEndpoint"] == len(classic)
    assert ops["sagemaker:UpdateEndpointWeightsAndCapacities"] == len(queued)
    # Then the endpoint is described once and its tags read once per action: by the gate, not again by the action
    assert ops["sagemaker:DescribeEndpoint"] - dry.calls["sagemaker:DescribeEndpoint"] == acted
    assert ops["sagemaker:ListTags"] - dry.calls["sagemaker:ListTags"] == acted
    # and beyond the dry run and the changes, at most the pinned figure per action
    extra = {op: n - dry.calls[op] for op, n in ops.items() if n != dry.calls[op]}
    price = sum(n for op, n in extra.items() if op.startswith(("dynamodb:", "sqs:")) or not op.split(":")[1].startswith(CHANGES))
    assert price <= PINNED * acted, extra
    # the scalable targets read once per batch (the deletes, the scalings to zero), the configurations not read
    # again (this sweep read them), the models in one listing, the records in one write per batch, not a PutItem each
    assert extra["application-autoscaling:DescribeScalableTargets"] == 2, extra
    assert "sagemaker:DescribeEndpointConfig" not in extra and "sagemaker:DescribeModel" not in extra, extra
    assert extra.get("dynamodb:PutItem", 0) <= 1 and extra["dynamodb:TransactWriteItems"] <= acted + 3, extra
    # the async endpoints have no scalable target, so no wake policy to look for: their alarms are not read
    assert "cloudwatch:DescribeAlarmsForMetric" not in extra, extra
    # And every one left its restore record, with the tags the gate read (reaper:warned-at never among them)
    log = ActionLog(aws.client("dynamodb"), TABLE)
    for name in classic:
        record = log.latest_restore("endpoint", name)
        assert record is not None and {t["Key"]: t["Value"] for t in record["tags"]} == DEV
    assert all(log.latest_restore("endpoint", name) is not None for name in queued)
    executed = [m["id"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("executed")]
    assert sorted(executed) == sorted(classic + queued)


def test_the_gate_hands_its_reads_to_that_change_only(aws, sm, table):
    # Given two idle dev endpoints, one tagged exempt since discovery
    now = datetime.now(UTC)
    for name in ("open", "shut"):
        se.classic(sm, name, DEV)
        se.age(name, now, 300)
    kind = kinds.get("endpoint")
    rt = build_runtime(Settings(mode=Mode.ENFORCE, grace_minutes=0, table=table), session=aws, region="us-east-1")
    found = {r.id: r for r in kind.discover(rt.clients(), rt.settings, now)}
    sm.add_tags(ResourceArn=found["shut"].arn, Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    ctx = ActContext(clients=rt.clients(), settings=rt.settings, now=now, log=rt.log, event_id="hand")
    action = kind.actions["delete"]
    # When the gate lets the first through, then refuses the second
    assert gate.gate(kind, action, found["open"], ctx) is None
    handed = dict(ctx.read_now)
    refused = gate.gate(kind, action, found["shut"], ctx)
    # Then the first change got its own description and tags, and a refused change leaves nothing to take
    assert handed["arn"] == found["open"].arn and handed["described"]["EndpointName"] == "open" and handed["tags"] == DEV
    assert refused is not None and ctx.read_now == {} and ctx.gated(found["open"].arn, "tags") is None
    # And after a change the pipeline makes, nothing of its reads is left for the next
    outcome = Outcome(found["open"], Decision(Verdict.ACT, "idle", action="delete"), Mode.ENFORCE)
    outcome.result = pipeline.enforce(kind, outcome, ctx)
    assert outcome.executed and ctx.read_now == {}


def test_a_batch_whose_restore_records_cannot_be_written_changes_nothing(aws, sm, deployed_env, monkeypatch):
    # Given 4 idle dev classic endpoints, and DynamoDB refusing the one write of their restore records
    now = datetime.now(UTC)
    names = [f"r-{i}" for i in range(4)]
    for name in names:
        se.classic(sm, name, DEV)
        se.age(name, now, 300)
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    monkeypatch.setenv("REAPER_LIVE_PRICES", "off")
    app = load_function("endpoint")
    assert app.RUNTIME.log is not None
    ddb = app.RUNTIME.log.client
    restore_items: dict[str, Any] = {"TransactItems": None}
    original = ddb.transact_write_items

    def refuse_records(**kwargs: Any) -> Any:
        if all(i["Put"]["Item"]["pk"]["S"].startswith("RESTORE#") for i in kwargs["TransactItems"] if "Put" in i):
            restore_items["TransactItems"] = kwargs["TransactItems"]
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "TransactWriteItems")
        return original(**kwargs)

    monkeypatch.setattr(ddb, "transact_write_items", refuse_records)
    # When the enforce sweep runs
    result = handle_kind_event(event("endpoint-schedule.json", id="refused"), "endpoint", app.RUNTIME, now=now)
    # Then the records were asked for in one write, and none of the endpoints was deleted: each an error that says so
    assert restore_items["TransactItems"] is not None and len(restore_items["TransactItems"]) == len(names)
    assert {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]} == set(names)
    assert result["acted"] == [] and result["verdicts"]["error"] == len(names)
    assert all("Rate exceeded" in e for e in result["errors"])
    assert all(ActionLog(aws.client("dynamodb"), TABLE).latest_restore("endpoint", n) is None for n in names)

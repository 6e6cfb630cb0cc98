"""What was done is said as done (docs/safety.md, "The settlement write"): a change made whose
settlement cannot be written is never posted as failed; the next sweep of its kind reads the resource's
state, settles its log entry in place and posts it once. And the action log's transactions stay within
DynamoDB's 100 items."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from reaper.cli.formats import as_logged
from reaper.cli.main import main
from reaper.handlers import handle_kind_event
from reaper.kinds.ec2 import catalog
from reaper.record.actionlog import ActionLog, Begun, Settlement, create_table
from reaper.record.message import VerdictMessage, from_record
from reaper.slack.message import render
from reaper_devkit import seed
from reaper_devkit import seed_ec2 as se2
from reaper_devkit import seed_endpoint as se
from reaper_devkit import seed_studio as studio
from tests.conftest import REGION, TABLE, drain, event, load_function
from tests.helpers import fsx_fleet, training_fleet
from tests.helpers.modes import enforce_mode
from tests.plugins import aws_shapes

DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
IDLE = [0] * 36
# TransactWriteItems: "up to 100 action requests" (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html)
TRANSACT_MAX = 100


def _throttled(operation: str) -> ClientError:
    return ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, operation)


def _settles_a_change(item: dict[str, Any]) -> bool:
    """A write of a change's settled record: its log entry or unposted copy, recorded as executed (the
    write-ahead copies, written before the change, say `unconfirmed`)."""
    body = item.get("entry", item.get("body", {})).get("S", "{}")
    pk = item["pk"]["S"]
    data = json.loads(body)
    return pk.startswith(("LOG#", "UNPOSTED")) and data.get("executed") is True and not data.get("unconfirmed")


def throttle_settlements(monkeypatch: pytest.MonkeyPatch, client: Any) -> None:
    """Every write that settles a made change answers ThrottlingException, after every retry: the batched
    settlement, a settlement riding along with the next change's begin, and the plain writes of settle_apart."""
    transact, put = client.transact_write_items, client.put_item

    def transact_write_items(**kwargs: Any) -> Any:
        if any(_settles_a_change(i["Put"]["Item"]) for i in kwargs["TransactItems"] if "Put" in i):
            raise _throttled("TransactWriteItems")
        return transact(**kwargs)

    def put_item(**kwargs: Any) -> Any:
        if _settles_a_change(kwargs["Item"]):
            raise _throttled("PutItem")
        return put(**kwargs)

    monkeypatch.setattr(client, "transact_write_items", transact_write_items)
    monkeypatch.setattr(client, "put_item", put_item)


def idle_notebook_enforced(sm: Any, cw: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, datetime]:
    """An idle notebook `nb`, and the notebook function loaded in enforce without grace: (the function, now)."""
    enforce_mode(monkeypatch)
    now = datetime.now(UTC)
    seed.notebook(sm, "nb", DEV)
    seed.activity(cw, "nb", now, IDLE)
    return load_function("notebook"), now


def test_a_settlement_throttled_twice_is_retried_and_posted_as_done_in_its_own_sweep(aws, sm, cw, deployed_env, monkeypatch, capsys):
    # Given an idle notebook in enforce, and the first two plain writes of its settlement throttled
    app, now = idle_notebook_enforced(sm, cw, monkeypatch)
    client = app.RUNTIME.log.client
    put, refused = client.put_item, []

    def twice(**kwargs: Any) -> Any:
        if _settles_a_change(kwargs["Item"]) and len(refused) < 2:
            refused.append(kwargs["Item"]["pk"]["S"])
            raise _throttled("PutItem")
        return put(**kwargs)

    with monkeypatch.context() as faults:
        throttle_settlements(faults, client)  # the batched write: refused every time
        faults.setattr(client, "put_item", twice)
        assert handle_kind_event(event("notebook-schedule.json", id="first"), "notebook", app.RUNTIME, now=now)["acted"] == ["nb"]
    # Then its sweep tried again, logged it as done and posted it as done, once
    assert len(refused) == 2
    stops = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["id"] == "nb"]
    assert len(stops) == 1 and stops[0]["executed"] is True and not stops[0].get("unconfirmed"), stops
    [entry] = [e for e in _logged(capsys) if e["id"] == "nb"]
    assert entry["executed"] is True and not entry.get("unconfirmed")


def _notebooks(aws: Any, now: datetime) -> None:
    sm, cw = aws.client("sagemaker"), aws.client("cloudwatch")
    for name in ("nb-a", "nb-b"):
        seed.notebook(sm, name, DEV)
        seed.activity(cw, name, now, IDLE)


def _endpoints(aws: Any, now: datetime) -> None:
    sm = aws.client("sagemaker")
    se.classic(sm, "idle-gpu", DEV, instance_type="ml.g4dn.xlarge")
    se.age("idle-gpu", now, 300)
    se.components(sm, "ic-idle", {"ic-a": 2}, DEV)
    se.age("ic-idle", now, 300)


def _ec2(aws: Any, now: datetime) -> None:
    catalog.forget()
    ec2, cw = aws.client("ec2"), aws.client("cloudwatch")
    for _ in range(2):
        se2.metrics(cw, se2.instance(ec2, "g5g.xlarge", DEV, now=now), now)


def _studio(aws: Any, now: datetime) -> None:
    sm, cw = aws.client("sagemaker"), aws.client("cloudwatch")
    lab = studio.domain(sm, "lab")
    for user in ("u1", "u2"):
        studio.user(sm, lab, user, {"ml:owner": f"{user}@example.com"})
        studio.app(sm, lab, user_name=user, app_type="Canvas", tags={"ml:stage": "dev"}, created=now - timedelta(days=1))
        studio.canvas_activity(cw, lab, user, last_active=now - timedelta(hours=4), now=now)


KINDS: dict[str, tuple[str, str, Callable[[Any, datetime], Any]]] = {
    "notebook": ("notebook", "notebook-schedule.json", _notebooks),
    "endpoint": ("endpoint", "endpoint-schedule.json", _endpoints),
    "fsx": ("fsx", "fsx-schedule.json", fsx_fleet.seed),
    "training-job": ("training_job", "training-job-schedule.json", training_fleet.seed),
    "ec2": ("ec2", "ec2-schedule.json", _ec2),
    "studio-app": ("studio_app", "studio-app-schedule.json", _studio),
}


def _logged(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """`reaper log --json`, as an admin reads it."""
    capsys.readouterr()
    assert main(["log", "--since", "2h", "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_made_change_whose_settlement_is_throttled_is_posted_once_as_done(aws, deployed_env, monkeypatch, capsys, kind):
    # Given idle resources of the kind, enforced without grace, and every settlement write throttled
    enforce_mode(monkeypatch)
    monkeypatch.setenv("REAPER_TRAINING_DEFAULT_CEILINGS_ACT", "true")
    function, schedule, seeder = KINDS[kind]
    now = datetime.now(UTC)
    seeder(aws, now)
    app = load_function(function)
    # When the scheduled sweep acts with its settlements refused
    with monkeypatch.context() as faults:
        throttle_settlements(faults, app.RUNTIME.log.client)
        first = handle_kind_event(event(schedule, id="first"), kind, app.RUNTIME, now=now)
    made = set(first["acted"])
    assert made, first
    held = drain(aws, deployed_env["REAPER_QUEUE_URL"])
    # Then nothing it made is posted as failed: its message is held until its state is read
    assert not [m for m in held if m["id"] in made and m["verdict"] == "error"], [m["reason"] for m in held if m["id"] in made]
    begun = {(e["id"], e.get("action")): e for e in _logged(capsys) if e.get("event_id") == "first" and e.get("unconfirmed")}
    assert {i for i, _ in begun} == made
    # When the next sweep runs (its unposted hold of 15 minutes over)
    handle_kind_event(event(schedule, id="second"), kind, app.RUNTIME, now=now + timedelta(minutes=20))
    posted = held + drain(aws, deployed_env["REAPER_QUEUE_URL"])
    # Then `reaper log` shows each change done, settled in place (no unconfirmed entry left)
    logged = {(e["id"], e.get("action")): e for e in _logged(capsys) if e.get("event_id") == "first"}
    for key, ahead in begun.items():
        assert logged[key]["executed"] is True and not logged[key].get("unconfirmed"), logged[key]
        # and Slack gets one message for it, under its write-ahead key, saying it was done
        mine = [m for m in posted if m.get("message_key") == ahead["message_key"]]
        assert len(mine) == 1 and mine[0]["executed"] is True and not mine[0].get("unconfirmed"), mine
        body = from_record(mine[0])
        assert isinstance(body, VerdictMessage)
        text, _ = render(body)
        assert "Could not" not in text and "unconfirmed" not in text, text
        assert not [m for m in posted if (m["id"], m.get("action")) == key and m["verdict"] == "error"]


def test_a_change_reconciled_twice_is_posted_under_one_key_and_its_entry_stays_done(aws, sm, cw, deployed_env, monkeypatch, capsys):
    # Given a notebook stopped by a sweep whose settlement was throttled
    app, now = idle_notebook_enforced(sm, cw, monkeypatch)
    with monkeypatch.context() as faults:
        throttle_settlements(faults, app.RUNTIME.log.client)
        assert handle_kind_event(event("notebook-schedule.json", id="first"), "notebook", app.RUNTIME, now=now)["acted"] == ["nb"]
    # When the next sweep reconciles it but cannot mark its message queued, and a third sweep (or a
    # duplicate delivery) reconciles it again
    later = now + timedelta(minutes=20)
    with monkeypatch.context() as faults:
        faults.setattr(app.RUNTIME.log.client, "batch_write_item", lambda **_: (_ for _ in ()).throw(_throttled("BatchWriteItem")))
        handle_kind_event(event("notebook-schedule.json", id="second"), "notebook", app.RUNTIME, now=later)
    handle_kind_event(event("notebook-schedule.json", id="third"), "notebook", app.RUNTIME, now=later)
    # Then both queued the same message key (the notifier posts a key once), done both times
    stopped = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m["id"] == "nb" and m.get("action") == "stop"]
    assert len(stopped) == 2 and len({m["message_key"] for m in stopped}) == 1, stopped
    assert all(m["executed"] and m["verdict"] == "act" for m in stopped)
    # and the log holds one entry for the stop, done
    entries = [e for e in _logged(capsys) if e["id"] == "nb" and e.get("action") == "stop"]
    assert len(entries) == 1 and entries[0]["executed"] is True


def test_a_change_that_was_not_made_is_settled_as_not_made(aws, sm, cw, deployed_env, monkeypatch, capsys):
    # Given a stop begun (written ahead) whose call failed, and whose settlement was throttled too
    app, now = idle_notebook_enforced(sm, cw, monkeypatch)
    client = app.RUNTIME.log.client
    transact = client.transact_write_items

    def begin_only(**kwargs: Any) -> Any:  # a settlement gives a lease back (a Delete); a begin takes one
        if any("Delete" in i and i["Delete"]["Key"]["pk"]["S"].startswith("LEASE#") for i in kwargs["TransactItems"]):
            raise _throttled("TransactWriteItems")
        return transact(**kwargs)

    with monkeypatch.context() as faults:
        faults.setattr(client, "transact_write_items", begin_only)
        faults.setattr(client, "put_item", lambda **_: (_ for _ in ()).throw(_throttled("PutItem")))
        faults.setattr(app.RUNTIME.clients()("sagemaker"), "stop_notebook_instance", lambda **_: (_ for _ in ()).throw(_throttled("Stop")))
        handle_kind_event(event("notebook-schedule.json", id="first"), "notebook", app.RUNTIME, now=now)
    # When the next sweep reads it (the notebook still InService)
    handle_kind_event(event("notebook-schedule.json", id="second"), "notebook", app.RUNTIME, now=now + timedelta(minutes=20))
    # Then the first sweep's stop is logged and posted as not made, saying what was read
    first = [e for e in _logged(capsys) if e.get("event_id") == "first" and e["id"] == "nb"]
    assert len(first) == 1 and first[0]["executed"] is False and first[0]["verdict"] == "error"
    assert "InService" in first[0]["error"] and not first[0].get("unconfirmed")


# -- the transaction bound ---------------------------------------------------------------------------------


def test_the_kit_refuses_a_transaction_past_100_items_as_dynamodb_does(aws, table):
    dynamodb = aws.client("dynamodb")
    items = [{"Put": {"TableName": table, "Item": {"pk": {"S": f"P#{i}"}, "sk": {"S": "-"}}}} for i in range(TRANSACT_MAX + 1)]
    with pytest.raises(ClientError) as refused:
        dynamodb.transact_write_items(TransactItems=items)
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert "less than or equal to 100" in refused.value.response["Error"]["Message"]
    # and the shape check every test runs under names it (so a test that builds one fails)
    assert any("TransactItems has 101 items" in v for v in aws_shapes.take())


@pytest.mark.parametrize("waiting", [32, 33, 40])
def test_a_begin_takes_along_only_the_settlements_that_fit_in_100_items(aws, table, waiting):
    # Given changes waiting to be settled, and a recorder of every transaction's size
    log, now = ActionLog(aws.client("dynamodb"), table), datetime.now(UTC)
    sizes: list[int] = []
    transact = log.client.transact_write_items

    def recorded(**kwargs: Any) -> Any:
        sizes.append(len(kwargs["TransactItems"]))
        return transact(**kwargs)

    log.client.transact_write_items = recorded
    arns = [f"arn:aws:sagemaker:us-east-1:123456789012:notebook-instance/nb-{i:02d}" for i in range(waiting)]
    settle: list[Settlement] = []
    for i, arn in enumerate(arns):
        ahead = {"kind": "notebook", "id": f"nb-{i:02d}", "verdict": "act"}
        assert log.begin(arn, "sweep-a", f"claim-{i}", ahead, now, "sweep-a") is Begun.BEGUN
        settle.append(Settlement(arn, "sweep-a", "notebook", f"nb-{i:02d}", {**ahead, "executed": True}, now, "sweep-a"))
    sizes.clear()
    # When the next change begins with all of them waiting
    next_arn = "arn:aws:sagemaker:us-east-1:123456789012:notebook-instance/next"
    ahead = {"kind": "notebook", "id": "next", "verdict": "act"}
    begun = log.begin(next_arn, "sweep-a", "claim-next", ahead, now, "sweep-a", settle=settle)
    # Then no transaction passed 100 items, and as many as fit rode along in the one write
    assert begun is Begun.BEGUN and sizes and max(sizes) <= TRANSACT_MAX, sizes
    fit = (TRANSACT_MAX - 4) // 3
    assert sizes == [4 + 3 * min(waiting, fit)] and len(settle) == max(0, waiting - fit)
    # and what is left is settled apart, in transactions within the bound too
    log.settle(settle)
    assert max(sizes) <= TRANSACT_MAX
    done = [e for e in log.entries(now - timedelta(minutes=1), now + timedelta(minutes=1)) if e.executed]
    assert len(done) == waiting


# -- the throttle attack -----------------------------------------------------------------------------------

WRITES = ("put_item", "transact_write_items", "delete_item", "batch_write_item", "update_item")


def flaky_writes(monkeypatch: pytest.MonkeyPatch, client: Any, rate: float, rng: random.Random) -> None:
    """Every write to the action log answers ThrottlingException `rate` of the time (after botocore's retries)."""
    for method in WRITES:
        original = getattr(client, method)

        def throttled(*args: Any, _original: Any = original, _method: str = method, **kwargs: Any) -> Any:
            if rng.random() < rate:
                raise _throttled(_method)
            return _original(*args, **kwargs)

        monkeypatch.setattr(client, method, throttled)


def attack_run(n: int, rng: random.Random, monkeypatch: pytest.MonkeyPatch, rate: float = 0.3) -> Counter[str]:
    """One run in a fresh account: three idle notebooks, two sweeps with the action log's writes throttled
    `rate` of the time, then a calm one. What the run got wrong, counted by resource."""
    with mock_aws(), monkeypatch.context() as env:
        session = boto3.session.Session(region_name=REGION)
        create_table(session.client("dynamodb"), TABLE)
        queue = session.client("sqs").create_queue(QueueName=f"attack-{n}")["QueueUrl"]
        for key, value in {"REAPER_TABLE": TABLE, "REAPER_QUEUE_URL": queue, "REAPER_MODE": "enforce", "REAPER_GRACE_MINUTES": "0"}.items():
            env.setenv(key, value)
        sm, cw = session.client("sagemaker"), session.client("cloudwatch")
        now = datetime.now(UTC)
        names = [f"r{n}-{i}" for i in range(3)]
        for name in names:
            seed.notebook(sm, name, DEV)
            seed.activity(cw, name, now, IDLE)
        app = load_function("notebook")
        acted: Counter[str] = Counter()
        with monkeypatch.context() as faults:
            flaky_writes(faults, app.RUNTIME.log.client, rate, rng)
            for k in range(2):
                acted.update(
                    handle_kind_event(
                        event("notebook-schedule.json", id=f"a{n}-{k}"), "notebook", app.RUNTIME, now=now + timedelta(minutes=20 * k)
                    )["acted"]
                )
        acted.update(
            handle_kind_event(event("notebook-schedule.json", id=f"a{n}-calm"), "notebook", app.RUNTIME, now=now + timedelta(minutes=40))[
                "acted"
            ]
        )
        made = {
            name
            for name in names
            if sm.describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceStatus"] in ("Stopping", "Stopped")
        }
        first: dict[str, dict[str, Any]] = {}  # what the notifier posts: the first message of each key
        for m in drain(session, queue):
            first.setdefault(m["message_key"], m)
        stops = [m for m in first.values() if m.get("id") in made and m.get("action") == "stop"]
        logged = {
            e.id: as_logged(e)
            for e in ActionLog(session.client("dynamodb"), TABLE).entries(now - timedelta(hours=1), now + timedelta(hours=1))
            if e.action == "stop"
        }
        wrong: Counter[str] = Counter(made=len(made))
        wrong["said not done, was done"] = len(
            {m["id"] for m in stops if m["verdict"] == "error" or m.get("unconfirmed") or not m.get("executed")}
        )
        wrong["acted twice"] = sum(1 for c in acted.values() if c > 1)
        wrong["made unknown to its sweep"] = len(made - set(acted))
        wrong["lost (no done message)"] = len(
            {i for i in made if not any(m["id"] == i and m.get("executed") and not m.get("unconfirmed") for m in stops)}
        )
        wrong["lost (log not done)"] = len({i for i in made if not logged.get(i, {}).get("executed")})
        return wrong


@pytest.mark.slow
def test_thirty_percent_throttling_of_the_action_log_over_100_runs_says_every_change_as_done_once(monkeypatch):
    # Given 100 runs (seeded), each three idle notebooks and two sweeps with 30 % of the log's writes throttled
    rng = random.Random(33)
    total: Counter[str] = Counter()
    for n in range(100):
        total.update(attack_run(n, rng, monkeypatch))
    # Then every stop made is said as done, once, and logged as done (figures in docs/safety.md)
    assert total["made"] > 100, total
    wrong = ("said not done, was done", "acted twice", "made unknown to its sweep", "lost (no done message)", "lost (log not done)")
    assert [total[w] for w in wrong] == [0] * len(wrong), total

"""`reaper report --bill` through the real CLI: a known bill seeded in the kit's Cost Explorer
(reaper_devkit.moto_ext.cost_explorer_usage) beside known stops made by a real enforce sweep against moto.
The reaper's claim and the bill's drop agree within 2 % or the difference is named; the four buckets and
the other line add up to the bill, untagged spend included; one paid read a day (docs/bill.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from reaper.cli.main import main
from reaper.handlers import handle_kind_event
from reaper.record.actionlog import ActionLog
from reaper_devkit import seed
from reaper_devkit.moto_ext import cost_explorer_usage as kit
from reaper_devkit.moto_ext.cost_explorer_usage import Line
from tests.conftest import event, load_function

ACCOUNT = "123456789012"
OTHER_ACCOUNT = "111122223333"
STOPPED = {"nb-tagged": {"ml:owner": "ana@example.com", "ml:stage": "dev"}, "nb-untagged": {"ml:owner": "bo@example.com"}}


@pytest.fixture(autouse=True)
def clean_kit() -> Iterator[None]:
    kit.reset()
    yield
    kit.reset()


@pytest.fixture
def stopped(aws: Any, sm: Any, cw: Any, deployed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Two idle notebooks stopped by an enforce sweep six days ago; what the log says each costs an hour."""
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    at = datetime.now(UTC) - timedelta(days=6)
    for name, tags in STOPPED.items():
        seed.notebook(sm, name, tags)
        seed.activity(cw, name, at, [0] * 36)
    result = handle_kind_event(event("notebook-schedule.json", id="live"), "notebook", load_function("notebook").RUNTIME, now=at)
    assert sorted(result["acted"]) == sorted(STOPPED)
    log = ActionLog(aws.client("dynamodb"), deployed_env["REAPER_TABLE"])
    acts = [e for e in log.entries(at - timedelta(hours=1), at + timedelta(hours=1)) if e.executed]
    hourly = sum(e.hourly_usd or 0.0 for e in acts)
    assert hourly > 0 and all(e.hourly_usd is not None for e in acts)
    return {"at": at, "hourly": hourly, "itype": acts[0].instance_type}


def _bill(stop_day: date, hourly: float, itype: str, restarted_days: int = 0, account: str = "") -> list[Line]:
    """30 days of an ML account's bill: the two notebooks billed whole days until the stop (half that day),
    nothing after (or still billed `restarted_days` after: started again outside the reaper), beside a
    busy notebook, training, hosting, a GPU box, storage, transfer and a non-ML line."""
    today = datetime.now(UTC).date()
    lines: list[Line] = []
    for n in range(1, 32):
        day = today - timedelta(days=n)
        stopped = 0.0 if day > stop_day + timedelta(days=restarted_days) else (0.5 if day == stop_day else 1.0)
        dev, train = {"ml:stage": "dev"}, {"ml:stage": "training"}
        lines += [
            Line(day, f"USE1-Notebk:{itype}", hourly * 24 * stopped, 24 * 2 * stopped, dev, account),
            Line(day, "USE1-Notebk:ml.m5.xlarge", 5.52, 24.0, dev, account),  # busy all month
            Line(day, "USE1-Train:ml.p3.2xlarge", 30.6, 8.0, train, account),
            Line(day, "USE1-Host:ml.g5.xlarge", 33.86, 24.0, {"ml:stage": "prod"}, account),
            Line(day, "BoxUsage:p3.2xlarge", 24.48, 8.0, train, account, "Amazon Elastic Compute Cloud - Compute"),
            Line(day, "BoxUsage:g5.xlarge", 12.07, 12.0, {}, account, "Amazon Elastic Compute Cloud - Compute"),  # untagged dev box
            Line(day, "EBS:VolumeUsage.gp3", 1.6, 0.5, {}, account, "EC2 - Other"),
            Line(day, "TimedStorage-ByteHrs", 0.75, 32.0, dev, account, "Amazon Simple Storage Service"),
            Line(day, "DataTransfer-Out-Bytes", 0.9, 10.0, {}, account, "Amazon Simple Storage Service"),
            Line(day, "USE1-Lambda-GB-Second", 0.31, 1000.0, {}, account, "AWS Lambda"),
        ]
    return lines


def _seed(lines: list[Line], activated: tuple[str, ...] = ("ml:stage",), account: str = ACCOUNT) -> None:
    today = datetime.now(UTC).date()
    kit.set_bill(account, lines, activated=activated, final_before=today - timedelta(days=2), data_until=today)


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["report", "--bill", *args, "--output", "json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _in_window(lines: list[Line]) -> list[Line]:
    today = datetime.now(UTC).date()
    return [x for x in lines if today - timedelta(days=30) <= x.day < today]


def test_the_claim_agrees_with_the_bills_drop_and_the_buckets_add_up_to_the_bill(stopped, capsys):
    # Given a known bill (two notebooks billed until the enforce sweep stopped them) and the sweep's log
    lines = _bill(stopped["at"].date(), stopped["hourly"], stopped["itype"])
    _seed(lines)
    # When the bill report is read through the CLI, as JSON
    rows = _json(capsys)
    # Then the bill is the seeded one, read through every page, with AWS's estimated days said
    head = rows[0]
    billed = sum(x.usd for x in _in_window(lines))
    assert head["billed_usd"] == pytest.approx(billed, abs=0.01)
    assert head["requests"] == len(kit.calls) > 1 and not head["cached"]
    assert head["estimated_days"] == [(datetime.now(UTC).date() - timedelta(days=d)).isoformat() for d in (2, 1)]
    # and the four buckets with the other line add up to it, untagged spend included
    buckets = {r["bucket"]: r for r in rows if r["section"] == "bucket"}
    assert sum(r["billed_usd"] for r in buckets.values()) == pytest.approx(billed, abs=0.05)
    untagged = sum(x.usd for x in _in_window(lines) if not x.tags.get("ml:stage"))
    assert sum(r["untagged_usd"] for r in buckets.values()) == pytest.approx(untagged, abs=0.05)
    assert buckets["development"]["untagged_usd"] == pytest.approx(
        sum(x.usd for x in _in_window(lines) if x.usage_type == "BoxUsage:g5.xlarge"), abs=0.01
    )
    assert buckets["other"]["billed_usd"] == pytest.approx(sum(x.usd for x in _in_window(lines) if "Lambda" in x.usage_type), abs=0.01)
    # and the untagged line names the stopped notebook the log saw without ml:stage
    assert next(r for r in rows if r["section"] == "untagged")["to_tag"] == ["notebook/nb-untagged"]
    # and what the reaper claims for the five whole days since agrees with the bill's drop within 2 %
    (notebook,) = [r for r in rows if r["section"] == "reconcile"]
    assert notebook["kind"] == "notebook" and notebook["days_after"] == 5
    assert notebook["claimed_usd"] == pytest.approx(stopped["hourly"] * 24 * 5, rel=0.001)
    assert abs(notebook["difference_usd"]) <= 0.02 * notebook["claimed_usd"] and notebook["agrees"]
    assert notebook["billed_drop_hours"] == pytest.approx(notebook["claimed_hours"], rel=0.02)
    assert notebook["differences"] == []


def test_a_second_report_the_same_day_reads_the_cached_bill_and_pays_nothing(stopped, capsys):
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]))
    first = _json(capsys)
    paid = len(kit.calls)
    # When the same report is asked again the same day, as a table this time
    assert main(["report", "--bill"]) == 0
    text = capsys.readouterr().out
    # Then no request was made; the figures are the same
    assert len(kit.calls) == paid
    assert "read from the day's cache (no charge)" in text
    assert f"${first[0]['billed_usd']:,.2f}" in text
    assert "notebook: reaper claims" in text and "agrees" in text


def test_a_notebook_started_again_outside_the_reaper_is_a_named_difference(stopped, capsys):
    # Given a bill that kept charging for the stopped notebooks two days after the stop (an owner started
    # them from the console; nothing in the log says so)
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"], restarted_days=2))
    # When the report is read as a table
    assert main(["report", "--bill"]) == 0
    text = capsys.readouterr().out
    # Then the claim and the drop differ by two days of the two notebooks, and the difference is named
    gap = stopped["hourly"] * 24 * 2
    assert f"differs by ${gap:,.2f}" in text
    assert "the bill kept charging after the stops" in " ".join(text.split())
    assert "Estimated by AWS" in " ".join(text.split())


def test_a_stage_tag_not_activated_is_said_and_every_dollar_is_untagged(stopped, capsys):
    lines = _bill(stopped["at"].date(), stopped["hourly"], stopped["itype"])
    _seed(lines, activated=())
    rows = _json(capsys)
    assert rows[0]["stage_tag_seen"] is False
    buckets = [r for r in rows if r["section"] == "bucket"]
    assert sum(r["untagged_usd"] for r in buckets) == pytest.approx(sum(x.usd for x in _in_window(lines)), abs=0.05)
    # the GPU box tagged for training is development now: its stage is not on the bill
    assert not [
        r
        for r in buckets
        if r["bucket"] == "training" and r["billed_usd"] > sum(x.usd for x in _in_window(lines) if "Train:" in x.usage_type) + 0.05
    ]
    assert main(["report", "--bill"]) == 0
    assert "not activated as a cost-allocation tag" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("code", "times", "said"),
    [
        ("BillExpirationException", 1, "the bill for this period has expired"),
        ("LimitExceededException", 10, "too many requests"),  # more than the SDK's standard retries try
        ("DataUnavailableException", 1, "no data for this period yet"),
    ],
)
def test_cost_explorers_refusals_are_said_and_not_cached(stopped, capsys, code, times, said):
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]))
    for _ in range(times):
        kit.refuse_next(ACCOUNT, code)
    rows = _json(capsys)
    assert said in rows[0]["refused"] and len(rows) == 1
    # the next report asks again (a refusal is not kept as the day's bill)
    kit.reset()
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]))
    again = _json(capsys)
    assert again[0]["refused"] is None and again[0]["requests"] > 0


def test_one_limit_exceeded_is_retried_by_the_sdk_and_the_bill_read(stopped, capsys):
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]))
    kit.refuse_next(ACCOUNT, "LimitExceededException")
    rows = _json(capsys)
    assert rows[0]["refused"] is None and rows[0]["requests"] == len(kit.calls) - 1  # the refused attempt is one more request


def test_a_period_with_no_data_yet_is_said(stopped, capsys):
    # Given Cost Explorer has not yet published yesterday (just after midnight)
    today = datetime.now(UTC).date()
    kit.set_bill(ACCOUNT, [], activated=("ml:stage",), final_before=today, data_until=today - timedelta(days=1))
    assert main(["report", "--bill", "--since", "1d"]) == 0
    assert "no bill: Cost Explorer has no data for this period yet" in capsys.readouterr().out


def test_across_the_organisation_each_linked_account_is_reconciled_with_its_own_stops(stopped, capsys, monkeypatch, deployed_env):
    # Given the central log holds the member's stops, and the management account's bill has two linked accounts
    monkeypatch.setenv("REAPER_ORG_TABLE", deployed_env["REAPER_TABLE"])
    lines = _bill(stopped["at"].date(), stopped["hourly"], stopped["itype"], account=ACCOUNT)
    lines += [Line(x.day, x.usage_type, x.usd, x.quantity, x.tags, OTHER_ACCOUNT) for x in _bill(date(2000, 1, 1), 1.0, "ml.t3.medium")]
    _seed(lines)
    # When `reaper report --org --bill` reads it
    rows = _json(capsys, "--org")
    # Then one request grouped by linked account and usage type, and the member's notebooks agree
    assert kit.calls[0]["GroupBy"] == [{"Type": "DIMENSION", "Key": "LINKED_ACCOUNT"}, {"Type": "DIMENSION", "Key": "USAGE_TYPE"}]
    assert (
        rows[0]["org"] is True
        and not rows[0]["truncated"]
        and rows[0]["billed_usd"] == pytest.approx(sum(x.usd for x in _in_window(lines)), abs=0.05)
    )
    (row,) = [r for r in rows if r["section"] == "reconcile"]
    assert row["account"] == ACCOUNT and row["agrees"]
    assert sum(r["billed_usd"] for r in rows if r["section"] == "bucket") == pytest.approx(rows[0]["billed_usd"], abs=0.05)


def test_a_bill_longer_than_fifty_pages_is_said_partial_and_not_cached(stopped, capsys, monkeypatch):
    monkeypatch.setattr(kit, "PAGE_GROUPS", 1)
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]))
    rows = _json(capsys)
    assert rows[0]["truncated"] is True and rows[0]["requests"] == len(kit.calls) == 50
    assert _json(capsys)[0]["requests"] == 50  # not kept as the day's bill


def test_bill_writes_table_or_json_only(capsys):
    assert main(["report", "--bill", "--output", "csv"]) == 2
    assert "--bill writes table or json" in capsys.readouterr().err


# -- the daily digest's line (DigestBill=on) -------------------------------------------------------


def _digest(aws: Any, table: str, cost_explorer: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from reaper.slack.notifier import Notifier
    from reaper_devkit.slack_api import SlackApi
    from tests.helpers.slack_bot import ADMIN, USERS, bot_for

    with SlackApi(USERS) as api:
        bot = bot_for(api)
        n = Notifier(webhook=lambda: None, log=ActionLog(aws.client("dynamodb"), table), bot=lambda: bot, min_interval=0)
        n.cost_explorer = cost_explorer
        result = n.handle({"detail-type": "Scheduled Event", "source": "aws.scheduler"})
        return result, api.posts_to(ADMIN)


def test_the_digest_says_the_bill_beside_its_weekly_line_when_digest_bill_is_on(stopped, aws, deployed_env):
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]))
    result, posts = _digest(aws, deployed_env["REAPER_TABLE"], lambda: aws.client("ce"))
    assert result["posted"] is True
    claim = stopped["hourly"] * 24 * 5
    assert f"notebook agrees (${claim:,.2f} claimed, ${claim:,.2f} off the bill)" in result["digest"]["bill"]
    assert "Against the bill:" in json.dumps(posts[0])
    assert len(kit.calls) > 0


def test_the_digest_reads_no_bill_when_digest_bill_is_off_and_says_a_refused_read(stopped, aws, deployed_env):
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]))
    result, _ = _digest(aws, deployed_env["REAPER_TABLE"], None)
    assert result["posted"] is True and result["digest"]["bill"] is None and kit.calls == []


def test_a_refused_bill_read_is_said_in_the_digest_which_still_goes_out(stopped, aws, deployed_env):
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]))
    kit.refuse_next(ACCOUNT, "BillExpirationException")
    result, posts = _digest(aws, deployed_env["REAPER_TABLE"], lambda: aws.client("ce"))
    assert result["posted"] is True and len(posts) == 1
    assert result["digest"]["bill"].startswith("not read: Cost Explorer says the bill for this period has expired")


@pytest.mark.parametrize(("value", "reads"), [("on", True), ("off", False)])
def test_the_notifier_gets_a_cost_explorer_client_only_with_digest_bill_on(deployed_env, monkeypatch, value, reads):
    monkeypatch.setenv("REAPER_DIGEST_BILL", value)
    assert (load_function("notifier").NOTIFIER.cost_explorer is not None) is reads


# -- the organisation's digest (the central function, DigestBill=on) --------------------------------


def _central_digest(monkeypatch: pytest.MonkeyPatch, org_table: str, digest_bill: str, lambda_context: Any) -> tuple[dict[str, Any], Any]:
    """The central function's scheduled digest through its real handler; only its Slack bot is the kit's."""
    from reaper_devkit.slack_api import SlackApi
    from tests.helpers.slack_bot import ADMIN, USERS, bot_for

    monkeypatch.setenv("REAPER_ORG_TABLE", org_table)
    monkeypatch.setenv("REAPER_DIGEST_BILL", digest_bill)
    app = load_function("central")
    with SlackApi(USERS) as api:
        bot = bot_for(api)
        app.DIGEST.bot = lambda: bot
        result = app.handler({"detail-type": "Scheduled Event", "source": "aws.scheduler", "detail": {}}, lambda_context)
        return result, api.posts_to(ADMIN)


def test_the_organisations_digest_says_each_linked_accounts_bill_against_its_own_stops(stopped, deployed_env, monkeypatch, lambda_context):
    # Given the central log holds a member's stops, and the organisation's bill has two linked accounts
    lines = _bill(stopped["at"].date(), stopped["hourly"], stopped["itype"], account=ACCOUNT)
    lines += [Line(x.day, x.usage_type, x.usd, x.quantity, x.tags, OTHER_ACCOUNT) for x in _bill(date(2000, 1, 1), 1.0, "ml.t3.medium")]
    _seed(lines)
    # When the central function posts the day's digest with DigestBill=on
    result, posts = _central_digest(monkeypatch, deployed_env["REAPER_TABLE"], "on", lambda_context)
    # Then one read grouped by linked account, and the line names the member's account and its agreement
    assert result["posted"] is True and len(posts) == 1
    assert kit.calls[0]["GroupBy"] == [{"Type": "DIMENSION", "Key": "LINKED_ACCOUNT"}, {"Type": "DIMENSION", "Key": "USAGE_TYPE"}]
    billed = sum(x.usd for x in _in_window(lines))
    claim = stopped["hourly"] * 24 * 5
    line = result["digest"]["bill"]
    assert line.startswith(f"${billed:,.2f} billed") and f"{ACCOUNT} notebook agrees (${claim:,.2f} claimed" in line
    assert "Against the bill:" in json.dumps(posts[0])


def test_the_organisations_digest_reads_no_bill_with_digest_bill_off(stopped, deployed_env, monkeypatch, lambda_context):
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"], account=ACCOUNT))
    result, _ = _central_digest(monkeypatch, deployed_env["REAPER_TABLE"], "off", lambda_context)
    assert result["posted"] is True and result["digest"]["bill"] is None and kit.calls == []


# -- the bill by ml:project (--bill --by project) ----------------------------------------------------


def test_the_bill_by_project_adds_up_to_the_bill_with_the_untagged_its_own_line(stopped, capsys):
    # Given a bill whose lines carry ml:project (activated), a GPU box and transfer without one
    lines = [
        Line(
            x.day,
            x.usage_type,
            x.usd,
            x.quantity,
            {**x.tags, **({"ml:project": "vision"} if "Notebk" in x.usage_type else {})},
            x.account,
            x.service,
        )
        for x in _bill(stopped["at"].date(), stopped["hourly"], stopped["itype"])
    ]
    lines = [
        Line(x.day, x.usage_type, x.usd, x.quantity, {**x.tags, "ml:project": "nlp"}, x.account, x.service)
        if "Train" in x.usage_type
        else x
        for x in lines
    ]
    _seed(lines, activated=("ml:stage", "ml:project"))
    # When the bill is read by project through the CLI
    rows = _json(capsys, "--by", "project")
    # Then one request grouped by usage type and ml:project
    assert kit.calls[0]["GroupBy"] == [{"Type": "DIMENSION", "Key": "USAGE_TYPE"}, {"Type": "TAG", "Key": "ml:project"}]
    assert rows[0]["tag"] == "ml:project" and rows[0]["tag_seen"] is True
    # And each project's spend is the seeded one, the untagged its own line, all adding up to the bill
    window = _in_window(lines)
    projects = {r["project"]: r["billed_usd"] for r in rows if r["section"] == "project"}
    for name in ("vision", "nlp"):
        assert projects[name] == pytest.approx(sum(x.usd for x in window if x.tags.get("ml:project") == name), abs=0.01)
    untagged = sum(x.usd for x in window if not x.tags.get("ml:project"))
    assert projects[None] == pytest.approx(untagged, abs=0.01)
    assert sum(projects.values()) == pytest.approx(rows[0]["billed_usd"], abs=0.05)
    assert next(r for r in rows if r["section"] == "untagged")["billed_usd"] == pytest.approx(untagged, abs=0.05)
    # and the untagged line names what the log saw without an ml:project (both stopped notebooks)
    assert next(r for r in rows if r["section"] == "untagged")["to_tag"] == ["notebook/nb-tagged", "notebook/nb-untagged"]
    # and the claim still agrees with the bill's drop
    (notebook,) = [r for r in rows if r["section"] == "reconcile"]
    assert notebook["agrees"]


def test_the_bill_by_project_in_a_table_says_the_stage_is_not_read(stopped, capsys):
    _seed(_bill(stopped["at"].date(), stopped["hourly"], stopped["itype"]), activated=("ml:stage",))
    assert main(["report", "--bill", "--by", "project"]) == 0
    out = capsys.readouterr().out
    assert "PROJECT" in out and "(no project)" in out and "ml:stage is not read" in out
    assert "no billed line carries an ml:project value" in out


def test_the_bill_by_project_across_the_organisation_is_refused(capsys):
    assert main(["report", "--bill", "--org", "--by", "project"]) == 2
    assert "--by project is per account" in capsys.readouterr().err

"""`reaper report --discounts`: list-price savings beside what they come to after Savings Plans / RI coverage."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.aws import discounts
from reaper.cli.main import main
from reaper.record.actionlog import ActionLog
from reaper_devkit.moto_ext import cost_explorer_coverage as kit
from reaper_devkit.moto_ext import cost_optimization_hub as hub

ACCOUNT = "123456789012"  # moto's


@pytest.fixture
def logged(aws: Any, table: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Two stopped notebooks (SageMaker), a stopped GPU box (EC2) and a deleted file system (FSx)."""
    monkeypatch.setenv("REAPER_TABLE", table)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("REAPER_DISCOUNTS", raising=False)
    kit.reset()
    hub.reset()
    log, now = ActionLog(aws.client("dynamodb"), table), datetime.now(UTC)
    for rid, kind, owner, hourly in (
        ("nb-1", "notebook", "ana", 2.0),
        ("nb-2", "notebook", "bo", 1.0),
        ("gpu-1", "ec2", "ana", 4.0),
        ("fs-1", "fsx", "bo", 0.5),
    ):
        entry = {"kind": kind, "id": rid, "region": "us-east-1", "verdict": "act", "executed": True, "action": "stop"}
        entry |= {"reason": "idle", "hourly_usd": hourly, "owner": owner, "project": "llm"}
        log.record(entry, now - timedelta(hours=10), f"ev-{rid}")
    yield
    kit.reset()
    hub.reset()


def report_csv(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, dict[str, str]]:
    assert main(["report", "--output", "csv", "--by", "kind", *extra]) == 0
    return {r["kind"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}


def test_without_the_opt_in_the_report_reads_no_cost_explorer(logged, capsys):
    rows = report_csv(capsys)
    assert kit.calls == [] and "saved_after_commitments_usd" not in rows["notebook"]


def test_savings_after_commitments_stand_beside_the_list_price_savings(logged, capsys):
    # Given 70% of SageMaker spend and half of EC2 spend covered by Savings Plans, and a quarter of EC2 hours by RIs
    kit.set_coverage(ACCOUNT, {discounts.SAGEMAKER: (300.0, 1000.0), discounts.EC2: (400.0, 800.0)}, ec2_hours=(300.0, 400.0))
    # When the report is asked for with --discounts
    rows = report_csv(capsys, "--discounts")
    # Then each kind's saving after commitments is its list saving times the share paid at On-Demand rates
    share = {"notebook": 0.3, "ec2": 0.5 * 0.75, "fsx": 1.0}  # FSx: no commitment covers it
    for kind, row in rows.items():
        assert float(row["saved_after_commitments_usd"]) == pytest.approx(float(row["saved_usd"]) * share[kind], abs=0.02), kind
    assert float(rows["notebook"]["saved_usd"]) > 25  # 3 $/h for ~10 h: the list figure is still there
    # And the table says both totals and where the second comes from
    assert main(["report", "--by", "owner", "--discounts"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # wrapped lines read as one
    assert "AFTER COMMIT." in text and "total after commitments: about $" in text
    assert "Cost Explorer Savings Plans and Reserved Instance coverage" in text and "Amazon SageMaker: 30% at On-Demand rates" in text


def test_cost_optimization_hub_figure_wins_where_it_names_the_resource(logged, capsys):
    # Given coverage as above, and an enrolled Hub estimating after discounts that stopping gpu-1 saves $73 a month
    kit.set_coverage(ACCOUNT, {discounts.SAGEMAKER: (300.0, 1000.0), discounts.EC2: (400.0, 800.0)}, ec2_hours=(300.0, 400.0))
    hub.enroll(ACCOUNT, "AfterDiscounts")
    hub.recommend(ACCOUNT, "gpu-1", 73.0)
    hub.recommend(ACCOUNT, "i-elsewhere", 500.0)
    # When the report is asked for with --discounts
    rows = report_csv(capsys, "--discounts")
    # Then gpu-1's saving after discounts is the Hub's $0.10 an hour for its ~10 hours off, not the coverage estimate
    hours = float(rows["ec2"]["hours_off"])
    assert float(rows["ec2"]["saved_after_commitments_usd"]) == pytest.approx(0.1 * hours, abs=0.02)
    assert float(rows["notebook"]["saved_after_commitments_usd"]) == pytest.approx(0.3 * float(rows["notebook"]["saved_usd"]), abs=0.02)
    assert hub.calls.count("ListRecommendations") == 2  # paginated: one recommendation a page in the kit


@pytest.mark.parametrize("state", ["not enrolled", "before discounts", "not allowed"])
def test_the_hub_is_used_only_when_it_speaks_after_discounts(logged, capsys, state):
    kit.set_coverage(ACCOUNT, {discounts.EC2: (800.0, 800.0)})
    if state != "not enrolled":
        hub.enroll(ACCOUNT, "BeforeDiscounts" if state == "before discounts" else "AfterDiscounts")
    if state == "not allowed":
        hub.deny(ACCOUNT)
    hub.recommend(ACCOUNT, "gpu-1", 7300.0)
    rows = report_csv(capsys, "--discounts")
    assert float(rows["ec2"]["saved_after_commitments_usd"]) == pytest.approx(float(rows["ec2"]["saved_usd"]), abs=0.02)
    assert main(["report", "--by", "kind", "--discounts"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    said = {"not enrolled": "not enrolled, not read", "before discounts": "estimates savings BeforeDiscounts, not used"}
    assert f"Cost Optimization Hub: {said.get(state, 'not read (AccessDeniedException')}" in text
    assert "ListRecommendations" not in hub.calls


def test_one_read_a_day_however_often_the_report_runs(logged, capsys, monkeypatch):
    kit.set_coverage(ACCOUNT, {discounts.SAGEMAKER: (500.0, 1000.0)})
    report_csv(capsys, "--discounts")
    first = list(kit.calls)
    assert set(first) == {"GetSavingsPlansCoverage", "GetReservationCoverage"} and first.count("GetSavingsPlansCoverage") >= 2  # paginated
    monkeypatch.setenv("REAPER_DISCOUNTS", "on")  # the setting opts in as the flag does
    rows = report_csv(capsys)
    assert kit.calls == first and float(rows["notebook"]["saved_after_commitments_usd"]) > 0  # the day's read, from the cache


@pytest.mark.parametrize("refusal", ["no data yet", "not allowed"])
def test_a_refused_read_is_said_and_no_figure_is_made_up(logged, capsys, refusal):
    if refusal == "not allowed":
        kit.deny(ACCOUNT)
    assert main(["report", "--by", "kind", "--discounts"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    code = "AccessDeniedException" if refusal == "not allowed" else "DataUnavailableException"
    assert f"after commitments: not known ({code}" in text and "AFTER COMMIT." not in text
    assert "total: about $" in text  # the list-price report stands
    rows = report_csv(capsys, "--discounts")
    assert "saved_after_commitments_usd" not in rows["notebook"]


# -- the digest (DiscountAwareSavings=on) -------------------------------------------------------


class CapturedBot:
    """The bot's post seam: what the admin channel would have received."""

    def __init__(self) -> None:
        self.posted: list[Any] = []

    def post(self, payload: Any, message: Any) -> None:
        self.posted.append((payload, message))


def test_the_deployed_notifier_reads_commitments_only_when_the_stack_says_so(aws, table, monkeypatch):
    from tests.conftest import load_function

    monkeypatch.setenv("REAPER_TABLE", table)
    monkeypatch.delenv("REAPER_DISCOUNTS", raising=False)
    assert load_function("notifier").NOTIFIER.discounts is None  # DiscountAwareSavings defaults to off
    monkeypatch.setenv("REAPER_DISCOUNTS", "on")
    assert load_function("notifier").NOTIFIER.discounts is not None


def test_the_digest_says_this_weeks_saving_after_commitments_once_a_day(logged, aws, table):
    from reaper.slack.notifier import Notifier

    # Given 70% of SageMaker spend covered, and the notifier as DiscountAwareSavings=on wires it
    kit.set_coverage(ACCOUNT, {discounts.SAGEMAKER: (300.0, 1000.0)})
    bot = CapturedBot()
    notifier = Notifier(
        webhook=lambda: None,
        log=ActionLog(aws.client("dynamodb"), table),
        bot=lambda: bot,  # type: ignore[arg-type,return-value]
        discounts=lambda now: discounts.read(aws.client("ce", region_name="us-east-1"), None, now.date()),
    )
    # When the digest goes out, and the schedule fires again the same day
    assert notifier.post_daily_digest()["posted"] is True
    read = list(kit.calls)
    assert notifier.post_daily_digest()["posted"] is False
    # Then Cost Explorer was read by the posting invocation only, and the digest says both figures and the source
    assert kit.calls == read and "GetSavingsPlansCoverage" in read
    ((payload, message),) = bot.posted
    notebooks = 3.0 * 10  # $3/h for the ~10 hours since the stops
    assert payload.reclaimed_week_after_usd == pytest.approx(0.3 * notebooks + (payload.reclaimed_week_usd - notebooks), abs=0.2)
    body = json.dumps(message.blocks)
    assert "After commitments:" in body and "Cost Explorer Savings Plans and Reserved Instance coverage" in body
    assert not hub.calls  # the digest does not ask Cost Optimization Hub (the stack grants it no such read)

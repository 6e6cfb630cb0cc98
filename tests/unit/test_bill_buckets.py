"""The four buckets of ML spend from the bill's usage types and ml:stage, and the claim beside the drop
(reaper.report.reconcile; docs/bill.md)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from reaper.record.logentry import from_mapping
from reaper.report.bill import Bill, BillLine, _tag_value, period, request
from reaper.report.reconcile import OTHER, bucket, buckets, reconcile, to_tag

DAY = date(2026, 11, 20)


def line(usage: str, usd: float = 1.0, stage: str | None = "dev", day: date = DAY, quantity: float = 1.0) -> BillLine:
    return BillLine(day, usage, usd, quantity, False, stage)


@pytest.mark.parametrize(
    ("usage", "stage", "expected"),
    [
        ("USE1-Train:ml.p4d.24xlarge", "dev", "training"),
        ("USE1-Processing:ml.m5.xlarge", None, "training"),
        ("USE1-Host:ml.g5.xlarge", "prod", "inference"),
        ("USE1-Notebk:ml.t3.medium", "dev", "development"),
        ("USE1-Studio:JupyterLab-ml.g5.xlarge", None, "development"),
        ("USE1-Notebk:VolumeUsage.gp2", "dev", "storage and data"),
        ("EBS:VolumeUsage.gp3", None, "storage and data"),
        ("TimedStorage-ByteHrs", None, "storage and data"),
        ("DataTransfer-Out-Bytes", None, "storage and data"),
        ("USE1-Lustre-Storage-Persistent2-125", None, "storage and data"),
        ("BoxUsage:p3.2xlarge", "training", "training"),
        ("BoxUsage:inf2.xlarge", "inference", "inference"),
        ("BoxUsage:g6e.xlarge", None, "development"),  # a GPU box is a dev box unless its stage says otherwise
        ("BoxUsage:trn1.32xlarge", "sandbox", "development"),
        ("BoxUsage:t3.micro", "training", OTHER),  # not an accelerated family
        ("BoxUsage:m5.large", None, OTHER),
        ("USE1-Lambda-GB-Second", None, OTHER),
    ],
)
def test_each_usage_type_falls_in_one_bucket(usage, stage, expected):
    assert bucket(line(usage, stage=stage)) == expected


def test_the_buckets_and_the_other_line_add_up_to_the_bill_and_untagged_is_counted_in_each():
    lines = [line("USE1-Train:ml.p3.2xlarge", 10.25), line("BoxUsage:g5.xlarge", 4.5, None), line("EBS:VolumeUsage", 0.75, None)]
    lines.append(line("USE1-Lambda-GB-Second", 0.5))
    b = buckets(Bill(DAY, DAY + timedelta(days=1), False, lines))
    assert sum(b.usd.values()) == b.total == 16.0
    assert b.untagged == {"training": 0.0, "inference": 0.0, "development": 4.5, "storage and data": 0.75, OTHER: 0.0}


def test_a_tag_key_without_a_value_is_untagged():
    assert _tag_value("ml:stage$") is None and _tag_value("ml:stage$ dev ") == "dev" and _tag_value("") is None


def test_the_request_is_daily_by_usage_type_and_stage_or_by_account_across_the_organisation():
    one = request(DAY, DAY + timedelta(days=3), org=False)
    assert one["Granularity"] == "DAILY" and [g["Key"] for g in one["GroupBy"]] == ["USAGE_TYPE", "ml:stage"]
    assert [g["Key"] for g in request(DAY, DAY, org=True)["GroupBy"]] == ["LINKED_ACCOUNT", "USAGE_TYPE"]


def test_the_period_ends_before_today_and_holds_at_least_yesterday():
    now = datetime(2026, 12, 5, 0, 30, tzinfo=UTC)
    assert period(now - timedelta(days=30), now) == (date(2026, 11, 5), date(2026, 12, 5))
    assert period(now - timedelta(minutes=10), now) == (date(2026, 12, 4), date(2026, 12, 5))


def test_to_tag_names_logged_resources_without_a_stage_and_never_a_tally():
    entries = [
        {"kind": "notebook", "id": "a", "arn": "arn:a", "stage": None},
        {"kind": "notebook", "id": "b", "arn": "arn:b", "stage": "dev"},
        {"kind": "notebook", "id": "*", "arn": "", "stage": None},
        {"kind": "ec2", "id": "i-1", "arn": "arn:i-1", "stage": "  "},
    ]
    entries = [from_mapping({"logged_at": "2026-12-05T10:00:00Z", **e}) for e in entries]
    assert to_tag(entries) == ["ec2/i-1", "notebook/a"]


def test_a_stop_with_no_billed_day_before_it_is_named_not_reconciled():
    now = datetime(2026, 12, 5, 12, tzinfo=UTC)
    stop = {"logged_at": "2026-11-05T10:00:00Z", "kind": "notebook", "id": "nb", "region": "us-east-1", "arn": "arn:nb"}
    stop |= {"verdict": "act", "executed": True, "hourly_usd": 1.0}
    lines = [line("USE1-Notebk:ml.t3.medium", 0.0, day=date(2026, 11, 5) + timedelta(days=n)) for n in range(30)]
    (row,) = reconcile(Bill(date(2026, 11, 5), date(2026, 12, 5), False, lines), [from_mapping(stop)], now)
    assert not row.agrees and row.named() == ["no billed day before the first stop in the period: ask for a longer --since"]


def test_the_drop_is_read_from_the_instance_types_the_reaper_stopped():
    # Given a t3.medium notebook stopped on the 20th, and an m5 notebook of someone else that grew after it
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    stop = {"logged_at": "2026-11-20T12:00:00Z", "kind": "notebook", "id": "nb", "region": "us-east-1", "arn": "arn:nb"}
    stop |= {"verdict": "act", "executed": True, "hourly_usd": 0.05, "instance_type": "ml.t3.medium"}
    lines = []
    for n in range(30):
        day = date(2026, 11, 1) + timedelta(days=n)
        lines.append(line("USE1-Notebk:ml.t3.medium", 0.0 if day > DAY else 1.2, day=day, quantity=24.0))
        lines.append(line("USE1-Notebk:ml.m5.xlarge", 5.52 if day <= DAY else 11.04, day=day, quantity=24.0))
        lines.append(line("USE1-Notebk:VolumeUsage.gp2", 0.5, day=day))
    # When it is reconciled
    (row,) = reconcile(Bill(date(2026, 11, 1), date(2026, 12, 1), False, lines), [from_mapping(stop)], now)
    # Then only the t3.medium usage counts: ten whole days after, $1.20 a day each
    assert row.after_days == 10 and row.drop_usd == pytest.approx(12.0) and row.claimed_usd == pytest.approx(12.0)
    assert row.agrees

"""The coverage tally, the digest's line, GetMetricData batching with SEARCH expressions, and the test kit's SEARCH."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import boto3
import pytest
from moto import mock_aws

from reaper.aws.metrics import MAX_SEARCHES_PER_CALL, MetricQuery, _chunks, fetch
from reaper.core.coverage import REASONS, headline, opt_in_reach, tally
from reaper.core.model import Decision, Mode, Outcome, Resource, Verdict
from reaper.core.settings import ENV_VARS, Settings
from reaper.kinds import setting_of, settings_models
from reaper.kinds.ec2.model import gpu_search
from reaper.record.logentry import from_mapping
from reaper.slack import digest
from reaper_devkit import moto_ext, seed_ec2

NOW = datetime(2026, 12, 2, 14, 3, tzinfo=UTC)


def outcome(kind: str, verdict: Verdict, unknown: str | None = None, hourly: float | None = 1.0, region: str = "us-east-1") -> Outcome:
    r = Resource(kind, f"{kind}-{verdict}-{unknown}", f"arn:aws:x:{region}:1:{kind}/x", region, "running", hourly_usd=hourly)
    return Outcome(r, Decision(verdict, "why", unknown=unknown), Mode.DRY_RUN)


def test_every_reason_names_a_fix_and_every_opt_in_a_setting():
    assert all(r.label and r.fix for r in REASONS.values())
    assert all((r.opt_in is None) == (r.setting is None) for r in REASONS.values())


def test_every_opt_in_names_a_variable_that_one_settings_model_reads():
    # the shared Settings or one kind's own (kinds/<kind>/settings.py): where its state is read from
    models = [set(ENV_VARS), *(set(m.ENV_VARS) for m in settings_models().values())]
    for r in REASONS.values():
        assert r.setting is None or sum(r.setting in read for read in models) == 1, r.code


# one reason per opt-in: (the variable it sets, a reason it reaches, the stack parameter)
OPT_INS = sorted({r.opt_in: (r.setting, r.code, r.opt_in) for r in REASONS.values() if r.setting and r.opt_in}.values())


@pytest.mark.parametrize(("var", "code", "opt_in"), OPT_INS, ids=[t[2] for t in OPT_INS])
def test_an_opt_in_that_is_on_is_said_on_wherever_its_setting_lives(var, code, opt_in):
    from reaper.cli.coverage_command import format_coverage, rows

    # Given the opt-in on, as the stack sets it (GpuSsmReads and MlflowReads are read by their kind's own model)
    blind = [outcome("x", Verdict.KEEP, code, 2.5)]
    on, off = Settings.from_env({var: "on"}), Settings.from_env({})
    # Then `reaper coverage` says it is on, and offers no "turning it on would reach", in JSON and in text
    (line,) = rows(blind, on)
    assert line["reasons"][0]["opt_in_on"] is True
    assert f"[{opt_in} is on]" in format_coverage(blind, on) and f"{opt_in} is off" not in format_coverage(blind, on)
    # And off, it is said off, with what turning it on would reach
    assert [r["opt_in"] for r in rows(blind, off) if r["type"] == "opt-in"] == [opt_in]


def test_tally_splits_judged_unknown_exempt_and_error_and_prices_the_unknown_by_reason():
    lines = tally(
        [
            outcome("ec2", Verdict.ACT),
            outcome("ec2", Verdict.KEEP),
            outcome("ec2", Verdict.KEEP, "no-gpu-metric", 3.9),
            outcome("ec2", Verdict.KEEP, "no-gpu-metric", None),
            outcome("ec2", Verdict.KEEP, "metric-gap", 5.0),
            outcome("ec2", Verdict.EXEMPT),
            outcome("ec2", Verdict.ERROR),
            outcome("notebook", Verdict.KEEP, "no-agent", 0.05),
        ]
    )
    ec2, notebook = lines
    assert (ec2.resources, ec2.judged, ec2.unknown, ec2.exempt, ec2.errors) == (7, 2, 3, 1, 1)
    assert ec2.unknown_hourly_usd == pytest.approx(8.9)
    assert [(t.reason.code, t.resources, t.unpriced) for t in ec2.ranked()] == [("metric-gap", 1, 0), ("no-gpu-metric", 2, 1)]
    assert notebook.kind == "notebook" and notebook.unknown == 1


def test_opt_in_reach_counts_only_reasons_whose_opt_in_is_off():
    lines = tally([outcome("ec2", Verdict.KEEP, "no-gpu-metric", 2.0), outcome("ec2", Verdict.KEEP, "metric-gap", 9.0)])
    (reach,) = opt_in_reach(lines, partial(setting_of, Settings()))
    assert (reach.opt_in, reach.resources, reach.hourly_usd) == ("GpuSsmReads", 1, 2.0)


def test_the_digest_says_how_many_it_cannot_judge_what_they_cost_and_the_top_fix():
    # Given: two sweeps' coverage entries today for ec2; only the newest counts, and yesterday's not at all
    rows = [line.to_json() for line in tally([outcome("ec2", Verdict.KEEP, "no-gpu-metric", 3.912)] * 2)]
    old = [line.to_json() for line in tally([outcome("ec2", Verdict.KEEP, "no-gpu-metric", 3.912)] * 9)]
    at = NOW - timedelta(hours=1)
    entries: list[dict[str, Any]] = [
        {"type": "coverage", **old[0], "logged_at": (NOW - timedelta(days=1)).isoformat(), "event_id": "e0"},
        {"type": "coverage", **old[0], "logged_at": (at - timedelta(hours=2)).isoformat(), "event_id": "e1"},
        {"type": "coverage", **rows[0], "logged_at": at.isoformat(), "event_id": "e2"},
    ]
    # When
    payload = digest.build([from_mapping(e) for e in entries], NOW)
    text = str(digest.render(payload).blocks)
    # Then
    assert payload.coverage is not None and payload.coverage.unknown == 2 and payload.coverage.top_code == "no-gpu-metric"
    assert "*Can't judge:* 2 resources ($7.82/h): top reason GPU box without a GPU metric (2), fix: install the CloudWatch agent" in text


def test_the_digest_has_no_coverage_line_when_everything_was_judged():
    assert headline([line.to_json() for line in tally([outcome("ec2", Verdict.ACT)])]) is None
    assert "Can't judge" not in str(digest.render(digest.build([], NOW)).blocks)


def test_batches_hold_at_most_500_queries_and_100_search_expressions_in_order():
    stat = MetricQuery("k", "AWS/EC2", "CPUUtilization", (("InstanceId", "i"),))
    search = MetricQuery("g", "CWAgent", "gpu", (), expression=gpu_search("i-0abc", 300))
    queries = [stat, stat, stat, search] * 150  # 600 queries, 150 searches
    batches = [list(b) for b in _chunks(queries, 500)]
    assert [b for batch in batches for b in batch] == queries
    assert all(len(b) <= 500 and sum(q.searches for q in b) <= MAX_SEARCHES_PER_CALL for b in batches)
    assert len(batches) == 2  # 100 searches (400 queries), then the other 50 (200 queries)


@pytest.fixture
def cw() -> Any:
    moto_ext.apply()
    with mock_aws():
        yield boto3.client("cloudwatch", region_name="us-east-1")


def test_the_kit_answers_max_search_over_every_gpu_of_an_instance_and_nothing_of_another(cw):
    now = datetime.now(UTC)
    seed_ec2.metrics(cw, "i-aaa", now, gpu=None, per_gpu=[[0.0] * 6, [0.0] * 6, [0.0] * 6, [70.0] * 6])
    seed_ec2.metrics(cw, "i-bbb", now, gpu=None, per_gpu=[[99.0] * 6])
    queries = [
        MetricQuery("a", "CWAgent", "gpu", (), expression=gpu_search("i-aaa", 300)),
        MetricQuery("none", "CWAgent", "gpu", (), expression=gpu_search("i-ccc", 300)),
    ]
    got = fetch(cw, queries, now - timedelta(hours=1), now)
    assert [v for _, v in got["a"]] == [70.0] * 6 and got["none"] == []


def test_the_kit_answers_a_bare_search_with_one_series_per_gpu_under_the_query_id(cw):
    now = datetime.now(UTC)
    seed_ec2.metrics(cw, "i-aaa", now, gpu=None, per_gpu=[[1.0] * 3, [2.0] * 3])
    term = 'SEARCH(\'Namespace="CWAgent" MetricName="nvidia_smi_utilization_gpu" InstanceId="i-aaa"\', \'Maximum\', 300)'
    res = cw.get_metric_data(
        MetricDataQueries=[{"Id": "s", "Expression": term, "Period": 300}], StartTime=now - timedelta(hours=1), EndTime=now
    )["MetricDataResults"]
    assert [r["Id"] for r in res] == ["s", "s"] and sorted(r["Values"][0] for r in res) == [1.0, 2.0]


@pytest.mark.parametrize(
    "expression",
    [
        "SEARCH('{CWAgent,InstanceId} MetricName=\"x\"', 'Maximum', 300)",  # a schema: not in the kit's subset
        "SEARCH('nvidia', 'Maximum', 300)",  # a partial (token) match: not in the kit's subset
        "SEARCH('MetricName=\"" + "x" * 1100 + "\"', 'Maximum', 300)",  # over 1,024 characters
    ],
)
def test_the_kit_refuses_searches_it_cannot_answer_as_aws_would(cw, expression):
    now = datetime.now(UTC)
    with pytest.raises(cw.exceptions.ClientError):
        cw.get_metric_data(
            MetricDataQueries=[{"Id": "s", "Expression": expression, "Period": 300}], StartTime=now - timedelta(hours=1), EndTime=now
        )


def test_the_kit_refuses_more_than_100_search_expressions_in_one_request(cw):
    now = datetime.now(UTC)
    queries = [{"Id": f"s{i}", "Expression": gpu_search(f"i-{i}", 300), "Period": 300} for i in range(101)]
    with pytest.raises(cw.exceptions.ClientError):
        cw.get_metric_data(MetricDataQueries=queries, StartTime=now - timedelta(hours=1), EndTime=now)


def test_what_an_opt_in_would_reach_is_unpriced_when_nothing_it_reaches_has_a_price_never_zero_dollars():
    from reaper.cli.coverage_command import format_coverage, rows

    # Given one GPU box without a GPU metric and without a list price, and one with a price
    alone = [outcome("ec2", Verdict.KEEP, "no-gpu-metric", None)]
    both = [*alone, outcome("ec2", Verdict.KEEP, "no-gpu-metric", 2.5)]
    # When coverage says what turning GpuSsmReads on would reach
    text = format_coverage(alone, Settings())
    # Then the unpriced one is said unpriced, never $0.00, in the text and in JSON
    assert "GpuSsmReads is off: turning it on would reach up to 1 of them (unpriced)" in text and "$0.00/h)" not in text
    (reach,) = [r for r in rows(alone, Settings()) if r["type"] == "opt-in"]
    assert reach["hourly_usd"] is None and reach["unpriced"] == 1
    # And beside a priced one, the dollars are the priced one's and the unpriced one is counted apart
    assert "would reach up to 2 of them ($2.50/h, 1 without a price)" in format_coverage(both, Settings())

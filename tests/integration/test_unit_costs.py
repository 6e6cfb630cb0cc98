"""Unit costs (`reaper report --units --json`) exact on seeded training jobs, endpoints and Bedrock traffic,
through the CLI against moto: this week beside last week, spot savings, unpriced never $0."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.aws import pricing
from reaper.cli.main import main
from reaper.report import units
from reaper_devkit import seed, seed_bedrock, seed_endpoint, seed_training
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import sagemaker_jobs
from tests.conftest import load_function

REGION = "us-east-1"
GPU, HOST = "ml.p3.2xlarge", "ml.g4dn.xlarge"
MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


def usd(section: str, key: str) -> float:
    row = pricing.row(section, REGION, key)
    assert row is not None
    return float(row["usd"])


@pytest.fixture
def now() -> datetime:
    return datetime.now(UTC)


@pytest.fixture(autouse=True)
def fresh_billing() -> Any:
    sagemaker_jobs._billing.clear()
    yield
    sagemaker_jobs._billing.clear()


def units_json(capsys: pytest.CaptureFixture[str]) -> dict[tuple[str, str], dict[str, Any]]:
    assert main(["report", "--units", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return {(r["metric"], r["group"]): r for r in rows}


def job(
    sm: Any, name: str, now: datetime, project: str, *, days_ago: float, billable: int, trained: int, count: int = 1, spot: bool = False
) -> None:
    arn = seed_training.training_job(
        sm, name, now, hours_ago=24 * days_ago + 3, instance_type=GPU, count=count, spot=spot, tags={"ml:project": project}
    )
    sagemaker_jobs.bill(arn, now - timedelta(days=days_ago), trained, billable)


def test_cost_per_training_run_by_project_with_spot_savings_and_last_week(aws: Any, sm: Any, now: datetime, capsys: Any) -> None:
    # Given vision ran two jobs this week (one on spot: billed 2,160 of 7,200 s) and one last week
    job(sm, "vision-a", now, "vision", days_ago=1, billable=7200, trained=7200, count=2)
    job(sm, "vision-b", now, "vision", days_ago=2, billable=2160, trained=7200, spot=True)
    job(sm, "vision-old", now, "vision", days_ago=9, billable=3600, trained=3600)
    job(sm, "ancient", now, "vision", days_ago=20, billable=3600, trained=3600)  # outside both weeks
    # When the unit costs are read
    row = units_json(capsys)[("training-run", "vision")]
    # Then each run costs billable hours x instances x the list price, per run, beside last week's
    price = usd(pricing.TRAINING, GPU)
    this_week = (2 * 2.0 * price + 0.6 * price) / 2
    assert row["this_week"]["units"] == 2 and row["this_week"]["per_unit_usd"] == pytest.approx(this_week, abs=1e-4)
    assert row["this_week"]["spot_saved_usd"] == pytest.approx((7200 - 2160) / 3600 * price, abs=1e-4)
    assert row["last_week"]["units"] == 1 and row["last_week"]["per_unit_usd"] == pytest.approx(price, abs=1e-4)
    assert row["change_pct"] == pytest.approx(round(100 * (this_week - price) / price, 1))
    assert row["this_week"]["price_sources"] and row["this_week"]["unpriced_units"] == 0


def test_a_job_without_a_price_is_unpriced_never_zero(aws: Any, sm: Any, now: datetime, capsys: Any) -> None:
    arn = seed_training.training_job(sm, "odd", now, hours_ago=5, instance_type="ml.g7e.2xlarge", tags={"ml:project": "x"})
    sagemaker_jobs.bill(arn, now - timedelta(hours=1), 3600, 3600)
    row = units_json(capsys)[("training-run", "x")]
    assert row["this_week"]["per_unit_usd"] is None and row["this_week"]["unpriced_units"] == 1 and row["this_week"]["cost_usd"] == 0


def test_cost_per_thousand_inferences_per_endpoint(aws: Any, sm: Any, cw: Any, now: datetime, capsys: Any) -> None:
    # Given an endpoint in service for ten days, 1,200 invocations this week and 300 last week
    seed_endpoint.classic(sm, "ep-a", instance_type=HOST, count=1)
    seed_endpoint.age("ep-a", now, minutes=10 * 24 * 60)
    dims = {"EndpointName": "ep-a", "VariantName": "AllTraffic"}
    seed.put_series(cw, "AWS/SageMaker", "Invocations", dims, [(now - timedelta(days=1), 700.0), (now - timedelta(days=3), 500.0)])
    seed.put_series(cw, "AWS/SageMaker", "Invocations", dims, [(now - timedelta(days=8), 300.0)])
    # When the unit costs are read
    row = units_json(capsys)[("1k-inferences", "ep-a")]
    # Then its priced hours in each week (last week: from its creation) over the week's thousands of invocations
    week_cost = usd(pricing.HOSTING, HOST) * 24 * 7
    hours_last_week = (units.Weeks.ending(now).middle - (now - timedelta(days=10))).total_seconds() / 3600
    assert row["this_week"]["units"] == pytest.approx(1.2) and row["last_week"]["units"] == pytest.approx(0.3)
    assert row["this_week"]["per_unit_usd"] == pytest.approx(week_cost / 1.2, abs=1e-3)
    assert row["last_week"]["per_unit_usd"] == pytest.approx(usd(pricing.HOSTING, HOST) * hours_last_week / 0.3, abs=1e-3)


def test_cost_per_thousand_tokens_per_bedrock_model(aws: Any, cw: Any, now: datetime, capsys: Any) -> None:
    # Given on-demand token metrics for a model this week and last
    for metric, this_week, last_week in (("InputTokenCount", 40_000.0, 10_000.0), ("OutputTokenCount", 8_000.0, 2_000.0)):
        points = [(now - timedelta(days=2), this_week), (now - timedelta(days=10), last_week)]
        seed.put_series(cw, "AWS/Bedrock", metric, {"ModelId": MODEL}, points)
    # When read without a token price (the shipped table has none yet): tokens counted, cost unpriced, never $0
    row = units_json(capsys)[("1k-tokens", MODEL)]
    assert row["this_week"]["unpriced_units"] == pytest.approx(48.0) and row["last_week"]["unpriced_units"] == pytest.approx(12.0)
    assert row["this_week"]["per_unit_usd"] is None and row["this_week"]["cost_usd"] == 0
    # And with the model's price per 1,000 tokens in the price book, exact
    book = {f"{MODEL}/input": (0.00025, "AWS price list AmazonBedrock"), f"{MODEL}/output": (0.00125, "AWS price list AmazonBedrock")}

    def prices(section: str, region: str, key: str | None) -> tuple[float, str] | None:
        return book.get(key or "") if section == units.BEDROCK_TOKENS else units.list_price(section, region, key)

    [priced] = units.tokens(cw, REGION, units.Weeks.ending(now), prices)
    assert priced.this_week.per_unit == pytest.approx((40 * 0.00025 + 8 * 0.00125) / 48)
    assert priced.last_week.per_unit == pytest.approx((10 * 0.00025 + 2 * 0.00125) / 12)


def test_the_digest_line_names_the_costliest(aws: Any, sm: Any, now: datetime) -> None:
    job(sm, "vision-a", now, "vision", days_ago=1, billable=3600, trained=3600)
    found = units.read(sm, aws.client("cloudwatch"), REGION, now)
    line = units.digest_line(found)
    assert line is not None and line.startswith("vision $") and "per training run" in line


def test_a_provisioned_throughput_costs_its_model_unit_hours_over_its_tokens(aws: Any, cw: Any, now: datetime, capsys: Any) -> None:
    # Given a Provisioned Throughput of 2 model units in service for 3 days, 50,000 tokens this week
    arn = seed_bedrock.provisioned(aws.client("bedrock"), "pt-a", now - timedelta(days=3), units=2)
    for metric, count in (("InputTokenCount", 40_000.0), ("OutputTokenCount", 10_000.0)):
        seed.put_series(cw, "AWS/Bedrock", metric, {"ModelId": arn}, [(now - timedelta(days=1), count)])
    # When read: its hours and tokens are counted, and with no price per model-unit hour it is unpriced, never $0
    row = units_json(capsys)[("1k-tokens", "pt-a")]
    hours = 2 * (units.Weeks.ending(now).end - (now - timedelta(days=3))).total_seconds() / 3600
    assert row["this_week"]["model_unit_hours"] == pytest.approx(hours, abs=1e-3)
    assert row["this_week"]["unpriced_units"] == pytest.approx(50.0) and row["this_week"]["per_unit_usd"] is None
    assert ("1k-tokens", arn) not in units_json(capsys)  # not an on-demand model as well
    # And with a price per model-unit hour, its hours' cost over its thousands of tokens

    def prices(section: str, region: str, key: str | None) -> tuple[float, str] | None:
        return (21.18, "AWS price list AmazonBedrock") if section == units.BEDROCK_PROVISIONED else None

    [priced] = units.provisioned(aws.client("bedrock"), cw, REGION, units.Weeks.ending(now), prices)
    assert priced.this_week.per_unit == pytest.approx(hours * 21.18 / 50.0)


def test_the_reads_stay_at_the_call_floor_and_the_notifier_may_make_them(
    aws: Any, sm: Any, cw: Any, now: datetime, monkeypatch: Any
) -> None:
    # Given 120 ended training jobs, 3 endpoints in service and 2 Bedrock models with traffic
    for n in range(120):
        job(sm, f"run-{n}", now, f"p{n % 4}", days_ago=1 + (n % 10), billable=600, trained=600)
    for n in range(3):
        seed_endpoint.classic(sm, f"ep-{n}", instance_type=HOST)
    for model in (MODEL, "amazon.titan-text-express-v1"):
        seed.put_series(cw, "AWS/Bedrock", "InputTokenCount", {"ModelId": model}, [(now - timedelta(days=1), 1000.0)])
    monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", "")
    app = load_function("notifier")
    # When the digest's line is read by the deployed notifier
    assert app.NOTIFIER.units is not None
    with recording() as calls:
        line = app.NOTIFIER.units(now)
    # Then one Search page per 100 jobs, one for the endpoints, one config read each, one GetMetricData per kind of metric,
    # and one price request per instance type (2) and for Bedrock (1: the kit lists no AmazonBedrock catalogue, so
    # the service is refused once and not asked for the second model)
    assert line is not None
    assert calls.by_operation() == {
        "bedrock:ListProvisionedModelThroughputs": 1,
        "cloudwatch:GetMetricData": 2,
        "cloudwatch:ListMetrics": 1,
        "pricing:GetProducts": 3,
        "sagemaker:DescribeEndpointConfig": 3,
        "sagemaker:Search": 3,
    }
    assert calls.ungranted("NotifierFunction") == []


def test_the_cli_prices_runs_through_the_runtimes_pricer_asking_the_price_list_once_per_type(
    aws: Any, sm: Any, now: datetime, capsys: Any
) -> None:
    # Given two jobs of one instance type this week, and the kit's Price List API (its catalogue holds AWS's
    # Studio entries only, so it lists no training price for the type)
    from reaper_devkit.moto_ext import pricing as price_api

    price_api.requests.clear()
    job(sm, "nlp-a", now, "nlp", days_ago=1, billable=3600, trained=3600)
    job(sm, "nlp-b", now, "nlp", days_ago=2, billable=3600, trained=3600)
    # When the unit costs are read through the CLI
    row = units_json(capsys)[("training-run", "nlp")]
    # Then the API was asked once for the type, and the figure says it is the shipped copy's, not the API's
    assert [r["ServiceCode"] for r in price_api.requests] == ["AmazonSageMaker"]
    assert row["this_week"]["per_unit_usd"] == pytest.approx(usd(pricing.TRAINING, GPU), abs=1e-4)
    assert all("shipped copy" in s for s in row["this_week"]["price_sources"]), row


def bedrock_entry(model: str, inference_type: str, unit: str, usd: str, feature: str = "On-demand Inference") -> dict[str, Any]:
    """One GetProducts entry of AmazonBedrock's documented shape (docs/aws-assumptions.md, "Bedrock prices"):
    `model`, `feature`, `inferenceType`, `regionCode`, `usagetype` attributes; the on-demand term's unit and USD."""
    sku = f"SKU{abs(hash((model, inference_type, unit, feature))) % 10**10:010d}"
    return {
        "serviceCode": "AmazonBedrock",
        "product": {
            "productFamily": "Amazon Bedrock",
            "sku": sku,
            "attributes": {
                "servicecode": "AmazonBedrock",
                "regionCode": REGION,
                "location": "US East (N. Virginia)",
                "model": model,
                "feature": feature,
                "inferenceType": inference_type,
                "usagetype": f"USE1-{model}-{inference_type.lower().replace(' ', '-')}",
            },
        },
        "terms": {
            "OnDemand": {
                f"{sku}.JRTCKXETXF": {
                    "effectiveDate": "2026-12-01T00:00:00Z",
                    "priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {"unit": unit, "pricePerUnit": {"USD": usd}}},
                }
            }
        },
        "publicationDate": "2026-12-01T00:00:00Z",
    }


@pytest.fixture
def bedrock_prices() -> Any:
    from reaper_devkit.moto_ext import pricing as price_api

    price_api.reset()
    yield price_api
    price_api.reset()


def test_bedrock_tokens_are_priced_from_the_price_list_through_the_cli_exactly(
    aws: Any, cw: Any, now: datetime, capsys: Any, bedrock_prices: Any
) -> None:
    # Given token traffic for a model, and AWS's Price List listing its on-demand input price per 1K tokens and its
    # output price per 1M tokens, beside a batch price and another model's (neither may be taken)
    for metric, this_week, last_week in (("InputTokenCount", 40_000.0, 10_000.0), ("OutputTokenCount", 8_000.0, 2_000.0)):
        seed.put_series(
            cw, "AWS/Bedrock", metric, {"ModelId": MODEL}, [(now - timedelta(days=2), this_week), (now - timedelta(days=10), last_week)]
        )
    listed = [
        bedrock_entry(MODEL, "Input tokens", "1K tokens", "0.0002500000"),
        bedrock_entry(MODEL, "Output tokens", "1M tokens", "1.2500000000"),
        bedrock_entry(MODEL, "Input tokens", "1K tokens", "0.0001250000", feature="Batch Inference"),
        bedrock_entry("Claude 3 Haiku", "Input tokens", "1K tokens", "0.0009000000"),
    ]
    bedrock_prices.install("AmazonBedrock", listed)
    input_k, output_k = 0.00025, 1.25 / 1000  # the listed figures, per 1,000 tokens
    # When the unit costs are read through the CLI
    row = units_json(capsys)[("1k-tokens", MODEL)]
    # Then the cost per 1,000 tokens is exact, from the API (never the batch price), and says so
    assert row["this_week"]["per_unit_usd"] == pytest.approx(round((40 * input_k + 8 * output_k) / 48, 4))
    assert row["this_week"]["cost_usd"] == pytest.approx(round(40 * input_k + 8 * output_k, 4))
    assert row["last_week"]["cost_usd"] == pytest.approx(round(10 * input_k + 2 * output_k, 4))
    assert row["this_week"]["unpriced_units"] == 0
    assert row["this_week"]["price_sources"] == ["AWS Price List API 2026-12-01"]
    asked = [r for r in bedrock_prices.requests if r["ServiceCode"] == "AmazonBedrock"]
    assert len(asked) == 1 and {"Type": "TERM_MATCH", "Field": "model", "Value": MODEL} in asked[0]["Filters"]


def test_a_model_the_price_list_names_otherwise_stays_unpriced_never_guessed(
    aws: Any, cw: Any, now: datetime, capsys: Any, bedrock_prices: Any
) -> None:
    # Given the Price List names the model by its display name only
    seed.put_series(cw, "AWS/Bedrock", "InputTokenCount", {"ModelId": MODEL}, [(now - timedelta(days=1), 5_000.0)])
    bedrock_prices.install("AmazonBedrock", [bedrock_entry("Claude 3 Haiku", "Input tokens", "1K tokens", "0.0002500000")])
    # When read through the CLI: counted, unpriced, never $0
    row = units_json(capsys)[("1k-tokens", MODEL)]
    assert row["this_week"]["unpriced_units"] == pytest.approx(5.0) and row["this_week"]["per_unit_usd"] is None


def test_a_provisioned_throughput_is_priced_only_by_the_admins_override_and_says_so(
    aws: Any, cw: Any, now: datetime, capsys: Any, monkeypatch: Any
) -> None:
    # Given a Provisioned Throughput with tokens, and the admin's price per model-unit hour
    arn = seed_bedrock.provisioned(aws.client("bedrock"), "pt-b", now - timedelta(days=2), units=1)
    seed.put_series(cw, "AWS/Bedrock", "InputTokenCount", {"ModelId": arn}, [(now - timedelta(days=1), 20_000.0)])
    monkeypatch.setenv("REAPER_BEDROCK_MODEL_UNIT_HOURLY_USD", "21.18")
    # When read through the CLI
    row = units_json(capsys)[("1k-tokens", "pt-b")]
    # Then its hours cost the admin's price, and the figure names it as the admin's
    hours = row["this_week"]["model_unit_hours"]
    assert row["this_week"]["per_unit_usd"] == pytest.approx(hours * 21.18 / 20.0, abs=1e-3)  # hours read back rounded to 4 places
    assert row["this_week"]["price_sources"] == ["admin override (BedrockModelUnitHourlyUsd)"]


def test_the_digest_prices_bedrock_tokens_from_the_price_list_like_the_cli(
    aws: Any, cw: Any, now: datetime, monkeypatch: Any, bedrock_prices: Any
) -> None:
    # Given a model's token traffic this week and its on-demand prices in AWS's Price List
    seed.put_series(cw, "AWS/Bedrock", "InputTokenCount", {"ModelId": MODEL}, [(now - timedelta(days=1), 100_000.0)])
    seed.put_series(cw, "AWS/Bedrock", "OutputTokenCount", {"ModelId": MODEL}, [(now - timedelta(days=1), 20_000.0)])
    bedrock_prices.install(
        "AmazonBedrock",
        [
            bedrock_entry(MODEL, "Input tokens", "1K tokens", "0.0002500000"),
            bedrock_entry(MODEL, "Output tokens", "1K tokens", "0.0012500000"),
        ],
    )
    monkeypatch.setenv("REAPER_SLACK_SECRET_ARN", "")
    app = load_function("notifier")
    # When the deployed notifier reads the digest's unit-cost line
    with recording() as calls:
        line = app.NOTIFIER.units(now)
    # Then the model's cost per 1,000 tokens is AWS's, exact, not unpriced, and every call is granted
    per_k = (100 * 0.00025 + 20 * 0.00125) / 120
    assert line is not None and f"{MODEL} {units.money(per_k)} per 1,000 tokens" in line, line
    assert calls.ungranted("NotifierFunction") == []

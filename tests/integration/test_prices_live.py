"""Prices from the AWS Price List API through the real CLI (docs/prices.md): every figure says its source,
the action-log table keeps what was read, a throttled or refused API falls back to the shipped copy and says so.

The API is the kit's emulation (reaper_devkit.moto_ext.pricing). Its entries here are built in the test in the
documented PriceList shape from the shipped copy's own rows (AWS's published figures, with their date), so the
value under test is where a figure travels, not the figure: the shipped copy's figure and the API's are the same
number, and only `price_source` tells them apart.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.aws import pricing
from reaper.cli.main import main
from reaper.core.price import LIVE, SHIPPED
from reaper_devkit import seed, seed_ec2
from reaper_devkit.moto_ext import pricing as price_api

PUBLISHED = "2026-11-20T00:00:00Z"
USAGE = {pricing.NOTEBOOK: "Notebk", pricing.HOSTING: "Host", pricing.TRAINING: "Train"}


@pytest.fixture(autouse=True)
def _fresh_api() -> Any:
    price_api.reset()
    yield
    price_api.reset()


def sagemaker_entry(region: str, section: str, itype: str) -> dict[str, Any]:
    """One PriceList entry of the documented shape, priced with the shipped copy's row (AWS's figure)."""
    usd = pricing.row(section, region, itype)["usd"]  # type: ignore[index]
    sku = f"T{abs(hash((region, section, itype))) % 10**8:08d}"
    attrs = {"regionCode": region, "instanceName": itype, "usagetype": f"USE1-{USAGE[section]}:{itype}", "servicecode": "AmazonSageMaker"}
    return _entry("AmazonSageMaker", "ML Instance", sku, attrs, usd)


def ec2_entry(region: str, itype: str) -> dict[str, Any]:
    usd = pricing.row(pricing.EC2, region, itype)["usd"]  # type: ignore[index]
    attrs = {
        "regionCode": region,
        "instanceType": itype,
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "usagetype": f"USE1-BoxUsage:{itype}",
        "operation": "RunInstances",
        "licenseModel": "No License required",
    }
    return _entry("AmazonEC2", "Compute Instance", f"E{abs(hash((region, itype))) % 10**8:08d}", attrs, usd)


def _entry(service: str, family: str, sku: str, attrs: dict[str, str], usd: float) -> dict[str, Any]:
    term = f"{sku}.JRTCKXETXF"
    return {
        "product": {"productFamily": family, "sku": sku, "attributes": attrs},
        "serviceCode": service,
        "terms": {"OnDemand": {term: {"priceDimensions": {f"{term}.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": f"{usd:.10f}"}}}}}},
        "version": "20261120000000",
        "publicationDate": PUBLISHED,
    }


def rows(out: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(line) for line in out.splitlines() if line.strip())}


NOTEBOOK_TYPES = ("ml.t3.medium", "ml.p3.2xlarge", "ml.m5.xlarge")


def fleet(sm: Any) -> dict[str, str]:
    names = {}
    for i, itype in enumerate(NOTEBOOK_TYPES * 2):  # two of each type: one request per type, not per notebook
        name = f"nb-{i}"
        seed.notebook(sm, name, {"ml:owner": "ana@example.com"}, instance_type=itype)
        names[name] = itype
    return names


def sweep(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict[str, Any]]:
    assert main(["sweep", "--kind", "notebook", "--json", *args]) == 0
    return rows(capsys.readouterr().out)


def test_the_api_prices_each_type_with_one_request_and_the_table_keeps_it_for_the_next_sweep(sm, table, monkeypatch, capsys):
    # Given notebooks of three types and the API pricing them
    monkeypatch.setenv("REAPER_TABLE", table)
    price_api.install("AmazonSageMaker", [sagemaker_entry("us-east-1", pricing.NOTEBOOK, t) for t in NOTEBOOK_TYPES])
    names = fleet(sm)
    # When the first sweep runs
    first = sweep(capsys)
    # Then each figure is the API's, with its source and the price list's date; one request per distinct type
    for name, itype in names.items():
        row = first[name]
        assert row["hourly_usd"] == pricing.row(pricing.NOTEBOOK, "us-east-1", itype)["usd"], name
        assert (row["price_source"], row["price_as_of"]) == (LIVE, PUBLISHED[:10]), name
    assert len(price_api.requests) == len(NOTEBOOK_TYPES)
    assert all(r["ServiceCode"] == "AmazonSageMaker" and r["MaxResults"] == 100 for r in price_api.requests)
    asked = {tuple(sorted((f["Field"], f["Value"], f["Type"]) for f in r["Filters"])) for r in price_api.requests}
    assert asked == {(("instanceName", t, "TERM_MATCH"), ("regionCode", "us-east-1", "TERM_MATCH")) for t in NOTEBOOK_TYPES}
    # When another process sweeps again (a new CLI run: nothing in memory), the table answers: no request at all
    price_api.requests.clear()
    second = sweep(capsys)
    assert price_api.requests == []
    assert {n: (r["hourly_usd"], r["price_source"]) for n, r in second.items()} == {
        n: (r["hourly_usd"], r["price_source"]) for n, r in first.items()
    }


def test_a_throttled_api_falls_back_to_the_shipped_copy_and_says_so(sm, monkeypatch, capsys):
    # Given the API throttles every request, and a type the shipped copy has no row for
    price_api.install("AmazonSageMaker", [sagemaker_entry("us-east-1", pricing.NOTEBOOK, t) for t in NOTEBOOK_TYPES])
    price_api.fail_next("ThrottlingException", times=50)
    names = fleet(sm)
    seed.notebook(sm, "nb-odd", {"ml:owner": "ana@example.com"}, instance_type="ml.m4.16xlarge")
    assert pricing.row(pricing.NOTEBOOK, "us-east-1", "ml.m4.16xlarge") is None
    # When the sweep runs
    out = sweep(capsys)
    # Then the shipped copy's figures, saying so, and unpriced (null, never 0) where it has none
    for name, itype in names.items():
        row = out[name]
        assert row["hourly_usd"] == pricing.row(pricing.NOTEBOOK, "us-east-1", itype)["usd"], name
        assert row["price_source"] == SHIPPED and row["price_as_of"], name
    assert (out["nb-odd"]["hourly_usd"], out["nb-odd"]["price_source"]) == (None, None)
    # and the API was given up after its first failure (one request and its one retry), not asked per type
    assert len(price_api.requests) <= 2


@pytest.mark.parametrize("code", ["AccessDeniedException", "InternalErrorException"])
def test_a_refused_api_falls_back_too_and_the_plan_marks_the_figures(sm, monkeypatch, capsys, code):
    price_api.fail_next(code, times=50)
    seed.notebook(sm, "nb-a", {"ml:owner": "ana@example.com"}, instance_type="ml.p3.2xlarge")
    seed.notebook(sm, "nb-b", {"ml:owner": "ana@example.com"}, instance_type="ml.m4.16xlarge")
    assert main(["plan", "--kind", "notebook"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # the table wraps its footer
    usd = pricing.row(pricing.NOTEBOOK, "us-east-1", "ml.p3.2xlarge")["usd"]
    assert f"{usd:.2f}*" in text
    assert "1 marked * from the shipped copy of AWS's price list (dated" in text
    assert "1 unpriced (?)" in text and "$0.00/h" not in text


def test_a_type_the_api_does_not_price_is_kept_as_such_and_not_asked_again(sm, table, monkeypatch, capsys):
    # Given the API lists no price for two types: one the shipped copy has, one it has not
    monkeypatch.setenv("REAPER_TABLE", table)
    price_api.install("AmazonSageMaker", [sagemaker_entry("us-east-1", pricing.NOTEBOOK, "ml.t3.medium")])
    seed.notebook(sm, "nb-a", {"ml:owner": "ana@example.com"}, instance_type="ml.p3.2xlarge")
    seed.notebook(sm, "nb-odd", {"ml:owner": "ana@example.com"}, instance_type="ml.m4.16xlarge")
    # When two sweeps run
    first = sweep(capsys)
    assert len(price_api.requests) == 2
    price_api.requests.clear()
    second = sweep(capsys)
    # Then the shipped copy's figure, saying so, or unpriced (null, never 0); and the answer was kept: no request
    usd = pricing.row(pricing.NOTEBOOK, "us-east-1", "ml.p3.2xlarge")["usd"]
    for out in (first, second):
        assert (out["nb-a"]["hourly_usd"], out["nb-a"]["price_source"]) == (usd, SHIPPED)
        assert (out["nb-odd"]["hourly_usd"], out["nb-odd"]["price_source"]) == (None, None)
    assert price_api.requests == []


def test_live_prices_off_asks_nothing(sm, monkeypatch, capsys):
    monkeypatch.setenv("REAPER_LIVE_PRICES", "off")
    price_api.install("AmazonSageMaker", [sagemaker_entry("us-east-1", pricing.NOTEBOOK, "ml.p3.2xlarge")])
    seed.notebook(sm, "nb-a", {"ml:owner": "ana@example.com"}, instance_type="ml.p3.2xlarge")
    out = sweep(capsys)
    assert out["nb-a"]["price_source"] == SHIPPED and price_api.requests == []


def test_ec2_boxes_are_priced_by_their_box_usage_with_the_documented_filters(aws, cw, capsys):
    from reaper.kinds.ec2 import catalog

    catalog.forget()
    price_api.install("AmazonEC2", [ec2_entry("us-east-1", "g5.xlarge")])
    ec2 = aws.client("ec2")
    iid = seed_ec2.instance(ec2, "g5.xlarge", {"ml:owner": "ana@example.com"}, now=datetime.now(UTC))
    assert main(["sweep", "--kind", "ec2", "--json"]) == 0
    row = rows(capsys.readouterr().out)[iid]
    assert (row["hourly_usd"], row["price_source"]) == (pricing.row(pricing.EC2, "us-east-1", "g5.xlarge")["usd"], LIVE)
    (request,) = price_api.requests
    fields = {f["Field"]: f["Value"] for f in request["Filters"]}
    assert fields == {
        "regionCode": "us-east-1",
        "instanceType": "g5.xlarge",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
    }


# -- with the kit's catalogue: AWS's own entries (devkit/reaper_devkit/price_catalogue, PRICE_SOURCE.md) --

REGIONS = ("us-east-1", "eu-west-1", "eu-central-1", "ap-northeast-1", "ap-south-1")
# what a team runs in Studio, most common first; in each region the types SageMaker offers there
STUDIO_SPREAD = (
    ["ml.t3.medium"] * 4
    + ["ml.m5.large", "ml.m5.xlarge", "ml.c5.xlarge", "ml.m5.2xlarge", "ml.r5.large"]
    + ["ml.g4dn.xlarge"] * 3
    + ["ml.g5.xlarge"] * 3
    + ["ml.g5.2xlarge", "ml.g5.12xlarge", "ml.p3.2xlarge", "ml.g4dn.2xlarge", "ml.p4d.24xlarge"]
)


def catalogue_figures() -> dict[tuple[str, str], tuple[float, str, str]]:
    """(region, type) -> (USD, SKU, publication date) of the Studio entries the kit's catalogue holds."""
    out = {}
    for e in price_api.entries("AmazonSageMaker") or []:
        attrs = e["product"]["attributes"]
        if attrs.get("component") != "Studio-Notebook":
            continue
        ((term,),) = [list(e["terms"]["OnDemand"].values())]
        ((dim,),) = [list(term["priceDimensions"].values())]
        out[(attrs["regionCode"], attrs["instanceName"])] = (
            float(dim["pricePerUnit"]["USD"]),
            e["product"]["sku"],
            e["publicationDate"][:10],
        )
    return out


def test_studio_apps_in_five_regions_are_priced_with_exactly_the_catalogues_figures(aws, capsys):
    from reaper_devkit import seed_studio

    figures = catalogue_figures()
    expected: dict[str, tuple[float, str, str]] = {}
    for region in REGIONS:
        sm = aws.client("sagemaker", region_name=region)
        domain = seed_studio.domain(sm, f"team-{region}")
        offered = [t for t in STUDIO_SPREAD if (region, t) in figures]
        assert len(offered) >= 0.8 * len(STUDIO_SPREAD), region  # the spread is what teams run there
        for i, itype in enumerate(offered):
            seed_studio.space(sm, domain, f"space-{i}")
            arn = seed_studio.app(sm, domain, space_name=f"space-{i}", instance_type=itype, tags={"ml:owner": "ana@example.com"})
            expected[arn] = figures[(region, itype)]
    price_api.requests.clear()
    assert main(["sweep", "--kind", "studio-app", *[a for r in REGIONS for a in ("--region", r)], "--json"]) == 0
    out = {r["arn"]: r for r in rows(capsys.readouterr().out).values() if r["arn"] in expected}
    assert set(out) == set(expected)
    for arn, (usd, _sku, published) in expected.items():
        assert (out[arn]["hourly_usd"], out[arn]["price_source"], out[arn]["price_as_of"]) == (usd, LIVE, published), arn
    distinct = {(r["region"], r["instance_type"]) for r in out.values()}
    assert len(price_api.requests) <= len(distinct)  # at most one request per distinct type in each region


def test_coverage_says_where_its_dollars_come_from_and_what_it_leaves_out(sm, capsys):
    # Given the API refuses, and two notebooks nothing reports on: one the shipped copy prices, one it cannot
    price_api.fail_next("ThrottlingException", times=50)
    seed.notebook(sm, "nb-a", {"ml:owner": "ana@example.com"}, instance_type="ml.p3.2xlarge", agent=False)
    seed.notebook(sm, "nb-odd", {"ml:owner": "ana@example.com"}, instance_type="ml.m4.16xlarge", agent=False)
    assert main(["coverage", "--kind", "notebook", "--json"]) == 0
    (line,) = [r for r in map(json.loads, capsys.readouterr().out.splitlines()) if r["type"] == "coverage"]
    usd = pricing.row(pricing.NOTEBOOK, "us-east-1", "ml.p3.2xlarge")["usd"]
    assert line["unknown"] == 2 and line["unknown_hourly_usd"] == usd and line["unknown_unpriced"] == 1
    assert len(line["price_sources"]) == 1 and line["price_sources"][0].startswith(SHIPPED + " (dated ")
    assert main(["coverage", "--kind", "notebook"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"at list price, {line['price_sources'][0]}; 1 of them unpriced, not in that figure)" in text


def test_the_report_says_where_its_savings_prices_come_from(sm, cw, table, monkeypatch, capsys):
    # Given an idle notebook stopped in enforce, priced by the API, and one the shipped copy priced (API refused)
    monkeypatch.setenv("REAPER_TABLE", table)
    price_api.install("AmazonSageMaker", [sagemaker_entry("us-east-1", pricing.NOTEBOOK, "ml.t3.medium")])
    now = datetime.now(UTC)
    seed.notebook(sm, "idle-live", {"ml:owner": "ana@example.com", "ml:stage": "dev"}, instance_type="ml.t3.medium")
    seed.activity(cw, "idle-live", now, [0] * 20)
    assert main(["sweep", "--kind", "notebook", "--mode", "enforce", "--grace-minutes", "0", "--json"]) == 0
    assert rows(capsys.readouterr().out)["idle-live"]["executed"] is True
    # When the report is read
    assert main(["report", "--since", "1d"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    # Then the saving says its price's source and date
    assert f"prices: 1 at {LIVE} {PUBLISHED[:10]}" in text


def test_the_deployed_function_queues_the_price_and_its_source_and_slack_says_it(aws, sm, cw, deployed_env, lambda_context):
    # Given the notebook function as deployed (dry-run, the table, the queue) and the API pricing ml.t3.medium
    from reaper.record.message import VerdictMessage
    from reaper.slack.message import render_message
    from reaper_devkit.calls import recording
    from tests.conftest import drain, event, load_function

    price_api.install("AmazonSageMaker", [sagemaker_entry("us-east-1", pricing.NOTEBOOK, "ml.t3.medium")])
    seed.notebook(sm, "idle", {"ml:owner": "ana@example.com", "ml:stage": "dev"}, instance_type="ml.t3.medium")
    seed.activity(cw, "idle", datetime.now(UTC), [0] * 20)
    # When the schedule fires
    with recording() as calls:
        load_function("notebook").handler(event("notebook-schedule.json"), lambda_context)
    # Then the queued message carries the figure, its source and date, and Slack's cost line says them
    (body,) = [m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("id") == "idle"]
    usd = pricing.row(pricing.NOTEBOOK, "us-east-1", "ml.t3.medium")["usd"]
    assert (body["hourly_usd"], body["price_source"], body["price_as_of"]) == (usd, LIVE, PUBLISHED[:10])
    rendered = json.dumps(render_message(VerdictMessage.model_validate_json(json.dumps(body))).blocks)
    assert f"(list price, {LIVE}, {PUBLISHED[:10]})" in rendered
    # and the call was granted to the function, sent to the pricing endpoint's region
    assert "pricing:GetProducts" in calls.actions and calls.ungranted("NotebookFunction") == []

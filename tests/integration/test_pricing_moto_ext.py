"""The kit's Price List Query API (reaper_devkit.moto_ext.pricing), held to its API reference, in-process and
through moto's server: filters, pagination, and the refusals the reference lists."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from reaper_devkit import local_aws
from reaper_devkit.moto_ext import pricing as price_api


def shaped(i: int, region: str = "us-east-1", itype: str = "ml.t3.medium") -> dict[str, Any]:
    """An entry of the documented PriceList shape; pagination and filters are what is tested, not its figure."""
    sku = f"SKU{i:05d}"
    attrs = {"regionCode": region, "instanceName": itype, "component": "Notebook", "servicecode": "AmazonSageMaker"}
    term = f"{sku}.JRTCKXETXF"
    dims = {f"{term}.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": "1.0000000000"}}}
    return {
        "product": {"productFamily": "ML Instance", "sku": sku, "attributes": attrs},
        "serviceCode": "AmazonSageMaker",
        "terms": {"OnDemand": {term: {"priceDimensions": dims}}},
        "publicationDate": "2026-11-20T00:00:00Z",
    }


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    price_api.reset()
    yield
    price_api.reset()


@pytest.fixture(params=["in-process", "server"])
def pricing_client(request: pytest.FixtureRequest, aws: boto3.session.Session) -> Iterator[Any]:
    if request.param == "in-process":
        yield aws.client("pricing", region_name="us-east-1")
        return
    with local_aws.local_account() as url:
        yield boto3.client("pricing", region_name="us-east-1", endpoint_url=url)


def error(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def test_pages_of_max_results_follow_next_token_to_the_end(pricing_client):
    price_api.install("AmazonSageMaker", [shaped(i) for i in range(7)] + [shaped(100, region="eu-west-1")])
    seen: list[str] = []
    token = None
    while True:
        kwargs: dict[str, Any] = {"NextToken": token} if token else {}
        page = pricing_client.get_products(
            ServiceCode="AmazonSageMaker",
            Filters=[{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"}],
            MaxResults=3,
            **kwargs,
        )
        assert len(page["PriceList"]) <= 3
        seen += [json.loads(p)["product"]["sku"] for p in page["PriceList"]]
        token = page.get("NextToken")
        if not token:
            break
    assert seen == [f"SKU{i:05d}" for i in range(7)]


def test_the_newer_filter_types(pricing_client):
    price_api.install(
        "AmazonSageMaker", [shaped(1, itype="ml.t3.medium"), shaped(2, itype="ml.g5.xlarge"), shaped(3, itype="ml.p5.48xlarge")]
    )

    def skus(t: str, value: str) -> list[str]:
        page = pricing_client.get_products(ServiceCode="AmazonSageMaker", Filters=[{"Type": t, "Field": "instanceName", "Value": value}])
        return sorted(json.loads(p)["product"]["sku"] for p in page["PriceList"])

    assert skus("EQUALS", "ml.g5.xlarge") == ["SKU00002"]
    assert skus("CONTAINS", ".xlarge") == ["SKU00002"]
    assert skus("ANY_OF", "ml.t3.medium,ml.p5.48xlarge") == ["SKU00001", "SKU00003"]
    assert skus("NONE_OF", "ml.t3.medium,ml.p5.48xlarge") == ["SKU00002"]


def test_refusals_the_reference_lists(pricing_client):
    price_api.install("AmazonSageMaker", [shaped(i) for i in range(4)])
    with pytest.raises(ClientError) as exc:
        pricing_client.get_products(ServiceCode="AmazonNoSuchService")
    assert error(exc) == "NotFoundException"
    with pytest.raises(ClientError) as exc:
        pricing_client.get_products(
            ServiceCode="AmazonSageMaker", Filters=[{"Type": "TERM_MATCH", "Field": "noSuchAttribute", "Value": "x"}]
        )
    assert error(exc) == "InvalidParameterException"
    with pytest.raises(ClientError) as exc:
        pricing_client.get_products(ServiceCode="AmazonSageMaker", NextToken="not-a-token")
    assert error(exc) == "InvalidNextTokenException"
    token = pricing_client.get_products(ServiceCode="AmazonSageMaker", MaxResults=1)["NextToken"]
    price_api.install("AmazonSageMaker", [shaped(i) for i in range(4)])  # the catalogue changed since: the token expired
    with pytest.raises(ClientError) as exc:
        pricing_client.get_products(ServiceCode="AmazonSageMaker", MaxResults=1, NextToken=token)
    assert error(exc) == "ExpiredNextTokenException"


def test_a_test_can_have_it_throttle_and_describe_services_lists_the_attributes(pricing_client):
    price_api.install("AmazonSageMaker", [shaped(1)])
    price_api.fail_next("ThrottlingException", times=10)
    with pytest.raises(ClientError) as exc:
        pricing_client.get_products(ServiceCode="AmazonSageMaker")
    assert error(exc) == "ThrottlingException"
    price_api.reset()
    price_api.install("AmazonSageMaker", [shaped(1)])
    (service,) = pricing_client.describe_services(ServiceCode="AmazonSageMaker")["Services"]
    assert {"regionCode", "instanceName", "component"} <= set(service["AttributeNames"])

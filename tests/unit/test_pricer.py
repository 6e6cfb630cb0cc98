"""The Pricer's floor (docs/prices.md): memory, the table's map, the API, the shipped copy; what each keeps and for how long."""

from __future__ import annotations

import json
from typing import Any

from reaper.aws import pricing
from reaper.aws.pricing import PRICED_FOR, UNPRICED_FOR, Pricer
from reaper.core.price import LIVE, SHIPPED, Price, total


def product(sku: str, attributes: dict[str, str], unit: str, usd: str) -> str:
    """One PriceList entry of GetProducts' documented shape (a JSON string): the product and its one on-demand rate."""
    rate = {"unit": unit, "pricePerUnit": {"USD": usd}}
    terms = {"OnDemand": {f"{sku}.T": {"priceDimensions": {f"{sku}.T.R": rate}}}}
    return json.dumps({"product": {"sku": sku, "attributes": attributes}, "terms": terms, "publicationDate": "2026-11-20T00:00:00Z"})


def answer(itype: str, usd: str, usage: str = "USE1-Notebk") -> str:
    return product("SKU1", {"regionCode": "eu-west-1", "instanceName": itype, "usagetype": f"{usage}:{itype}"}, "Hrs", usd)


class FakePriceList:
    """Answers GetProducts from a dict of the `by` filter's value (an instance type) -> PriceList (a fake of the
    documented shape); `service`, when given, is the only ServiceCode it answers."""

    def __init__(self, listed: dict[str, list[str]], by: str = "instanceName", service: str | None = None) -> None:
        self.listed, self.by, self.service, self.requests = listed, by, service, []  # type: ignore[var-annotated]

    def get_products(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        assert self.service in (None, request["ServiceCode"])
        value = next(f["Value"] for f in request["Filters"] if f["Field"] == self.by)
        return {"PriceList": self.listed.get(value, [])}


class MemoryStore:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str], tuple[dict[str, Any], int]] = {}
        self.loads = 0

    def load(self, group: str, region: str) -> dict[str, Any]:
        self.loads += 1
        found = self.items.get((group, region))
        return json.loads(json.dumps(found[0])) if found else {}

    def save(self, group: str, region: str, entries: dict[str, Any], expires_at: int) -> None:
        self.items[(group, region)] = (json.loads(json.dumps(entries)), expires_at)


def test_a_price_read_is_kept_a_week_and_asked_again_after():
    api, store, now = FakePriceList({"ml.g5.xlarge": [answer("ml.g5.xlarge", "1.4100000000")]}), MemoryStore(), [1_000_000.0]
    first = Pricer(lambda: api, store, clock=lambda: now[0])
    assert first.hourly(pricing.NOTEBOOK, "eu-west-1", "ml.g5.xlarge") == Price(1.41, LIVE, "2026-11-20", "SKU1")
    assert first.hourly(pricing.NOTEBOOK, "eu-west-1", "ml.g5.xlarge", 3) == Price(4.23, LIVE, "2026-11-20", "SKU1")
    assert len(api.requests) == 1 and store.items[("sagemaker", "eu-west-1")][1] == int(now[0]) + PRICED_FOR
    # a new process a day later: the table's map answers, read once
    now[0] += 24 * 3600
    second = Pricer(lambda: api, store, clock=lambda: now[0])
    for _ in range(3):
        assert second.hourly(pricing.NOTEBOOK, "eu-west-1", "ml.g5.xlarge") is not None
    assert len(api.requests) == 1 and store.loads == 2
    # past the week: asked again
    now[0] += PRICED_FOR
    third = Pricer(lambda: api, store, clock=lambda: now[0])
    third.hourly(pricing.NOTEBOOK, "eu-west-1", "ml.g5.xlarge")
    assert len(api.requests) == 2


def test_an_empty_answer_is_kept_a_day_and_never_a_zero():
    api, now = FakePriceList({"ml.x.none": [answer("ml.x.none", "0.0000000000")]}), [0.0]
    p = Pricer(lambda: api, MemoryStore(), clock=lambda: now[0])
    assert p.hourly(pricing.NOTEBOOK, "eu-west-1", "ml.x.none") is None  # $0 is no price
    assert p.hourly(pricing.NOTEBOOK, "eu-west-1", "ml.x.none") is None and len(api.requests) == 1
    now[0] += UNPRICED_FOR + 1
    p.hourly(pricing.NOTEBOOK, "eu-west-1", "ml.x.none")
    assert len(api.requests) == 2


def test_one_request_per_type_prices_every_sagemaker_use_of_it():
    listed = [answer("ml.g5.xlarge", "1.41"), answer("ml.g5.xlarge", "1.408", "USE1-Host"), answer("ml.g5.xlarge", "1.4084", "USE1-Train")]
    api = FakePriceList({"ml.g5.xlarge": listed})
    p = Pricer(lambda: api)
    got = [p.hourly(s, "eu-west-1", "ml.g5.xlarge") for s in (pricing.NOTEBOOK, pricing.HOSTING, pricing.TRAINING)]
    assert [g.usd for g in got if g] == [1.41, 1.408, 1.4084] and len(api.requests) == 1


def test_off_asks_nothing_and_says_the_shipped_copy():
    p = Pricer.shipped_only()
    price = p.hourly(pricing.TRAINING, "us-east-1", "ml.p3.2xlarge")
    assert price is not None and price.source == SHIPPED and price.usd == pricing.row(pricing.TRAINING, "us-east-1", "ml.p3.2xlarge")["usd"]


def test_a_total_is_unpriced_when_any_part_is_and_says_its_weakest_source():
    live, shipped = Price(1.0, LIVE, "2026-11-20"), Price(2.0, SHIPPED, "2026-12-02")
    assert total([live, None]) is None and total([]) is None
    assert total([live, shipped]) == Price(3.0, SHIPPED, "2026-11-20")
    assert total([live, live]) == Price(2.0, LIVE, "2026-11-20")


def bedrock_answer(model: str, inference_type: str, unit: str, usd: str, feature: str = "On-demand Inference") -> str:
    attrs = {"regionCode": "us-east-1", "model": model, "feature": feature, "inferenceType": inference_type}
    return product(f"B-{inference_type}-{feature}", attrs, unit, usd)


def test_bedrock_token_prices_are_per_thousand_tokens_on_demand_only_and_one_request_per_model():
    model = "amazon.nova-lite-v1:0"
    listed = [
        bedrock_answer(model, "Input tokens", "1K tokens", "0.0000600000"),
        bedrock_answer(model, "Input tokens", "1K tokens", "0.0000300000", feature="Batch Inference"),
        bedrock_answer(model, "Prompt cache read input tokens", "1K tokens", "0.0000150000"),
        bedrock_answer(model, "Output tokens", "1M tokens", "0.2400000000"),
    ]
    api, store = FakePriceList({model: listed}, by="model", service="AmazonBedrock"), MemoryStore()
    pricer = Pricer(lambda: api, store)
    assert pricer.bedrock_tokens("us-east-1", model, "input") == Price(0.00006, LIVE, "2026-11-20", "B-Input tokens-On-demand Inference")
    output = pricer.bedrock_tokens("us-east-1", model, "output")
    assert output is not None and abs(output.usd - 0.00024) < 1e-12 and output.live
    assert len(api.requests) == 1 and ("bedrock", "us-east-1") in store.items
    # a model the Price List does not list by its id: unpriced (the shipped copy has no Bedrock rows), asked again after a day
    assert pricer.bedrock_tokens("us-east-1", "anthropic.claude-3-haiku-20240307-v1:0", "input") is None
    assert store.items[("bedrock", "us-east-1")][0]["anthropic.claude-3-haiku-20240307-v1:0"]["sections"] == {}


def test_bedrock_is_unpriced_with_the_api_off_never_zero():
    assert Pricer.shipped_only().bedrock_tokens("us-east-1", "amazon.nova-lite-v1:0", "input") is None

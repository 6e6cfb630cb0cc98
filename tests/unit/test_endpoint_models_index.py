"""DetailReader.models_existing: ListModels pages while cheaper than a DescribeModel each."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from reaper.kinds.endpoint.signals import DetailReader


class FakeSageMaker:
    """ListModels in pages of 100 over `models`; DescribeModel answers ValidationException when gone."""

    def __init__(self, models: list[str]) -> None:
        self.models = models
        self.pages = 0
        self.described: list[str] = []

    def get_paginator(self, name: str) -> Any:
        assert name == "list_models"
        fake = self

        class Pages:
            def paginate(self, **_: Any) -> Any:
                for i in range(0, len(fake.models), 100):
                    fake.pages += 1
                    more = {"NextToken": str(i + 100)} if i + 100 < len(fake.models) else {}
                    yield {"Models": [{"ModelName": m} for m in fake.models[i : i + 100]], **more}

        return Pages()

    def describe_model(self, ModelName: str) -> dict[str, Any]:  # noqa: N803 - boto3's name
        self.described.append(ModelName)
        if ModelName not in self.models:
            raise ClientError({"Error": {"Code": "ValidationException", "Message": f"Could not find model {ModelName}"}}, "DescribeModel")
        return {"ModelName": ModelName}


def reader(sm: FakeSageMaker) -> DetailReader:
    return DetailReader(lambda service: sm)  # type: ignore[arg-type]


def test_small_account_every_page_read_and_a_gone_model_is_proved_gone_without_describes() -> None:
    # Given 250 models (3 pages), and six names wanted, one of them gone
    sm = FakeSageMaker([f"m{i}" for i in range(250)])
    # When asked which exist
    existing = reader(sm).models_existing({"m1", "m2", "m120", "m121", "m249", "gone"})
    # Then three pages (half of six describes) and no describe at all
    assert existing == {"m1", "m2", "m120", "m121", "m249"} and sm.pages == 3 and sm.described == []


def test_large_account_stops_paging_at_half_the_names_and_describes_the_rest() -> None:
    # Given 10,000 models (100 pages), and four names wanted: two new ones (first page), one old, one gone
    sm = FakeSageMaker([f"m{i}" for i in range(10_000)])
    # When asked which exist
    existing = reader(sm).models_existing({"m0", "m1", "m9999", "gone"})
    # Then at most two pages, and only the names not seen are described: never more calls than names + 1
    assert existing == {"m0", "m1", "m9999"}
    assert sm.pages == 2 and sorted(sm.described) == ["gone", "m9999"]


def test_one_name_is_one_describe() -> None:
    sm = FakeSageMaker([f"m{i}" for i in range(500)])
    assert reader(sm).models_existing({"m7"}) == {"m7"} and sm.pages == 0 and sm.described == ["m7"]


def test_names_found_early_stop_the_paging() -> None:
    # Given 10,000 models and two names wanted, both on the first page
    sm = FakeSageMaker([f"m{i}" for i in range(10_000)])
    # Then one page, no describe
    assert reader(sm).models_existing({"m3", "m50"}) == {"m3", "m50"} and sm.pages == 1 and sm.described == []

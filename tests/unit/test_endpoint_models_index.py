"""DetailReader.models_existing: ListModels pages while cheaper than a DescribeModel each."""

from __future__ import annotations

from typing import Any

import pytest
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


def test_a_later_chunk_goes_on_from_the_next_page_and_never_reads_a_page_twice() -> None:
    # Given 10,000 models and a reader the chunks of one sweep share
    sm = FakeSageMaker([f"m{i}" for i in range(10_000)])
    shared = reader(sm)
    # When the first chunk wants names on pages 1 and 2, and the second names on page 3
    assert shared.models_existing({"m0", "m1", "m150", "m160"}) == {"m0", "m1", "m150", "m160"} and sm.pages == 2
    assert shared.models_existing({"m220", "m230"}) == {"m220", "m230"}
    # Then the second read only page 3, and described nothing
    assert sm.pages == 3 and sm.described == []
    # and a name seen already costs nothing
    assert shared.models_existing({"m0", "m230"}) == {"m0", "m230"} and sm.pages == 3


def test_once_every_page_is_read_a_later_chunk_knows_what_is_gone_without_a_call() -> None:
    sm = FakeSageMaker([f"m{i}" for i in range(150)])
    shared = reader(sm)
    assert shared.models_existing({"m1", "m2", "m149", "gone"}) == {"m1", "m2", "m149"} and sm.pages == 2 and sm.described == []
    assert shared.models_existing({"gone-too", "also-gone"}) == set() and sm.pages == 2 and sm.described == []


def test_a_failed_page_starts_the_listing_again_for_the_next_chunk() -> None:
    # Given a listing whose second page is throttled once
    sm = FakeSageMaker([f"m{i}" for i in range(300)])
    real = sm.get_paginator
    calls = {"n": 0}

    def flaky(name: str) -> Any:
        calls["n"] += 1
        pages = real(name)
        if calls["n"] > 1:
            return pages

        class Failing:
            def paginate(self, **kw: Any) -> Any:
                gen = pages.paginate(**kw)
                yield next(gen)
                raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "ListModels")

        return Failing()

    sm.get_paginator = flaky  # type: ignore[method-assign]
    shared = reader(sm)
    with pytest.raises(ClientError, match="ThrottlingException"):  # the throttled page is raised, not swallowed
        shared.models_existing({"m250", "m260", "m270", "m280"})
    # Then the next chunk lists again from the first page, and nothing was taken as gone
    assert shared.models_existing({"m0", "m1", "m250", "m260"}) == {"m0", "m1", "m250", "m260"}
    assert sm.pages == 2 and sorted(sm.described) == ["m250", "m260"]  # m0, m1 known from the page before the failure


def test_the_chunks_of_one_sweep_share_a_reader_and_the_next_sweep_does_not() -> None:
    from reaper.core import scope as sweep_scope
    from reaper.kinds.endpoint.signals import reader_for

    sm = FakeSageMaker([])
    clients = lambda service: sm  # noqa: E731
    assert reader_for(clients) is not reader_for(clients)  # outside a sweep: nothing kept
    with sweep_scope.opened():
        first = reader_for(clients)
        assert reader_for(clients) is first
    with sweep_scope.opened():
        assert reader_for(clients) is not first

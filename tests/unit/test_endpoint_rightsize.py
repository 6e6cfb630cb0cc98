"""Right-size advice for endpoints (reaper/kinds/endpoint/rightsize.py): pure, exact figures."""

from __future__ import annotations

import pytest

from reaper.core.price import SHIPPED, Price
from reaper.kinds.endpoint import rightsize
from reaper.kinds.endpoint.rightsize import Usage, advise, smaller_sizes, vcpus

PRICES = {"ml.c5.xlarge": 0.204, "ml.c5.large": 0.102, "ml.g4dn.2xlarge": 1.0528, "ml.g4dn.xlarge": 0.7364}


def price(instance_type: str, count: int) -> Price | None:
    usd = PRICES.get(instance_type)
    return None if usd is None else Price(usd, SHIPPED, "2026-12-02").times(count)


def week(**kw: object) -> Usage:
    base: dict[str, object] = {
        "invocations": 70_000.0,
        "active_hours": 168,
        "latency_ms": 40.0,
        "cpu_peak": 240.0,
        "memory_peak": 70.0,
        "gpu_peak": None,
        "gpu_memory_peak": None,
    }
    return Usage(**{**base, **kw})  # type: ignore[arg-type]


def test_a_sparse_cpu_endpoint_is_told_serverless_with_its_instances_cost_as_the_most_it_saves() -> None:
    # Given 2 x ml.c5.xlarge with 840 requests in 6 of the week's 168 hours
    a = advise("sparse", "us-east-1", "ml.c5.xlarge", 2, week(invocations=840.0, active_hours=6), price)
    # Then serverless, its instances' monthly cost (2 x 0.204 x 730) as the most it saves, serverless unpriced
    assert a is not None and a.change == rightsize.SERVERLESS
    assert a.monthly_before.usd == pytest.approx(297.84) and a.monthly_after is None and a.monthly_saving == pytest.approx(297.84)
    # per 1,000 inferences: 297.84 over 840 x 730 / 168 = 3,650 a month
    assert a.per_1k_before == pytest.approx(81.6) and a.per_1k_after is None
    assert "serverless inference instead of 2 x ml.c5.xlarge: up to $297.84/month less" in a.text()
    assert "unpriced" in a.text() and a.to_json()["saving_is_upper_bound"] is True


def test_a_sparse_gpu_endpoint_is_told_asynchronous_with_the_busy_hours_billed() -> None:
    # Given ml.g4dn.xlarge with requests in 12 hours of the week (serverless inference has no GPUs)
    a = advise("gpu", "us-east-1", "ml.g4dn.xlarge", 1, week(invocations=1680.0, active_hours=12), price)
    assert a is not None and a.change == rightsize.ASYNC
    before = 0.7364 * 730
    after = round(before * 12 / 168, 4)
    assert a.monthly_before.usd == pytest.approx(round(before, 4)) and a.monthly_after is not None
    assert a.monthly_after.usd == pytest.approx(after) and a.monthly_saving == pytest.approx(round(round(before, 4) - after, 2))
    assert a.per_1k_after == pytest.approx(round(after / 7.3, 4))  # 1,680 x 730 / 168 = 7,300 a month


def test_long_model_latency_on_a_cpu_instance_is_told_asynchronous() -> None:
    a = advise("slow", "us-east-1", "ml.c5.xlarge", 1, week(invocations=100.0, active_hours=10, latency_ms=25_000.0), price)
    assert a is not None and a.change == rightsize.ASYNC and "model latency 25.0 s" in a.why


def test_an_under_used_gpu_instance_is_told_the_next_smaller_priced_size_with_the_difference() -> None:
    # Given ml.g4dn.2xlarge (8 vCPUs) busy every hour but at most 12% of its vCPUs, GPU 10%, GPU memory 20%
    u = week(cpu_peak=96.0, memory_peak=30.0, gpu_peak=10.0, gpu_memory_peak=20.0)
    a = advise("big", "us-east-1", "ml.g4dn.2xlarge", 1, u, price)
    assert a is not None and a.change == rightsize.SMALLER and a.to == "ml.g4dn.xlarge"
    assert a.monthly_after is not None and a.monthly_after.usd == pytest.approx(round(0.7364 * 730, 4))
    assert a.monthly_saving == pytest.approx(round((1.0528 - 0.7364) * 730, 2))
    assert a.per_1k_before == pytest.approx(round(1.0528 * 730 / (70 * 730 / 168), 4))


def test_a_busy_right_sized_endpoint_and_unknown_use_get_no_advice() -> None:
    assert advise("busy", "us-east-1", "ml.c5.xlarge", 1, week(), price) is None  # 60% of each vCPU
    assert advise("nocpu", "us-east-1", "ml.c5.xlarge", 1, week(cpu_peak=None), price) is None  # unknown is never under-used
    # a GPU instance without GPU figures, or with its GPU busy, keeps its size
    assert advise("g", "us-east-1", "ml.g4dn.2xlarge", 1, week(cpu_peak=50.0, memory_peak=20.0), price) is None
    busy_gpu = week(cpu_peak=50.0, memory_peak=20.0, gpu_peak=30.0, gpu_memory_peak=20.0)
    assert advise("g", "us-east-1", "ml.g4dn.2xlarge", 1, busy_gpu, price) is None
    # an idle endpoint is the sweep's business; an unpriced one gets no figure, so no advice
    assert advise("idle", "us-east-1", "ml.c5.xlarge", 1, week(invocations=0.0, active_hours=0), price) is None
    assert advise("odd", "us-east-1", "ml.x9.xlarge", 1, week(invocations=5.0, active_hours=1), price) is None
    # a 43-hour week is not sparse (a quarter of 168 is 42)
    assert advise("edge", "us-east-1", "ml.c5.xlarge", 1, week(active_hours=43), price) is None


def test_sizes_from_the_names() -> None:
    assert vcpus("ml.c5.large") == 2 and vcpus("ml.g4dn.xlarge") == 4 and vcpus("ml.p4d.24xlarge") == 96 and vcpus("weird") is None
    assert smaller_sizes("ml.g5.4xlarge")[:2] == ["ml.g5.2xlarge", "ml.g5.xlarge"] and smaller_sizes("ml.t2.medium") == []

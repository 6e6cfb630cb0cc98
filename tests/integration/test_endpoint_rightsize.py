"""Right-size advice through `reaper plan --kind endpoint` and the deployed notifier's digest, against moto with a
seeded week of CloudWatch metrics (docs/kinds/endpoint.md#right-size-advice)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.aws import pricing
from reaper.cli.main import main
from reaper.core.model import HOURS_PER_MONTH
from reaper_devkit import seed, seed_endpoint
from reaper_devkit.calls import recording

REGION = "us-east-1"
DEV = {"ml:owner": "ana@example.com", "ml:stage": "dev"}
INSTANCE_NS = "/aws/sagemaker/Endpoints"


@pytest.fixture
def now() -> datetime:
    return datetime.now(UTC)


def hourly(now: datetime, hours: range) -> list[datetime]:
    top = now.replace(minute=0, second=0, microsecond=0)
    return [top - timedelta(hours=h, minutes=30) for h in hours]


def seed_week(
    cw: Any, name: str, now: datetime, calls: dict[int, float], cpu: float, memory: float, gpu: tuple[float, float] | None
) -> None:
    """Invocations in the given hours ago; CPU, memory (and GPU, GPU memory) every hour of the week."""
    dims = {"EndpointName": name, "VariantName": "AllTraffic"}
    seed.put_series(cw, "AWS/SageMaker", "Invocations", dims, [(hourly(now, range(h, h + 1))[0], v) for h, v in calls.items()])
    seed.put_series(cw, "AWS/SageMaker", "ModelLatency", dims, [(hourly(now, range(h, h + 1))[0], 40_000.0) for h in calls])
    week = range(1, 168)
    seed.put_series(cw, INSTANCE_NS, "CPUUtilization", dims, [(t, cpu) for t in hourly(now, week)])
    seed.put_series(cw, INSTANCE_NS, "MemoryUtilization", dims, [(t, memory) for t in hourly(now, week)])
    if gpu is not None:
        seed.put_series(cw, INSTANCE_NS, "GPUUtilization", dims, [(t, gpu[0]) for t in hourly(now, week)])
        seed.put_series(cw, INSTANCE_NS, "GPUMemoryUtilization", dims, [(t, gpu[1]) for t in hourly(now, week)])


def endpoint(sm: Any, name: str, now: datetime, instance_type: str, days: float = 10, tags: dict[str, str] | None = None) -> None:
    seed_endpoint.classic(sm, name, DEV if tags is None else tags, instance_type=instance_type)
    seed_endpoint.age(name, now, days * 24 * 60)


def monthly(instance_type: str) -> float:
    row = pricing.row(pricing.HOSTING, REGION, instance_type)
    assert row is not None
    return round(float(row["usd"]) * HOURS_PER_MONTH, 4)


def plan_json(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    main(["plan", "--kind", "endpoint", "--json"])
    return {r["id"]: r for r in (json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip())}


def test_plan_names_serverless_for_a_sparse_endpoint_with_the_dollar_difference_and_nothing_for_a_busy_one(
    aws: Any, sm: Any, cw: Any, now: datetime, capsys: Any
) -> None:
    # Given a sparse endpoint (requests in 5 hours of the week) and a busy, right-sized one (every hour, 60% of each vCPU)
    endpoint(sm, "sparse", now, "ml.c5.xlarge")
    seed_week(cw, "sparse", now, {h: 20.0 for h in (3, 30, 60, 90, 120)}, cpu=8.0, memory=20.0, gpu=None)
    endpoint(sm, "busy", now, "ml.c5.xlarge")
    seed_week(cw, "busy", now, dict.fromkeys(range(0, 168), 500.0), cpu=240.0, memory=70.0, gpu=None)
    # When the plan is read as JSON
    lines = plan_json(capsys)
    # Then the sparse one is told serverless, its instances' monthly list price the most it saves, serverless unpriced
    advice = lines["sparse"]["advice"]
    assert advice["change"] == "serverless" and advice["monthly_saving_usd"] == pytest.approx(round(monthly("ml.c5.xlarge"), 2))
    assert advice["monthly_after_usd"] is None and advice["saving_is_upper_bound"] is True
    assert advice["per_1k_inferences_before_usd"] == pytest.approx(round(monthly("ml.c5.xlarge") / (100 * 730 / 168 / 1000), 4))
    assert advice["price_source"] == "shipped copy of AWS's price list"
    # And the busy, right-sized one gets none; advice is never an action
    assert lines["busy"]["advice"] is None
    assert lines["sparse"]["executed"] is False and lines["busy"]["verdict"] == "keep"


def test_plan_text_names_a_smaller_size_for_an_under_used_gpu_and_async_for_a_sparse_gpu(
    aws: Any, sm: Any, cw: Any, now: datetime, capsys: Any
) -> None:
    # Given an ml.g4dn.2xlarge busy every hour at 10% GPU, and a sparse ml.g4dn.xlarge, and a sparse one only 3 days old
    endpoint(sm, "big", now, "ml.g4dn.2xlarge")
    seed_week(cw, "big", now, dict.fromkeys(range(1, 168), 50.0), cpu=40.0, memory=30.0, gpu=(10.0, 20.0))
    endpoint(sm, "gpu-sparse", now, "ml.g4dn.xlarge")
    seed_week(cw, "gpu-sparse", now, {5: 10.0, 50: 10.0}, cpu=5.0, memory=30.0, gpu=(1.0, 20.0))
    endpoint(sm, "young", now, "ml.c5.xlarge", days=3)
    seed_week(cw, "young", now, {5: 10.0}, cpu=5.0, memory=20.0, gpu=None)
    # When the plan is printed
    assert main(["plan", "--kind", "endpoint"]) == 0
    out = capsys.readouterr().out
    # Then the advice section gives each figure from the price list
    saving = round(monthly("ml.g4dn.2xlarge") - monthly("ml.g4dn.xlarge"), 2)
    assert f"endpoint big ({REGION}): ml.g4dn.xlarge instead of 1 x ml.g4dn.2xlarge: ${saving:,.2f}/month less" in out, out
    after = round(monthly("ml.g4dn.xlarge") * 2 / 168, 4)
    assert f"asynchronous inference instead of 1 x ml.g4dn.xlarge: ${round(monthly('ml.g4dn.xlarge') - after, 2):,.2f}/month less" in out
    assert "endpoint young" not in out  # three days are not a week of evidence


def test_the_week_is_read_in_one_batch_and_a_config_only_for_endpoints_it_may_advise(
    aws: Any, sm: Any, cw: Any, now: datetime, capsys: Any
) -> None:
    # Given 8 busy endpoints (one config read each would be the cost of advising them), a sparse dev one (whose
    # configuration the sweep reads) and a sparse one of no stage (whose configuration the sweep does not read)
    for n in range(8):
        endpoint(sm, f"busy-{n}", now, "ml.c5.xlarge")
        seed_week(cw, f"busy-{n}", now, dict.fromkeys(range(0, 168), 500.0), cpu=300.0, memory=70.0, gpu=None)
    endpoint(sm, "sparse", now, "ml.c5.xlarge")
    seed_week(cw, "sparse", now, {3: 1.0}, cpu=8.0, memory=20.0, gpu=None)
    endpoint(sm, "sparse-nostage", now, "ml.c5.xlarge", tags={"ml:owner": "bo@example.com"})
    seed_week(cw, "sparse-nostage", now, {3: 1.0}, cpu=8.0, memory=20.0, gpu=None)
    from reaper.kinds.endpoint import usage

    with recording() as calls:
        lines = plan_json(capsys)
    assert lines["sparse"]["advice"]["change"] == lines["sparse-nostage"]["advice"]["change"] == "serverless"
    # Then the sweep's reads, one GetMetricData for the week (60 queries) and the configuration the sweep did not read
    with recording() as sweep_only:
        main(["sweep", "--kind", "endpoint", "--json"])
    capsys.readouterr()
    extra = {k: v - sweep_only.by_operation().get(k, 0) for k, v in calls.by_operation().items()}
    assert {k: v for k, v in extra.items() if v} == {"cloudwatch:GetMetricData": 1, "sagemaker:DescribeEndpointConfig": 1}
    assert len(usage.queries(usage.Target("x", REGION, "c", (("AllTraffic", 1),)))) == 6


@pytest.fixture
def notifier(aws: Any, table: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The deployed notifier in bot mode against the kit's Slack."""
    from reaper_devkit.slack_api import SlackApi
    from tests.conftest import load_function

    api = SlackApi(users={}).__enter__()
    secret = json.dumps({"bot_token": "xoxb-t", "admin_channel": "C0ADMIN", "base_url": api.url})
    arn = aws.client("secretsmanager").create_secret(Name="mlreaper-slack", SecretString=secret)["ARN"]
    for k, v in {"REAPER_SLACK_SECRET_ARN": arn, "REAPER_TABLE": table}.items():
        monkeypatch.setenv(k, v)
    app = load_function("notifier")
    app.api = api
    yield app
    api.__exit__(None, None, None)


def test_the_digest_names_serverless_for_a_sparse_endpoint_and_nothing_for_a_busy_one(
    notifier: Any, sm: Any, cw: Any, now: datetime
) -> None:
    # Given a sparse endpoint and a busy, right-sized one, a week old and more
    endpoint(sm, "sparse", now, "ml.c5.xlarge")
    seed_week(cw, "sparse", now, {h: 20.0 for h in (3, 30, 60, 90, 120)}, cpu=8.0, memory=20.0, gpu=None)
    endpoint(sm, "busy", now, "ml.c5.xlarge")
    seed_week(cw, "busy", now, dict.fromkeys(range(0, 168), 500.0), cpu=240.0, memory=70.0, gpu=None)
    # When the deployed notifier posts the daily digest
    with recording() as calls:
        result = notifier.NOTIFIER.post_daily_digest()
    # Then its advice line names serverless for the sparse one with the dollar difference, and nothing for the busy one
    line = result["digest"]["advice"]
    saving = round(monthly("ml.c5.xlarge"), 2)
    assert line.startswith(f"sparse: serverless inference (up to ${saving:,.2f}/month less, serverless unpriced"), line
    assert "busy" not in line
    posted = json.dumps(notifier.api.posts_to("C0ADMIN")[-1]["blocks"])
    assert "Right-size (advice only):" in posted and f"${saving:,.2f}/month" in posted
    # And every call it made is granted to the notifier (the secret is granted by its parameter's ARN, which the
    # kit's secret does not carry: not this read's)
    assert [c for c in calls.ungranted("NotifierFunction") if not c.startswith("secretsmanager:")] == []
    assert calls.by_operation()["cloudwatch:GetMetricData"] >= 1


def test_a_refused_metric_read_leaves_the_plan_whole_and_says_the_advice_was_not_read(
    aws: Any, sm: Any, cw: Any, now: datetime, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a sparse endpoint, and CloudWatch refusing the week's read
    from botocore.exceptions import ClientError

    from reaper.kinds.endpoint import usage

    endpoint(sm, "sparse", now, "ml.c5.xlarge")
    seed_week(cw, "sparse", now, {3: 1.0}, cpu=8.0, memory=20.0, gpu=None)

    def refused(*_args: Any, **_kw: Any) -> Any:
        raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "GetMetricData")

    monkeypatch.setattr(usage, "fetch", refused)
    # When the plan runs, Then it exits 0 with every endpoint's line, no advice, and says why on stderr
    assert main(["plan", "--kind", "endpoint", "--json"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines() if line.strip()]
    assert [r["id"] for r in lines] == ["sparse"] and lines[0]["advice"] is None
    assert "right-size advice not read: ClientError" in captured.err

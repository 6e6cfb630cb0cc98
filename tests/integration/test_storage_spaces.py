"""Studio spaces left behind (issue 38): the storage function and `reaper plan --kind storage` against moto. A space with
no app running, none in the last 24 h and no CreateApp in CloudTrail within StorageIdleWeeks, made and changed weeks ago,
is reported once with its owner, size, monthly cost (or "unpriced"), its last app start and the command to delete it
oneself; a space with an app running, one whose app ran in the last 24 h or started last week (CloudTrail), an exempt
one, one in a production domain and a young one are not reported; nothing in SageMaker is changed. Where CloudTrail
refuses, today's rule holds: reported, its last use unknown, counted by `reaper coverage`."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

import pytest

from reaper.aws import pricing
from reaper.cli.main import main
from reaper_devkit import seed_studio
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext import cloudtrail_lookup, sagemaker_studio
from reaper_devkit.template import function_actions
from tests.conftest import drain, event, load_function

WEEKS_AGO = datetime.now(UTC) - timedelta(weeks=6)
LAST_WEEK = datetime.now(UTC) - timedelta(days=8)
TEN_WEEKS_AGO = datetime.now(UTC) - timedelta(weeks=10)


def _space(sm: Any, domain: str, name: str, *, made: datetime = WEEKS_AGO, **kwargs: Any) -> str:
    arn = seed_studio.space(sm, domain, name, **kwargs)
    sagemaker_studio.set_space_times(arn, created=made, modified=made)
    return arn


@pytest.fixture
def spaces(sm: Any) -> dict[str, str]:
    """Spaces of a dev domain and a production one, each named for what it shows; {name: ARN}."""
    dev = seed_studio.domain(sm, "dev", tags={"ml:stage": "dev"})
    other = seed_studio.domain(sm, "other", tags={"ml:stage": "dev"})
    prod = seed_studio.domain(sm, "prod", tags={"ml:stage": "prod"})
    seed_studio.user(sm, dev, "ana", tags={"ml:owner": "ana@example.com"})
    seed_studio.user(sm, prod, "ana", tags={"ml:owner": "ana@example.com"})
    out = {
        "unused": _space(sm, dev, "unused", owner="ana", size_gib=50),
        "running": _space(sm, dev, "running", owner="ana", size_gib=50),
        "ran-today": _space(sm, dev, "ran-today", owner="ana", size_gib=50),
        "ran-last-week": _space(sm, dev, "ran-last-week", owner="ana", size_gib=50),
        "exempt": _space(sm, dev, "exempt", owner="ana", size_gib=50, tags={"reaper:exempt": "true"}),
        "young": _space(sm, dev, "young", owner="ana", size_gib=50, made=datetime.now(UTC) - timedelta(days=3)),
        "sizeless": _space(sm, dev, "sizeless", owner="ana"),
        "production": _space(sm, prod, "production", owner="ana", size_gib=50),
        "other-unused": _space(sm, other, "unused", size_gib=50),  # another domain's space of the same name
    }
    seed_studio.app(sm, dev, space_name="running", created=WEEKS_AGO)
    today = seed_studio.app(sm, dev, space_name="ran-today")
    sagemaker_studio.set_app_times(today, deleted=datetime.now(UTC) - timedelta(hours=3))
    last_week = seed_studio.app(sm, dev, space_name="ran-last-week")
    sagemaker_studio.set_app_times(last_week, deleted=datetime.now(UTC) - timedelta(days=7))  # AWS has forgotten it
    # CloudTrail's CreateApp events: ran-last-week's start 8 days ago; unused's last one 10 weeks ago; and the other
    # domain's space named "unused" started 2 days ago (it must not count for the dev domain's)
    seed_studio.app_started(dev, LAST_WEEK, space_name="ran-last-week")
    seed_studio.app_started(dev, TEN_WEEKS_AGO, space_name="unused")
    seed_studio.app_started(other, datetime.now(UTC) - timedelta(days=2), space_name="unused")
    seed_studio.app_started(dev, datetime.now(UTC) - timedelta(days=1), user_name="ana", app_type="Canvas")  # no space's
    return out


def ids(spaces: dict[str, str], *names: str) -> set[str]:
    return {spaces[n].split(":space/", 1)[1] for n in names}


def sweep(lambda_context: Any) -> dict[str, Any]:
    result: dict[str, Any] = load_function("storage").handler(event("storage-schedule.json", id=str(uuid4())), lambda_context)
    return result


def test_an_unused_space_is_reported_once_with_owner_size_cost_and_how_to_delete_it(aws, spaces, deployed_env, lambda_context, monkeypatch):
    # Given the spaces, and an enforcing storage function with no grace
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    # When the scheduled sweep runs
    with recording() as calls:
        result = sweep(lambda_context)
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("kind") == "storage"}
    # Then the unused space and the one without a size are reported: kept, not acted on; the one used last week (its
    # app AWS forgot, its CreateApp CloudTrail keeps) and the other domain's started 2 days ago are not
    assert set(messages) == ids(spaces, "unused", "sizeless")
    unused = messages[next(iter(ids(spaces, "unused")))]
    assert unused["verdict"] == "keep" and unused["executed"] is False and unused["owner"] == "ana@example.com"
    reason = unused["reason"]
    assert "50 GiB" in reason and "unpriced" in reason and "$0" not in reason
    assert "no app started in 4 weeks (CloudTrail, since " in reason and "unknown" not in reason
    assert f"its last app start was {TEN_WEEKS_AGO.strftime('%Y-%m-%dT%H:%M')}" in reason  # the other domain's start did not count
    sizeless = messages[next(iter(ids(spaces, "sizeless")))]["reason"]
    assert "CloudTrail records none since" in sizeless
    assert "aws sagemaker delete-space --domain-id" in reason and "--space-name unused" in reason and "cannot be brought back" in reason
    # the running one, the one that ran today, the exempt one, the young one and the production domain's are not reported
    assert result["acted"] == [] and result["errors"] == []
    # nothing in SageMaker changed; every call is one the function's role grants
    assert not {a for a in calls.actions if a.startswith("sagemaker:") and not a.startswith(("sagemaker:List", "sagemaker:Describe"))}
    assert calls.actions <= function_actions("StorageFunction")
    assert calls.calls["sagemaker:DescribeSpace"] == 1  # only the space whose summary has no size
    assert calls.calls["cloudtrail:LookupEvents"] == 1  # one lookup for every space of the region
    # When the next sweep runs: the finding is not told again
    sweep(lambda_context)
    again = {m["id"] for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("kind") == "storage"}
    assert not again & ids(spaces, "unused", "ran-last-week", "sizeless")


def test_plan_shows_a_priced_space_and_an_unpriced_one_when_its_size_is_missing(aws, spaces, table, capsys, monkeypatch):
    # Given a price list with a Studio space storage row (the shipped copy has none: see the test above)
    shipped = pricing._table()
    row: pricing.ShippedRow = {"usd": 0.1, "source": "test row", "as_of": "2026-12-01"}
    listed = dataclasses.replace(shipped, sections={**shipped.sections, pricing.STUDIO_SPACE_GB_MONTH: {"us-east-1": {"ebs": row}}})
    monkeypatch.setattr(pricing, "_table", lambda: listed)
    monkeypatch.setenv("REAPER_TABLE", table)
    # When `reaper sweep --json` and `reaper plan` run for the storage kind
    assert main(["sweep", "--kind", "storage", "--json"]) == 0
    rows = {r["id"]: r for r in (json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip())}
    # Then the sized space costs 50 GiB x $0.10 a month, and the one AWS gives no size for is unpriced, never $0
    [unused] = ids(spaces, "unused")
    [sizeless] = ids(spaces, "sizeless")
    hourly = rows[unused]["hourly_usd"]
    assert hourly == pytest.approx(0.1 * 50 / 730, abs=1e-4) and f"${hourly * 730:,.2f}/month" in rows[unused]["reason"]
    assert rows[sizeless]["hourly_usd"] is None and "unpriced" in rows[sizeless]["reason"]
    assert "a size AWS does not say" in rows[sizeless]["reason"]
    # the production domain's space is exempt (its domain's stage), the exempt one too; the running one is kept in use
    [prod], [exempt], [running] = ids(spaces, "production"), ids(spaces, "exempt"), ids(spaces, "running")
    assert rows[prod]["verdict"] == rows[exempt]["verdict"] == "exempt"
    assert rows[running]["verdict"] == "keep" and "in use" in rows[running]["reason"]
    [last_week] = ids(spaces, "ran-last-week")
    assert rows[last_week]["verdict"] == "keep" and "in use: an app started in it 8 d" in rows[last_week]["reason"]
    assert main(["plan", "--kind", "storage"]) == 0
    out = capsys.readouterr().out
    assert unused in out and sizeless in out


def test_where_cloudtrail_refuses_a_space_used_last_week_is_reported_with_its_last_use_unknown_and_counted(
    aws, spaces, deployed_env, lambda_context, capsys, monkeypatch
):
    # Given CloudTrail's LookupEvents denied to the account (an SCP)
    monkeypatch.setattr(cloudtrail_lookup, "refused", {"123456789012"})
    # When the storage function sweeps
    result = sweep(lambda_context)
    messages = {m["id"]: m for m in drain(aws, deployed_env["REAPER_QUEUE_URL"]) if m.get("kind") == "storage"}
    # Then today's rule holds: the spaces with no app listed are reported (and the one used last week with them), each
    # saying its last use is unknown and why; the other domain's space too, as nothing says it was used
    assert set(messages) == ids(spaces, "unused", "ran-last-week", "sizeless", "other-unused")
    for m in messages.values():
        assert "last use is unknown" in m["reason"] and "LookupEvents failed (AccessDeniedException)" in m["reason"]
    assert result["errors"] == [] and result["unknown"] == 4
    # and `reaper coverage` counts them under space-last-use-unknown
    capsys.readouterr()
    assert main(["coverage", "--kind", "storage", "--json"]) == 0
    [line] = [r for r in (json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()) if r["type"] == "coverage"]
    assert {r["code"]: r["resources"] for r in line["reasons"]} == {"space-last-use-unknown": 4}


def test_the_kit_lists_a_spaces_storage_refuses_sizes_outside_the_reference_and_forgets_apps_after_24_hours(aws, sm):
    from botocore.config import Config
    from botocore.exceptions import ClientError

    # Given a domain and a space with 50 GB of storage
    dev = seed_studio.domain(sm, "kit")
    seed_studio.space(sm, dev, "sized", size_gib=50)
    # Then ListSpaces' summary carries its storage settings (API_SpaceSettingsSummary), as DescribeSpace does
    [summary] = sm.list_spaces(DomainIdEquals=dev)["Spaces"]
    assert summary["SpaceSettingsSummary"]["SpaceStorageSettings"] == {"EbsStorageSettings": {"EbsVolumeSizeInGb": 50}}
    # and a size outside 5-16384 GB is refused by the service (API_EbsStorageSettings), not only by botocore's own check
    raw = aws.client("sagemaker", config=Config(parameter_validation=False))
    for size in (4, 16_385):
        with pytest.raises(ClientError) as refused:
            seed_studio.space(raw, dev, f"bad-{size}", size_gib=size)
        assert refused.value.response["Error"]["Code"] == "ValidationException"
    # Given two apps shut down 23 h and 25 h ago
    now = datetime.now(UTC)
    for name, hours in (("recent", 23), ("old", 25)):
        seed_studio.space(sm, dev, name)
        arn = seed_studio.app(sm, dev, space_name=name)
        sagemaker_studio.set_app_times(arn, deleted=now - timedelta(hours=hours))
    # Then ListApps lists the first as Deleted and has forgotten the second, which DescribeApp no longer finds (API_DescribeApp)
    listed = {a["SpaceName"]: a["Status"] for a in sm.list_apps(DomainIdEquals=dev)["Apps"]}
    assert listed == {"recent": "Deleted"}
    with pytest.raises(ClientError) as gone:
        sm.describe_app(DomainId=dev, SpaceName="old", AppType="JupyterLab", AppName="default")
    assert gone.value.response["Error"]["Code"] == "ResourceNotFound"

"""Contract promises that hold per kind, through each kind's real function against moto: an unreadable
or odd-case protective tag exempts every kind; the mode set for one kind wins over the stack's; every
warning and action is posted with how to opt out, and every action with how to undo it.

Each kind seeds two resources its function acts on at once ("late-tag" and "plain"); the cases tag one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.kinds.ec2 import catalog
from reaper.record.message import from_record
from reaper.slack import post as slack
from reaper_devkit import seed, seed_ec2, seed_storage
from reaper_devkit import seed_studio as studio
from tests.conftest import drain, event, load_function
from tests.integration.test_safety import (
    OWNER,
    _endpoint_changed,
    _file_system_changed,
    _seed_endpoints,
    _seed_file_systems,
    _seed_training_jobs,
    _training_job_changed,
)
from tests.slack_limits import texts

ACCOUNT, REGION = "123456789012", "us-east-1"
NAMES = ("late-tag", "plain")


def _seed_notebooks(aws: Any, now: datetime) -> dict[str, str]:
    sm, cw = aws.client("sagemaker"), aws.client("cloudwatch")
    out = {}
    for name in NAMES:
        out[name] = seed.notebook(sm, name, OWNER)
        seed.activity(cw, name, now, [0.0] * 36)
    return out


def _notebook_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    return aws.client("sagemaker").describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceStatus"] != "InService"


def _seed_instances(aws: Any, now: datetime) -> dict[str, str]:
    catalog.forget()  # the per-process catalogue must not outlive its moto account
    ec2, cw = aws.client("ec2"), aws.client("cloudwatch")
    ami = seed_ec2.image(ec2)
    out = {}
    for name in NAMES:
        iid = seed_ec2.instance(ec2, "g5g.xlarge", {"Name": name, **OWNER}, now=now, ami=ami)
        seed_ec2.metrics(cw, iid, now)
        out[name] = f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{iid}"
    return out


def _instance_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    return seed_ec2.state(aws.client("ec2"), arns[name].rsplit("/", 1)[-1]) != "running"


def _seed_apps(aws: Any, now: datetime) -> dict[str, str]:
    """Idle Canvas apps (the Studio apps AWS publishes activity for: TimeSinceLastActive), one per user."""
    sm = aws.client("sagemaker")
    domain = studio.domain(sm, "lab")
    out = {}
    for name in NAMES:
        studio.user(sm, domain, name, {"ml:owner": "ana@example.com"})
        out[name] = studio.app(sm, domain, user_name=name, app_type="Canvas", tags={"ml:stage": "dev"}, created=now - timedelta(days=2))
        canvas_used(aws, out[name], now - timedelta(hours=3), now)
    return out


def canvas_used(aws: Any, arn: str, last_active: datetime, now: datetime) -> None:
    """Canvas publishes the app's TimeSinceLastActive up to `now`, its user last active at `last_active`."""
    domain, user = arn.split(":app/", 1)[1].split("/")[:2]
    studio.canvas_activity(aws.client("cloudwatch"), domain, user, last_active=last_active, now=now)


def _app_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    return studio.status(aws.client("sagemaker"), arns[name]) != "InService"


def _seed_volumes(aws: Any, now: datetime) -> dict[str, str]:
    """ML volumes attached to nothing for six weeks: the storage kind's first action snapshots them."""
    ec2 = aws.client("ec2")
    out = {}
    for name in NAMES:
        vol = seed_storage.volume(ec2, now - timedelta(weeks=6), tags={"Name": name, **OWNER})
        out[name] = f"arn:aws:ec2:{REGION}:{ACCOUNT}:volume/{vol}"
    return out


def _volume_changed(aws: Any, arns: dict[str, str], name: str) -> bool:
    vol = arns[name].rsplit("/", 1)[-1]
    snaps = aws.client("ec2").describe_snapshots(OwnerIds=["self"], Filters=[{"Name": "volume-id", "Values": [vol]}])["Snapshots"]
    return bool(snaps) or seed_storage.volume_state(aws.client("ec2"), vol) is None


@dataclass(frozen=True)
class Kit:
    function: str
    seed: Callable[[Any, datetime], dict[str, str]]
    changed: Callable[[Any, dict[str, str], str], bool]

    def id_of(self, arn: str) -> str:
        return arn.split(":app/", 1)[1] if ":app/" in arn else arn.rsplit("/", 1)[-1]


KITS = {
    "notebook": Kit("notebook", _seed_notebooks, _notebook_changed),
    "endpoint": Kit("endpoint", _seed_endpoints, _endpoint_changed),
    "fsx": Kit("fsx", _seed_file_systems, _file_system_changed),
    "training-job": Kit("training_job", _seed_training_jobs, _training_job_changed),
    "studio-app": Kit("studio_app", _seed_apps, _app_changed),
    "ec2": Kit("ec2", _seed_instances, _instance_changed),
    "storage": Kit("storage", _seed_volumes, _volume_changed),
}


def add_tags(aws: Any, arn: str, tags: dict[str, str]) -> None:
    pairs = [{"Key": k, "Value": v} for k, v in tags.items()]
    if ":fsx:" in arn:
        aws.client("fsx").tag_resource(ResourceARN=arn, Tags=pairs)
    elif ":ec2:" in arn:
        aws.client("ec2").create_tags(Resources=[arn.rsplit("/", 1)[-1]], Tags=pairs)
    else:
        aws.client("sagemaker").add_tags(ResourceArn=arn, Tags=pairs)


def sweep(kind: str, lambda_context: Any) -> dict[str, Any]:
    result: dict[str, Any] = load_function(KITS[kind].function).handler(event(f"{kind}-schedule.json"), lambda_context)
    return result


def enforcing(monkeypatch: pytest.MonkeyPatch, kind: str, grace_minutes: int) -> None:
    """Enforce, with this grace for every kind and for `kind` by name (a kind's own grace wins)."""
    monkeypatch.setenv("REAPER_MODE", "enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", str(grace_minutes))
    monkeypatch.setenv("REAPER_KIND_GRACE_MINUTES", f"{kind}={grace_minutes}")


# -- an unreadable or odd-case tag exempts every kind, and the rest of its sweep goes on -----------------
HOSTILE = {
    # case: (tags, words of the reason, posted): a bad tag is always told; a valid exemption is silent
    "whitespace": ({"reaper:exempt": "   "}, "reaper:exempt", True),
    "two-spellings": ({"reaper:idle-minutes": "90", "REAPER:IDLE-MINUTES": "30"}, "reaper:idle-minutes", True),
    "not-plain-number": ({"reaper:max-hours": "1_0"}, "reaper:max-hours", True),
    "prod-padded": ({"ml:stage": " PROD "}, "production stage", True),
    "exempt-odd-case": ({"Reaper:EXEMPT": " True "}, "", False),
}
# production file systems are out of the fsx kind's scope (never touched, never told: not ML dev storage);
SILENT_PRODUCTION = {"fsx"}


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("kind", sorted(KITS))
def test_an_unreadable_or_odd_case_protective_tag_exempts_every_kind(aws, enforce, lambda_context, kind, case):
    # Given two resources the kind acts on at once; one carries the hostile tag
    kit, (tags, words, posted) = KITS[kind], HOSTILE[case]
    arns = kit.seed(aws, datetime.now(UTC))
    add_tags(aws, arns["late-tag"], tags)
    # When its function sweeps in enforce with no grace
    result = sweep(kind, lambda_context)
    # Then the tagged one is untouched and exempt; the other was acted on
    assert not kit.changed(aws, arns, "late-tag")
    assert kit.changed(aws, arns, "plain") and result["acted"] == [kit.id_of(arns["plain"])], result
    assert result["verdicts"]["exempt"] == 1 and result["errors"] == [], result
    # and a bad tag or a production stage is told, naming why; nothing about it says it was executed
    messages = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("id") == kit.id_of(arns["late-tag"])]
    assert all(m["executed"] is False and m["verdict"] == "exempt" for m in messages), messages
    if posted and not (case == "prod-padded" and kind in SILENT_PRODUCTION):
        assert len(messages) == 1 and words in messages[0]["reason"].lower(), messages


def test_an_idle_production_studio_app_is_told_what_would_be_done(aws, enforce, lambda_context):
    kit = KITS["studio-app"]
    arns = kit.seed(aws, datetime.now(UTC))
    add_tags(aws, arns["late-tag"], {"ml:stage": "prod"})
    sweep("studio-app", lambda_context)
    assert not kit.changed(aws, arns, "late-tag")
    messages = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("id") == kit.id_of(arns["late-tag"])]
    assert len(messages) == 1 and "notify-only: would delete" in messages[0]["reason"], messages


# -- the mode can be set per kind -----------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(KITS))
def test_a_kind_set_to_dry_run_changes_nothing_in_an_enforcing_stack(aws, enforce, lambda_context, monkeypatch, kind):
    # Given an enforcing stack (no grace) whose mode for this kind is dry-run, and a warning grace for the rest
    monkeypatch.setenv("REAPER_KIND_MODES", f"{kind}=dry-run")
    kit = KITS[kind]
    arns = kit.seed(aws, datetime.now(UTC))
    before = {name: _tags_of(aws, arn) for name, arn in arns.items()}
    # When its function sweeps
    result = sweep(kind, lambda_context)
    # Then nothing changed, not even a tag, and what would be done is posted as "would"
    assert result["acted"] == []
    assert not any(kit.changed(aws, arns, name) for name in NAMES)
    assert {name: _tags_of(aws, arn) for name, arn in arns.items()} == before
    posted = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("id") in {kit.id_of(a) for a in arns.values()}]
    assert {m["id"] for m in posted} == {kit.id_of(a) for a in arns.values()}
    for m in posted:
        assert m["verdict"] == "act" and m["mode"] == "dry-run" and m["executed"] is False, m
        assert slack.render(from_record(m))[0].startswith("Would "), slack.render(from_record(m))[0]


@pytest.mark.parametrize("kind", sorted(KITS))
def test_a_kind_set_to_enforce_acts_in_a_dry_run_stack(aws, deployed_env, lambda_context, monkeypatch, kind):
    # Given the deployed default (dry-run) with this one kind enforcing, no grace
    monkeypatch.setenv("REAPER_KIND_MODES", f"{kind}=enforce")
    monkeypatch.setenv("REAPER_GRACE_MINUTES", "0")
    kit = KITS[kind]
    arns = kit.seed(aws, datetime.now(UTC))
    # When its function sweeps
    result = sweep(kind, lambda_context)
    # Then both were acted on
    assert sorted(result["acted"]) == sorted(kit.id_of(a) for a in arns.values())
    assert all(kit.changed(aws, arns, name) for name in NAMES)


def _tags_of(aws: Any, arn: str) -> dict[str, str]:
    if ":fsx:" in arn:
        pairs = aws.client("fsx").list_tags_for_resource(ResourceARN=arn)["Tags"]
    elif ":ec2:" in arn:
        pairs = aws.client("ec2").describe_tags(Filters=[{"Name": "resource-id", "Values": [arn.rsplit("/", 1)[-1]]}])["Tags"]
    else:
        pairs = aws.client("sagemaker").list_tags(ResourceArn=arn)["Tags"]
    return {t["Key"]: t["Value"] for t in pairs}


# -- every warning and action is posted with the way to opt out; every action with its undo ------------
@pytest.mark.parametrize("grace", [0, 60], ids=["act", "warn"])
@pytest.mark.parametrize("kind", sorted(KITS))
def test_every_warning_and_action_is_posted_with_how_to_opt_out_and_each_action_with_its_undo(
    aws, enforce, lambda_context, monkeypatch, kind, grace
):
    # Given two reapable resources of the kind, in enforce (with a grace period: a warning first)
    monkeypatch.setenv("REAPER_GRACE_MINUTES", str(grace))
    monkeypatch.setenv("REAPER_KIND_GRACE_MINUTES", f"{kind}={grace}")
    kit = KITS[kind]
    arns = kit.seed(aws, datetime.now(UTC))
    # When its function sweeps
    sweep(kind, lambda_context)
    # Then each is posted once with the verdict, a command to exempt it, and (for an action) how to undo it
    posted = [m for m in drain(aws, enforce["REAPER_QUEUE_URL"]) if m.get("id") in {kit.id_of(a) for a in arns.values()}]
    assert sorted(m["id"] for m in posted) == sorted(kit.id_of(a) for a in arns.values())
    for m in posted:
        assert m["verdict"] == ("act" if grace == 0 else "warn") and m["executed"] is (grace == 0), m
        arn = next(a for a in arns.values() if kit.id_of(a) == m["id"])
        assert arn in m["opt_out"] and "reaper:exempt=true" in m["opt_out"] and "reaper:snooze-until" in m["opt_out"], m
        shown = "\n".join(texts(slack.render(from_record(m))[1]))
        assert "reaper:exempt=true" in shown and arn in shown
        if grace == 0:
            assert m["undo"], f"{kind}: an action posted without its undo: {m}"
            assert "Undo" in shown

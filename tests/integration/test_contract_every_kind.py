"""Contract promises that hold per kind, through each kind's real function against moto: an unreadable
or odd-case protective tag exempts every kind; the mode set for one kind wins over the stack's; every
warning and action is posted with how to opt out, and every action with how to undo it.

Each kind seeds two resources its function acts on at once ("late-tag" and "plain"); the cases tag one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from reaper.record.message import from_record
from reaper.slack import post as slack
from tests.conftest import drain, event, load_function
from tests.helpers.contract_kits import KITS, NAMES, add_tags, tags_of
from tests.helpers.slack_limits import texts


def sweep(kind: str, lambda_context: Any) -> dict[str, Any]:
    result: dict[str, Any] = load_function(KITS[kind].function).handler(event(f"{kind}-schedule.json"), lambda_context)
    return result


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
    before = {name: tags_of(aws, arn) for name, arn in arns.items()}
    # When its function sweeps
    result = sweep(kind, lambda_context)
    # Then nothing changed, not even a tag, and what would be done is posted as "would"
    assert result["acted"] == []
    assert not any(kit.changed(aws, arns, name) for name in NAMES)
    assert {name: tags_of(aws, arn) for name, arn in arns.items()} == before
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

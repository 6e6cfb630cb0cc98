"""Per-account settings: the layering is explicit, and nothing unreadable is a step towards enforce."""

from __future__ import annotations

import json

import pytest
from cfnlint.decode.cfn_yaml import loads
from hypothesis import given
from hypothesis import strategies as st

from reaper.core.model import Mode
from reaper.core.org_settings import CentralModes, apply, layered, parse_effective, version_of
from reaper.core.settings import Settings
from reaper.org import settings as org_settings
from reaper.org import settings_changes
from tests.conftest import ROOT

ENFORCE, DRY = Mode.ENFORCE, Mode.DRY_RUN
ACCOUNT = "111122223333"


def test_a_layers_mode_replaces_everything_below_it_and_its_kind_modes_replace_that_kind():
    ou = CentralModes(ENFORCE, {"endpoint": DRY})
    account = CentralModes(None, {"notebook": DRY})
    assert layered([ou, account]) == CentralModes(ENFORCE, {"endpoint": DRY, "notebook": DRY})
    assert layered([account, CentralModes(ENFORCE)]) == CentralModes(ENFORCE, {})  # a mode above clears the kinds below


def test_the_stacks_own_modes_are_the_bottom_layer_and_each_policy_takes_what_it_says():
    own = Settings.validated({"mode": "dry-run", "kind_modes": {"ec2": "enforce"}})
    central = CentralModes(ENFORCE, {"notebook": DRY})
    followed = apply(own, central, "follow")
    assert followed.mode is ENFORCE and followed.kind_modes == {"notebook": DRY}
    assert apply(own, central, "ignore") == own
    only_dry = apply(own, central, "dry-run-only")
    assert only_dry.mode is DRY and only_dry.kind_modes == {"ec2": ENFORCE, "notebook": DRY}


def _item(body: dict) -> dict:
    return {"body": {"S": json.dumps({**body, "version": version_of(body)})}}


def test_an_effective_item_is_followed_only_when_every_part_of_it_reads():
    good = {"account": ACCOUNT, "mode": "enforce", "kind_modes": {"notebook": "dry-run"}, "sources": [], "problems": []}
    assert parse_effective(_item(good), ACCOUNT).status == "follows"
    assert parse_effective(None, ACCOUNT).status == "none"
    for bad in (
        {**good, "mode": "Enforce"},
        {**good, "kind_modes": {"notebok": "enforce"}},
        {**good, "account": "444455556666"},
        {**good, "problems": ["ou x: mode 'enforse'"]},
    ):
        assert parse_effective(_item(bad), ACCOUNT).status == "invalid", bad
    tampered = {"body": {"S": json.dumps({**good, "version": version_of({**good, "mode": "dry-run"})})}}
    assert parse_effective(tampered, ACCOUNT).status == "invalid"


@given(st.text(max_size=200))
def test_a_body_that_is_not_this_accounts_json_is_never_followed(text):
    reading = parse_effective({"body": {"S": text}}, ACCOUNT)
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if not isinstance(body, dict) or body.get("account") != ACCOUNT or body.get("version") != version_of(body):
        assert reading.status == "invalid" and reading.modes == CentralModes()


def test_an_invalid_ou_setting_reaches_its_accounts_as_a_problem_not_as_modes():
    bad = org_settings.read_setting(
        {"pk": {"S": "SET"}, "sk": {"S": "ou#ou-ab12-cdef3456"}, "mode": {"S": "enforse"}, "version": {"N": "1"}}
    )
    assert bad.modes is None and "enforse" in str(bad.problem)
    bodies = org_settings.effective_bodies([bad], lambda ou: [(ACCOUNT, 1)])
    assert bodies[ACCOUNT]["mode"] is None and bodies[ACCOUNT]["problems"]
    assert parse_effective({"body": {"S": json.dumps(bodies[ACCOUNT])}}, ACCOUNT).status == "invalid"


def test_the_nearest_ou_beats_a_farther_one_and_the_account_beats_both():
    def setting(sk: str, mode: str) -> org_settings.Setting:
        return org_settings.read_setting({"pk": {"S": "SET"}, "sk": {"S": sk}, "mode": {"S": mode}, "version": {"N": "1"}})

    far, near, own = setting("ou#r-ab12", "enforce"), setting("ou#ou-ab12-cdef3456", "dry-run"), setting(f"account#{ACCOUNT}", "enforce")
    depth = {"r-ab12": 2, "ou-ab12-cdef3456": 1}
    bodies = org_settings.effective_bodies([own, near, far], lambda ou: [(ACCOUNT, depth[ou])])
    assert [s["id"] for s in bodies[ACCOUNT]["sources"]] == ["r-ab12", "ou-ab12-cdef3456", ACCOUNT]
    assert bodies[ACCOUNT]["mode"] == "enforce"
    assert org_settings.effective_bodies([near, far], lambda ou: [(ACCOUNT, depth[ou])])[ACCOUNT]["mode"] == "dry-run"


CENTRAL = loads((ROOT / "org" / "central.yaml").read_text())["Resources"]


def _actions(logical_id: str) -> set[str]:
    actions: set[str] = set()
    for policy in CENTRAL[logical_id]["Properties"]["Policies"]:
        for stmt in policy.get("Statement", []) if isinstance(policy, dict) and "Statement" in policy else []:
            actions |= set(stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]])
    return actions


def test_the_central_settings_function_is_granted_exactly_what_its_code_calls():
    declared = set(org_settings.RECONCILE_PERMISSIONS) | set(settings_changes.LOG_PERMISSIONS) | set(settings_changes.STREAM_PERMISSIONS)
    assert _actions("CentralSettingsFunction") == declared


@pytest.mark.parametrize("resource", ["OrgSettingsTable"])
def test_members_may_only_get_their_own_effective_item_and_only_from_inside_the_organisation(resource):
    [stmt] = CENTRAL[resource]["Properties"]["ResourcePolicy"]["PolicyDocument"]["Statement"]
    assert stmt["Action"] == "dynamodb:GetItem" and stmt["Effect"] == "Allow"
    assert stmt["Condition"]["StringEquals"] == {"aws:PrincipalOrgID": {"Ref": "OrganizationId"}}
    assert stmt["Condition"]["ForAllValues:StringEquals"] == {"dynamodb:LeadingKeys": ["${aws:PrincipalAccount}"]}

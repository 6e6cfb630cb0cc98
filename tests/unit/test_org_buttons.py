"""The organisation digest's Stop now buttons (reaper.slack.digest) and the central endpoint's role (org/central.yaml)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cfnlint.decode.cfn_yaml import loads

from reaper.org import central, click
from reaper.org import interactions as central_interactions
from reaper.record.logentry import from_mapping
from reaper.slack import digest

NOW = datetime(2026, 3, 4, 15, 0, tzinfo=UTC)
CENTRAL = Path(__file__).resolve().parents[2] / "org" / "central.yaml"


def entry(name: str, **fields: Any) -> dict[str, Any]:
    base = {
        "type": "verdict",
        "kind": "notebook",
        "id": name,
        "arn": f"arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/{name}",
        "region": "us-east-1",
        "account": "111122223333",
        "verdict": "act",
        "action": "stop",
        "executed": False,
        "function": "StackSet-mlreaper-NotebookFunction",
        "hourly_usd": 1.0,
        "owner": "ana@example.com",
        "reason": "no activity for 3 h",
        "logged_at": (NOW - timedelta(hours=1)).isoformat(),
        "event_id": f"sweep-{name}",
    }
    return {**base, **fields}


def stop_buttons(message_blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b["accessory"] for b in message_blocks if b.get("accessory", {}).get("action_id") == "reaper:stop"]


def test_the_member_digest_has_no_stop_buttons():
    # entries without an account: a member's own log
    rows = [{k: v for k, v in entry("nb").items() if k != "account"}]
    payload = digest.build([from_mapping(r) for r in rows], NOW)
    assert payload.stoppable == [] and stop_buttons(digest.render(payload).blocks) == []


def test_the_organisation_digest_offers_stop_now_for_what_still_waits_and_names_its_record():
    rows = [
        entry("waiting", hourly_usd=2.5),
        entry("warned", verdict="warn"),
        entry("stopped-since", logged_at=(NOW - timedelta(hours=3)).isoformat()),
        entry("stopped-since", verdict="act", executed=True, event_id="sweep-later"),  # its latest record: changed
        entry("dry-run-no-function", function=None),
        entry("kept", verdict="keep"),
        entry("yesterday", logged_at=(NOW - timedelta(days=1)).isoformat()),
        {**entry("tally"), "type": "coverage"},
    ]
    payload = digest.build([from_mapping(r) for r in rows], NOW)
    assert [r.id for r in payload.stoppable] == ["waiting", "warned"]  # costliest first
    buttons = stop_buttons(digest.render(payload).blocks)
    values = [json.loads(b["value"]) for b in buttons]
    assert [v["arn"].rsplit("/", 1)[-1] for v in values] == ["waiting", "warned"]
    # the value names the record's key in the central log, as central.take filed it
    assert values[0]["logged"] == central.log_key(rows[0])["sk"]["S"]
    assert all(b["style"] == "danger" and b["confirm"]["deny"]["text"] == "Cancel" for b in buttons)


def test_the_organisation_digest_fits_slack_with_many_waiting_resources():
    rows = [entry(f"nb-{i:03d}", hourly_usd=float(i)) for i in range(80)]
    message = digest.render(digest.build([from_mapping(r) for r in rows], NOW))
    assert len(message.blocks) <= 50
    assert len(stop_buttons(message.blocks)) == digest.STOP_LISTED
    assert "… and 50 more" in json.dumps(message.blocks, ensure_ascii=False)


def test_a_user_written_name_is_escaped_in_the_digest_and_its_confirmation():
    rows = [entry("<!channel>&x", arn="arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/<!channel>&x")]
    blocks = digest.render(digest.build([from_mapping(r) for r in rows], NOW)).blocks
    shown = [b["text"]["text"] for b in blocks if b.get("accessory")] + [b["confirm"]["text"]["text"] for b in stop_buttons(blocks)]
    assert len(shown) == 2 and all("<!channel>" not in t and "&lt;!channel&gt;&amp;x" in t for t in shown)
    # the button's value is not shown: it carries the ARN as written, read back only to be compared


def _statements(resource: str) -> list[dict[str, Any]]:
    template = loads(CENTRAL.read_text())
    policies = template["Resources"][resource]["Properties"]["Policies"]
    return [s for p in policies for s in p["PolicyDocument"]["Statement"]]


def test_the_central_endpoint_is_granted_what_its_code_calls_and_no_more():
    # (its role is named: each member's CentralActionRole trusts that role only, tests/integration/test_org_trust.py)
    template = loads(CENTRAL.read_text())["Resources"]
    assert template["CentralInteractionsFunction"]["Properties"]["Role"] == {"Fn::GetAtt": ["CentralInteractionsRole", "Arn"]}
    assert template["CentralInteractionsRole"]["Properties"]["RoleName"] == click.INTERACTIONS_ROLE
    statements = _statements("CentralInteractionsRole")
    granted = {a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    assert granted == central_interactions.PERMISSIONS
    [assume] = [s for s in statements if s["Action"] == "sts:AssumeRole"]
    assert assume["Resource"] == {"Fn::Sub": f"arn:${{AWS::Partition}}:iam::*:role/{click.ROLE_PREFIX}*"}
    assert assume["Condition"] == {"StringEquals": {"aws:ResourceOrgID": {"Ref": "OrganizationId"}}}
    tables = {json.dumps(s["Resource"]) for s in statements if any(str(a).startswith("dynamodb:") for a in [s["Action"], *s["Action"]])}
    assert tables == {json.dumps({"Fn::GetAtt": ["OrgActionLogTable", "Arn"]})}


def test_the_central_endpoint_is_a_function_url_slack_can_reach_and_its_url_an_output():
    template = loads(CENTRAL.read_text())
    fn = template["Resources"]["CentralInteractionsFunction"]
    assert fn["Condition"] == "HasSlack" and fn["Properties"]["FunctionUrlConfig"]["AuthType"] == "NONE"
    assert fn["Properties"]["CodeUri"] == "../functions/central_interactions/"
    output = template["Outputs"]["CentralSlackInteractionsUrl"]
    assert output["Value"] == {"Fn::GetAtt": ["CentralInteractionsFunctionUrl", "FunctionUrl"]}

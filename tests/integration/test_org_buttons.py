"""Stop now in the organisation's digest (moto, the local Slack stand-in): the button the central digest
renders, clicked as Slack sends it (signed with the app's signing secret by slack_sdk's SignatureVerifier),
reaches the member account only through its CentralActionRole and acts only through the member's own gate.
Every attack is refused with a reply and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import boto3
import pytest
from slack_sdk.signature import SignatureVerifier

from reaper.core.settings import Settings
from reaper.handlers import handle_kind_event
from reaper.org import click
from reaper.org import interactions as central_interactions
from reaper.org.interactions import handle_central_request
from reaper.record.actionlog import ActionLog
from reaper.slack.bot import BotConfig, SlackBot
from reaper.slack.notifier import Notifier
from reaper.wiring import build_runtime
from reaper_devkit import seed
from reaper_devkit.calls import recording
from reaper_devkit.moto_ext.sts_trust import trust_enforced
from reaper_devkit.slack_api import SlackApi
from tests.helpers.credentials import client_as
from tests.helpers.organisation import IDLE, MEMBER_LOG, REGION, central_takes, member_session, sweep_member

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
ADMIN, OWNER = "U0ADMIN01", "U0ANA0001"


def signed(body: str, at: datetime, secret: str = SECRET) -> dict[str, Any]:
    """The function URL event Slack sends: its signature computed by slack_sdk (v0 HMAC-SHA256)."""
    ts = str(int(at.timestamp()))
    return {
        "headers": {
            "x-slack-request-timestamp": ts,
            "x-slack-signature": SignatureVerifier(secret).generate_signature(timestamp=ts, body=body),
            "content-type": "application/x-www-form-urlencoded",
        },
        "body": body,
        "isBase64Encoded": False,
        "requestContext": {"http": {"method": "POST"}},
    }


def pressed(api: SlackApi, value: str, name: str, user: str = ADMIN, action: str = "reaper:stop") -> str:
    """A block_actions payload for the digest's button with `value` (https://api.slack.com/reference/interaction-payloads/block-actions)."""
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "response_url": api.response_url(name),
        "container": {"type": "message", "message_ts": "1700000000.000100"},
        "actions": [{"type": "button", "action_id": action, "value": value}],
    }
    return urlencode({"payload": json.dumps(payload)})


def status(session: boto3.session.Session, name: str) -> str:
    return str(session.client("sagemaker").describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceStatus"])


@pytest.fixture
def hub(organisation: dict[str, Any], aws: boto3.session.Session, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:  # noqa: F811
    """Two members swept (dry-run), their records in the central log, the digest posted; each member's
    function is the real handler under an enforce runtime in that member's account."""
    now = datetime.now(UTC)
    first, second = organisation["members"][:2]
    member = member_session(first)
    seed.notebook(member.client("sagemaker"), "exempt-later", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
    seed.activity(member.client("cloudwatch"), "exempt-later", now, IDLE)
    for account in (first, second):
        sweep_member(account, organisation["bus"], now, monkeypatch)
    central_takes(aws, organisation)
    org_log = ActionLog(aws.client("dynamodb"), organisation["table"])
    enforce = Settings.validated({"mode": "enforce", "table": MEMBER_LOG})
    runtimes = {a: build_runtime(enforce, session=member_session(a), region=REGION) for a in (first, second)}
    invoked: list[tuple[str, str]] = []
    answered: list[dict[str, Any]] = []

    class MemberLambda:
        """Lambda in the member account the assumed role belongs to: the invoked function is its notebook function."""

        def __init__(self, account: str) -> None:
            self.account = account

        def invoke(self, FunctionName: str, InvocationType: str, Payload: bytes) -> None:  # noqa: N803 - boto3's names
            assert InvocationType == "Event"
            invoked.append((self.account, FunctionName))
            answered.append(handle_kind_event(json.loads(Payload), "notebook", runtimes[self.account], now + timedelta(seconds=1)))

    def lambda_for(creds: dict[str, Any], region: str) -> MemberLambda:
        assumed = client_as("sts", creds, region).get_caller_identity()["Arn"]
        assert f":assumed-role/{click.ROLE_PREFIX}{REGION}/" in assumed
        return MemberLambda(assumed.split(":")[4])

    central_sts = _interactions_role_sts(aws)

    with SlackApi({"ana@example.com": OWNER}) as api:
        bot = SlackBot.build(
            BotConfig(bot_token="xoxb-t", admin_channel="C0ADMIN", signing_secret=SECRET, admins=frozenset({ADMIN}), base_url=api.url)
        )
        assert Notifier(webhook=lambda: None, log=org_log, bot=lambda: bot).post_daily_digest()["posted"]
        [digest] = api.posts
        blocks = digest["blocks"] if isinstance(digest["blocks"], list) else json.loads(digest["blocks"])
        buttons = {
            json.loads(b["accessory"]["value"])["arn"].rsplit("/", 1)[-1]: b["accessory"]
            for b in blocks
            if b.get("accessory", {}).get("action_id") == "reaper:stop"
        }
        with trust_enforced():
            yield {
                "now": now,
                "members": (first, second),
                "api": api,
                "buttons": buttons,
                "log": org_log,
                "invoked": invoked,
                "answered": answered,
                "call": lambda event, at=now: handle_central_request(event, org_log, bot, at, central_sts, lambda_for),
            }


def _interactions_role_sts(aws: boto3.session.Session) -> Any:
    """STS as the central interactions function calls it: with its role's credentials (org/central.yaml names the
    role; a member's CentralActionRole trusts that role only)."""
    lambda_trust = {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
    role = aws.client("iam").create_role(
        RoleName=click.INTERACTIONS_ROLE, AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [lambda_trust]})
    )["Role"]["Arn"]
    creds = aws.client("sts").assume_role(RoleArn=role, RoleSessionName="central-interactions")["Credentials"]
    return client_as("sts", creds)


def clicks(hub: dict[str, Any]) -> list[dict[str, Any]]:
    now = hub["now"]
    return [e for e in hub["log"].stored_entries(now - timedelta(hours=1), now + timedelta(minutes=5)) if e.get("type") == "slack-click"]


def said(hub: dict[str, Any], name: str) -> list[str]:
    return [str(r.get("text")) for r in hub["api"].responses if r["path"].endswith(f"/{name}")]


def test_a_button_in_the_central_digest_stops_a_member_resource_and_refuses_an_exempt_one(hub):
    first, second = hub["members"]
    member = member_session(first)
    idle = f"idle-{first[-4:]}"
    # Given the digest lists every waiting resource of every member with a Stop now button
    assert {idle, "exempt-later", f"idle-{second[-4:]}"} <= set(hub["buttons"])
    assert all(b["confirm"]["confirm"]["text"] == "Stop" for b in hub["buttons"].values())
    # and the owner exempts one of them after the digest went out
    exempt_arn = json.loads(hub["buttons"]["exempt-later"]["value"])["arn"]
    member.client("sagemaker").add_tags(ResourceArn=exempt_arn, Tags=[{"Key": "reaper:exempt", "Value": "true"}])
    # When an admin clicks Stop now on both
    stop = hub["call"](signed(pressed(hub["api"], hub["buttons"][idle]["value"], "idle"), hub["now"]))
    keep = hub["call"](signed(pressed(hub["api"], hub["buttons"]["exempt-later"]["value"], "exempt"), hub["now"]))
    # Then both were handed to that member's own notebook function, and its gate decided
    assert stop["statusCode"] == keep["statusCode"] == 200
    assert hub["invoked"] == [(first, "StackSet-mlreaper-NotebookFunction")] * 2
    assert [a["stop_now"] for a in hub["answered"]] == ["act", "exempt"]
    assert status(member, idle) in ("Stopping", "Stopped") and status(member, "exempt-later") == "InService"
    # And the thread has the central hand-over and the member's result: done, or refused with the gate's reason
    # (here the member answers first: the test's Lambda runs the invoked function at once)
    handed, done = sorted(said(hub, "idle"), key=lambda text: "checks it again" in text, reverse=True)
    assert f"asked to stop `{idle}` in account {first}" in handed and "stopped, at <@U0ADMIN01>'s request" in done
    handed, refused = sorted(said(hub, "exempt"), key=lambda text: "checks it again" in text, reverse=True)
    assert "checks it again" in handed and refused.startswith("`exempt-later` was not changed:") and "exempt" in refused
    # And the central log has each click, with its account
    assert sorted((c["id"], c["account"], c["result"]) for c in clicks(hub)) == [
        ("exempt-later", first, "delegated"),
        (idle, first, "delegated"),
    ]


def test_a_forged_or_stale_request_is_refused_and_changes_nothing(hub):
    first, _ = hub["members"]
    body = pressed(hub["api"], hub["buttons"][f"idle-{first[-4:]}"]["value"], "attack")
    forged = hub["call"](signed(body, hub["now"], secret="not-the-signing-secret"))
    stale = hub["call"](signed(body, hub["now"] - timedelta(minutes=6)))
    unsigned = hub["call"]({**signed(body, hub["now"]), "headers": {"content-type": "application/x-www-form-urlencoded"}})
    assert (forged["statusCode"], forged["body"]) == (401, "bad signature")
    assert stale["statusCode"] == 401 and stale["body"].startswith("stale request")
    assert unsigned["statusCode"] == 401
    assert hub["invoked"] == [] and clicks(hub) == [] and said(hub, "attack") == []
    assert status(member_session(first), f"idle-{first[-4:]}") == "InService"


def test_a_replayed_click_is_answered_and_not_forwarded_again(hub):
    first, _ = hub["members"]
    request = signed(pressed(hub["api"], hub["buttons"][f"idle-{first[-4:]}"]["value"], "replay"), hub["now"])
    assert hub["call"](request)["statusCode"] == 200
    again = hub["call"](request, hub["now"] + timedelta(seconds=30))
    assert again["statusCode"] == 200
    assert len(hub["invoked"]) == 1
    assert sorted(c["result"] for c in clicks(hub)) == ["delegated", "replayed"]


def _value(hub: dict[str, Any], name: str, **changes: str) -> str:
    value = json.loads(hub["buttons"][name]["value"])
    return json.dumps({**value, **changes})


def test_a_button_naming_an_account_or_resource_no_member_logged_is_refused_without_calling_any_account(hub):
    first, second = hub["members"]
    idle = f"idle-{first[-4:]}"
    arn = json.loads(hub["buttons"][idle]["value"])["arn"]
    outsider = arn.replace(f":{first}:", ":999999999999:")  # an account outside the organisation
    other_member = arn.replace(f":{first}:", f":{second}:")  # a member that never logged this resource
    never = arn.replace(idle, "never-logged")
    values = {
        "outsider": _value(hub, idle, arn=outsider),
        "other-member": _value(hub, idle, arn=other_member),
        "never-logged": _value(hub, idle, arn=never),
        "no-record": _value(hub, idle, logged=f"{hub['now']:%Y-%m-%d}T00:00:00.000000Z#{first}#notebook#nope#x"),
        "old-record": _value(hub, idle, logged="2020-01-01T00:00:00.000000Z" + json.loads(hub["buttons"][idle]["value"])["logged"][27:]),
    }
    for name, value in values.items():
        result = hub["call"](signed(pressed(hub["api"], value, name), hub["now"]))
        assert result["statusCode"] == 200, name
        [reply] = said(hub, name)
        assert "no record a member of the organisation sent this week" in reply and "nothing was asked of any account" in reply, name
    assert hub["invoked"] == []
    assert {c["result"] for c in clicks(hub)} == {"refused"} and len(clicks(hub)) == len(values)
    assert status(member_session(first), idle) == "InService"


def test_a_member_whose_role_does_not_trust_the_central_account_is_refused(hub):
    _, second = hub["members"]
    # Given the second member's stack trusts another central account
    member_session(second).client("iam").update_assume_role_policy(
        RoleName=f"{click.ROLE_PREFIX}{REGION}",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::210987654321:root"}, "Action": "sts:AssumeRole"}],
            }
        ),
    )
    # When an admin clicks its resource's Stop now
    with recording() as calls:
        result = hub["call"](signed(pressed(hub["api"], hub["buttons"][f"idle-{second[-4:]}"]["value"], "untrusted"), hub["now"]))
    # (the central endpoint's calls: the claim, the record the button names, the AssumeRole, the click's record; all granted)
    assert calls.operations == ["PutItem", "GetItem", "AssumeRole", "PutItem"]
    assert calls.actions <= central_interactions.PERMISSIONS
    # Then the AssumeRole is refused, and so is the click, with that reason; nothing was invoked or changed
    assert result["statusCode"] == 200
    [reply] = said(hub, "untrusted")
    assert f"Account {second} does not let this central account act" in reply and "AccessDenied" in reply
    assert hub["invoked"] == [] and [c["result"] for c in clicks(hub)] == ["refused"]
    assert status(member_session(second), f"idle-{second[-4:]}") == "InService"


def test_only_an_admin_and_only_stop_now(hub):
    first, _ = hub["members"]
    value = hub["buttons"][f"idle-{first[-4:]}"]["value"]
    owner = hub["call"](signed(pressed(hub["api"], value, "owner", user=OWNER), hub["now"]))
    snooze = hub["call"](signed(pressed(hub["api"], value, "snooze", action="reaper:snooze"), hub["now"]))
    assert owner["statusCode"] == snooze["statusCode"] == 200
    assert "is not an mlreaper admin of the organisation" in said(hub, "owner")[0]
    assert "acts only through Stop now" in said(hub, "snooze")[0]
    assert hub["invoked"] == [] and [c["result"] for c in clicks(hub)] == ["refused", "refused"]
    assert status(member_session(first), f"idle-{first[-4:]}") == "InService"

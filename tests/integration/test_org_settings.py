"""Per-account settings across the organisation (moto, three member accounts in one OU): the central
account sets an OU's mode and one account's kind mode with `reaper org set`; the central settings
function posts and logs each change and writes each account's effective item; each member's next
invocation follows it. An invalid setting, a cleared one, a forged or foreign read, an unreadable
table and an account that refuses central settings each leave the member on its own modes, and say so.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from cfnlint.decode.cfn_yaml import loads

from reaper.cli.main import main
from reaper.core.settings import Settings
from reaper.handlers import handle_kind_event
from reaper.org import central, settings_changes
from reaper.org.settings import organizations_accounts_under
from reaper.record.actionlog import ActionLog, create_table
from reaper.wiring import build_runtime
from reaper_devkit import seed
from reaper_devkit.slack_api import SlackApi
from tests.conftest import ROOT, drain, load_function
from tests.helpers.credentials import outsider
from tests.helpers.organisation import CENTRAL, IDLE, MEMBER_LOG, REGION, member_session
from tests.helpers.slack_limits import assert_within_limits

NOTEBOOK_SCHEDULE = json.loads((ROOT / "events" / "notebook-schedule.json").read_text())


@pytest.fixture
def hub(
    organisation: dict[str, Any],  # noqa: F811 - the imported fixture
    aws: boto3.session.Session,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    """The organisation, its OU id, and the settings table's resource policy put as org/central.yaml declares it
    (moto's CloudFormation stores no table policy)."""
    orgs = aws.client("organizations")
    root = orgs.list_roots()["Roots"][0]["Id"]
    [ou] = orgs.list_organizational_units_for_parent(ParentId=root)["OrganizationalUnits"]
    arn = organisation["settings_table"]
    declared = loads((ROOT / "org" / "central.yaml").read_text())["Resources"]["OrgSettingsTable"]["Properties"]["ResourcePolicy"]
    [stmt] = declared["PolicyDocument"]["Statement"]
    policy = {**stmt, "Resource": arn, "Condition": {**stmt["Condition"], "StringEquals": {"aws:PrincipalOrgID": organisation["org_id"]}}}
    aws.client("dynamodb").put_resource_policy(ResourceArn=arn, Policy=json.dumps({"Version": "2012-10-17", "Statement": [policy]}))
    stream = aws.client("dynamodb").describe_table(TableName=arn)["Table"]["LatestStreamArn"]
    streams = aws.client("dynamodbstreams")
    shard = streams.describe_stream(StreamArn=stream)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=stream, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    monkeypatch.setenv("REAPER_ORG_SETTINGS_TABLE", arn)
    return {**organisation, "ou": ou["Id"], "root": root, "cursor": [iterator], "posted": []}


def _central_function(aws: boto3.session.Session, hub: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The central settings function, handed the stream records since the last call (its event source
    mapping's filter: the SET items only, as org/central.yaml declares it)."""
    streams = aws.client("dynamodbstreams")
    got = streams.get_records(ShardIterator=hub["cursor"][0])
    hub["cursor"][0] = got["NextShardIterator"]
    records = [r for r in got["Records"] if r["dynamodb"]["Keys"]["pk"]["S"] == "SET"]
    event = {"Records": [{**r, "eventSource": "aws:dynamodb"} for r in records]}
    org_log = ActionLog(aws.client("dynamodb"), hub["table"])
    accounts_under = organizations_accounts_under(aws.client("organizations"))
    return settings_changes.handle(
        event, aws.client("dynamodb"), hub["settings_table"], org_log, accounts_under, hub["posted"].append, CENTRAL, now
    )


def _member(account: str, hub: dict[str, Any], policy: str = "follow", table_arn: str | None = None) -> dict[str, Any]:
    """A member stack: its log, its Slack queue, an idle notebook, and its runtime (own Mode: dry-run, the default)."""
    member = member_session(account)
    create_table(member.client("dynamodb"), MEMBER_LOG)
    queue = member.client("sqs").create_queue(QueueName="mlreaper-notify")["QueueUrl"]
    seed.notebook(member.client("sagemaker"), f"idle-{account[-4:]}", {"ml:owner": "ana@example.com", "ml:stage": "dev"})
    settings = Settings.validated(
        {
            "table": MEMBER_LOG,
            "queue_url": queue,
            "central_event_bus_arn": hub["bus"],
            "central_settings_table_arn": table_arn or hub["settings_table"],
            "central_settings": policy,
            "account_id": account,
        }
    )
    return {"account": account, "session": member, "queue": queue, "rt": build_runtime(settings, session=member, region=REGION)}


def _sweep(m: dict[str, Any], now: datetime) -> tuple[str, list[dict[str, Any]]]:
    """The member's scheduled notebook sweep, as its function runs it: (the idle notebook's verdict, its Slack notices)."""
    seed.activity(m["session"].client("cloudwatch"), f"idle-{m['account'][-4:]}", now, IDLE)
    event = {**NOTEBOOK_SCHEDULE, "id": str(uuid.uuid4()), "account": m["account"], "time": now.isoformat()}
    summary = handle_kind_event(event, "notebook", m["rt"], now)
    verdicts = {v for v, n in summary["verdicts"].items() if n and v in ("act", "warn")}
    notices = [p for p in drain(m["session"], m["queue"]) if p.get("type") == "notice" and p.get("kind") == "org-settings"]
    assert not summary["acted"]  # the first enforce verdict is a warning (GraceMinutes), dry-run changes nothing
    return ("warn" if "warn" in verdicts else "act (would)"), notices


def _org_set(*args: str) -> int:
    return main(["org", "set", *args])


def test_an_ou_in_enforce_and_one_accounts_kind_in_dry_run_are_followed_by_each_members_next_sweep(hub, aws, capsys):
    # Given three member stacks of the OU in their own default, dry-run
    now = datetime.now(UTC)
    a, b, c = (_member(acct, hub) for acct in hub["members"])
    assert [_sweep(m, now)[0] for m in (a, b, c)] == ["act (would)"] * 3
    # When the central admin sets the OU to enforce and account A's notebooks to dry-run
    assert _org_set("--ou", hub["ou"], "--mode", "enforce", "--reason", "sandbox OU: reap for real") == 0
    assert _org_set("--account", a["account"], "--kind-mode", "notebook=dry-run", "--reason", "A demos on Friday", "--json") == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["version"] == 1
    done = _central_function(aws, hub, now)
    # Then each change was posted once to the central channel and recorded in the organisation's log
    assert sorted(done["written"]) == sorted(hub["members"])
    assert sorted(n.title for n in hub["posted"]) == [
        f"Central settings for OU {hub['ou']}: mode enforce",
        f"Central settings for account {a['account']}: notebook dry-run",
    ]
    assert all("by arn:aws:" in n.text and "why:" in n.text for n in hub["posted"])
    logged = [
        e for e in ActionLog(aws.client("dynamodb"), hub["table"]).stored_entries(now - timedelta(minutes=1), now + timedelta(minutes=1))
    ]
    assert sorted(e["title"] for e in logged if e.get("kind") == "org-settings") == sorted(n.title for n in hub["posted"])
    # And the next sweep in each member follows them: B and C enforce (a warning first), A's notebooks stay dry-run
    later = now + timedelta(minutes=15)
    results = {m["account"]: _sweep(m, later) for m in (a, b, c)}
    assert {acct: verdict for acct, (verdict, _) in results.items()} == {
        a["account"]: "act (would)",
        b["account"]: "warn",
        c["account"]: "warn",
    }
    # And each member said so once, in its own Slack (and, forwarded, in the central log)
    for m in (a, b, c):
        [notice] = results[m["account"]][1]
        assert notice["title"] == f"Central settings apply in account {m['account']} ({REGION})"
        assert hub["ou"] in notice["text"]
    assert "notebook dry-run" in results[a["account"]][1][0]["details"]["modes"]
    assert _sweep(b, later + timedelta(minutes=15))[1] == []  # nothing changed: nothing said again
    forwarded = [central.take(aws.client("dynamodb"), hub["table"], e) for e in drain(aws, hub["queue"])]
    assert {f["account"] for f in forwarded if f["kind"] == "org-settings"} == set(hub["members"])


def test_an_invalid_setting_is_refused_whole_and_the_member_keeps_its_own_modes_and_says_so(hub, aws):
    # Given the OU in enforce, followed by B
    now = datetime.now(UTC)
    b = _member(hub["members"][1], hub)
    assert _org_set("--ou", hub["ou"], "--mode", "enforce", "--reason", "sandbox") == 0
    _central_function(aws, hub, now)
    assert _sweep(b, now)[0] == "warn"
    # When someone writes B's setting by hand in the console, with a typo
    aws.client("dynamodb").put_item(
        TableName=hub["settings_table"],
        Item={"pk": {"S": "SET"}, "sk": {"S": f"account#{b['account']}"}, "mode": {"S": "enforse"}, "version": {"N": "1"}},
    )
    _central_function(aws, hub, now)
    # Then the central channel is told it is invalid and not applied
    assert "INVALID" in hub["posted"][-1].title and "enforse" in hub["posted"][-1].text
    # And B goes back to its own modes (dry-run), not the OU's enforce, and says why, once
    verdict, [notice] = _sweep(b, now + timedelta(minutes=15))
    assert verdict == "act (would)"
    assert notice["title"].startswith("Central settings refused as invalid") and "enforse" in notice["text"]
    assert "nothing was escalated" in notice["text"]
    assert _sweep(b, now + timedelta(minutes=30))[1] == []


def test_a_cleared_setting_returns_the_member_to_its_own_modes(hub, aws):
    now = datetime.now(UTC)
    c = _member(hub["members"][2], hub)
    assert _org_set("--ou", hub["ou"], "--mode", "enforce", "--reason", "sandbox") == 0
    _central_function(aws, hub, now)
    assert _sweep(c, now)[0] == "warn"
    # When the admin clears the OU's setting
    assert _org_set("--ou", hub["ou"], "--clear", "--reason", "back to the stacks' own") == 0
    done = _central_function(aws, hub, now)
    assert sorted(done["removed"]) == sorted(hub["members"])
    assert hub["posted"][-1].title == f"Central settings cleared for OU {hub['ou']}"
    # Then the member's next sweep is its own dry-run again, and it says so
    verdict, [notice] = _sweep(c, now + timedelta(minutes=15))
    assert verdict == "act (would)" and notice["title"].startswith("Central settings removed")


def test_an_account_that_refuses_central_settings_keeps_its_own_and_reports_what_was_asked(hub, aws):
    now = datetime.now(UTC)
    c = _member(hub["members"][2], hub, policy="ignore")
    assert _org_set("--ou", hub["ou"], "--mode", "enforce", "--reason", "sandbox") == 0
    _central_function(aws, hub, now)
    verdict, [notice] = _sweep(c, now)
    assert verdict == "act (would)"
    assert notice["title"].startswith("Central settings refused by this stack") and "CentralSettings=ignore" in notice["text"]


def test_forged_or_foreign_reads_and_writes_of_the_settings_table_are_refused(hub, aws):
    now = datetime.now(UTC)
    a_account, b_account = hub["members"][0], hub["members"][1]
    assert _org_set("--ou", hub["ou"], "--mode", "enforce", "--reason", "sandbox") == 0
    _central_function(aws, hub, now)
    arn = hub["settings_table"]
    # A principal outside the organisation can read no item
    foreign = outsider("dynamodb")
    with pytest.raises(foreign.exceptions.ClientError, match="AccessDenied"):
        foreign.get_item(TableName=arn, Key={"pk": {"S": "999999999999"}, "sk": {"S": "effective"}})
    # A member reads its own item, but not another member's, and can write none (not even a forged one of its own)
    member = member_session(a_account).client("dynamodb")
    assert member.get_item(TableName=arn, Key={"pk": {"S": a_account}, "sk": {"S": "effective"}})["Item"]
    with pytest.raises(member.exceptions.ClientError, match="AccessDenied"):
        member.get_item(TableName=arn, Key={"pk": {"S": b_account}, "sk": {"S": "effective"}})
    with pytest.raises(member.exceptions.ClientError, match="AccessDenied"):
        member.put_item(TableName=arn, Item={"pk": {"S": a_account}, "sk": {"S": "effective"}, "body": {"S": "{}"}})
    # And an item copied under another account's key (A's body at B's key) is refused by B: it keeps its own modes
    central_db = aws.client("dynamodb")
    a_item = central_db.get_item(TableName=arn, Key={"pk": {"S": a_account}, "sk": {"S": "effective"}})["Item"]
    central_db.put_item(TableName=arn, Item={**a_item, "pk": {"S": b_account}})
    b = _member(b_account, hub)
    verdict, [notice] = _sweep(b, now)
    assert verdict == "act (would)" and f"names account '{a_account}'" in notice["text"]


def test_an_unreadable_settings_table_changes_nothing_and_is_said_once(hub, aws):
    now = datetime.now(UTC)
    missing = hub["settings_table"].replace("-settings", "-gone")
    b = _member(hub["members"][1], hub, table_arn=missing)
    assert _org_set("--ou", hub["ou"], "--mode", "enforce", "--reason", "sandbox") == 0
    _central_function(aws, hub, now)
    verdict, [notice] = _sweep(b, now)
    assert verdict == "act (would)" and notice["title"].startswith("Central settings could not be read")
    assert _sweep(b, now + timedelta(minutes=15)) == ("act (would)", [])


def test_the_central_settings_function_posts_each_change_to_the_central_admin_channel(hub, aws, monkeypatch, lambda_context):
    # Given the central settings function as deployed: the organisation's log, the settings table, a bot-mode
    # Slack secret whose Web API is the local stand-in
    with SlackApi({}) as api:
        secret = {"bot_token": "xoxb-central", "admin_channel": "C0CENTRAL", "base_url": api.url}
        arn = aws.client("secretsmanager").create_secret(Name="mlreaper-central-slack", SecretString=json.dumps(secret))["ARN"]
        for name, value in {"REAPER_ORG_TABLE": hub["table"], "REAPER_SLACK_SECRET_ARN": arn, "REAPER_ACCOUNT_ID": CENTRAL}.items():
            monkeypatch.setenv(name, value)
        app = load_function("central_settings")
        # When an admin sets an OU's mode with a reason that tries to ping the channel, and the stream hands the change in
        assert _org_set("--ou", hub["ou"], "--mode", "enforce", "--reason", "sandbox <!channel> <@U0EVE0001>") == 0
        streams = aws.client("dynamodbstreams")
        got = streams.get_records(ShardIterator=hub["cursor"][0])
        event = {"Records": [{**r, "eventSource": "aws:dynamodb"} for r in got["Records"] if r["dynamodb"]["Keys"]["pk"]["S"] == "SET"]}
        result = app.handler(event, lambda_context)
        posts = list(api.posts)
    # Then the notice arrived in the central admin channel, rendered as a notice, its reason escaped
    assert result["told"] == [f"Central settings for OU {hub['ou']}: mode enforce"]
    [post] = posts
    blocks = post["blocks"] if isinstance(post["blocks"], list) else json.loads(post["blocks"])
    assert post["channel"] == "C0CENTRAL" and post["text"].startswith(f"Central settings for OU {hub['ou']}: mode enforce")
    assert "why: sandbox &lt;!channel&gt; &lt;@U0EVE0001&gt;" in blocks[0]["text"]["text"]
    assert "<!channel>" not in json.dumps(post) and "<@U0EVE0001>" not in json.dumps(post)
    assert_within_limits({"text": post["text"], "blocks": blocks})
    # And the organisation's log has it, once
    logged = ActionLog(aws.client("dynamodb"), hub["table"]).entries(datetime.now(UTC) - timedelta(minutes=5), datetime.now(UTC))
    assert [e.title for e in logged if e.kind == "org-settings"] == result["told"]

"""Cost Anomaly Detection to the owner (AnomalyAlerts=on): the monitors set up once by the notifier's
schedule, and each alert (the SNS message the user guide documents) posted through the real notifier
handler to the owner of its project in the kit's Slack, once per AnomalyId, with AWS's root causes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.aws import anomalies
from reaper_devkit import seed, seed_training
from reaper_devkit.moto_ext import cost_anomaly, sagemaker_jobs
from reaper_devkit.slack_api import SlackApi
from tests.conftest import load_function

ACCOUNT = "123456789012"
ADMIN = "C0ADMIN"
USERS = {"ana@example.com": "U0ANA0001"}
CAUSE = {
    "linkedAccount": ACCOUNT,
    "linkedAccountName": "ml-dev",
    "region": "us-east-1",
    "service": "Amazon SageMaker",
    "usageType": "USE1-Train:ml.p4d.24xlarge",
    "impact": {"contribution": 601},
}


@pytest.fixture(autouse=True)
def fresh_kit() -> Any:
    cost_anomaly.reset()
    yield
    cost_anomaly.reset()


def sns(topic: str, message: dict[str, Any], message_id: str) -> dict[str, Any]:
    """How SNS hands a message to Lambda (https://docs.aws.amazon.com/lambda/latest/dg/with-sns.html)."""
    record = {"MessageId": message_id, "TopicArn": topic, "Type": "Notification", "Message": json.dumps(message)}
    return {"Records": [{"EventSource": "aws:sns", "EventVersion": "1.0", "Sns": record}]}


@pytest.fixture
def notifier(aws: Any, table: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The deployed notifier with AnomalyAlerts=on, bot mode against the kit's Slack."""
    api = SlackApi(users=USERS).__enter__()
    topic = aws.client("sns").create_topic(Name="mlreaper-anomalies")["TopicArn"]
    secret = json.dumps({"bot_token": "xoxb-t", "admin_channel": ADMIN, "base_url": api.url})
    arn = aws.client("secretsmanager").create_secret(Name="mlreaper-slack", SecretString=secret)["ARN"]
    for k, v in {"REAPER_SLACK_SECRET_ARN": arn, "REAPER_TABLE": table, "REAPER_ANOMALY_TOPIC_ARN": topic}.items():
        monkeypatch.setenv(k, v)
    app = load_function("notifier")
    app.topic, app.api = topic, api
    yield app
    api.__exit__(None, None, None)


def set_up(app: Any) -> dict[str, str]:
    monitors: dict[str, str] = app.NOTIFIER.setup_anomalies()["monitors"]
    return monitors


def test_setup_creates_the_tag_monitors_and_one_subscription_once(notifier: Any) -> None:
    # Given AnomalyAlerts=on, When the daily schedule sets up twice
    first = notifier.NOTIFIER.setup_anomalies()
    second = notifier.NOTIFIER.setup_anomalies()
    # Then two DIMENSIONAL TAG monitors and one IMMEDIATE SNS subscription exist, made by the first only
    made = cost_anomaly.monitors(ACCOUNT)
    assert sorted(m["MonitorSpecification"]["Tags"]["Key"] for m in made) == ["ml:owner", "ml:project"]
    assert {m["MonitorDimension"] for m in made} == {"TAG"}
    subs = cost_anomaly.subscriptions(ACCOUNT)
    assert len(subs) == 1 and subs[0]["Frequency"] == "IMMEDIATE"
    assert subs[0]["Subscribers"] == [{"Type": "SNS", "Address": notifier.topic}]
    assert sorted(subs[0]["MonitorArnList"]) == sorted(first["monitors"].values())
    assert len(first["created"]) == 3 and second["created"] == []
    assert cost_anomaly.calls.count("CreateAnomalyMonitor") == 2 and cost_anomaly.calls.count("CreateAnomalySubscription") == 1


def test_an_anomaly_on_a_project_reaches_its_owner_once_with_its_cause(notifier: Any, sm: Any, lambda_context: Any) -> None:
    # Given a project whose resources name ana as owner (two of three), and its monitor
    seed.notebook(sm, "nb-1", {"ml:project": "vision", "ml:owner": "ana@example.com"})
    seed.notebook(sm, "nb-2", {"ml:project": "vision", "ml:owner": "ana@example.com"})
    seed.notebook(sm, "nb-3", {"ml:project": "vision", "ml:owner": "bo@example.com"})
    monitor = set_up(notifier)["ml:project"]
    alert = cost_anomaly.alert(ACCOUNT, monitor, "vision", 1001.0, [CAUSE], anomaly_id="an-1", actual=1301.0, expected=300.0)
    # When SNS delivers the alert, and delivers it again under another message id
    first = notifier.handler(sns(notifier.topic, alert, "m-1"), lambda_context)
    again = notifier.handler(sns(notifier.topic, alert, "m-2"), lambda_context)
    # Then ana is told once, with the cost and AWS's root cause; the admins are not
    posts = notifier.api.posts_to("U0ANA0001")
    assert first == {"posted": ["an-1"]} and again == {"posted": []}
    assert len(posts) == 1 and notifier.api.posts_to(ADMIN) == []
    text = json.dumps(posts[0]["blocks"])
    assert "$1,001.00 more than expected" in text and "ml:project vision" in text
    assert (
        "service Amazon SageMaker" in text and "usage type USE1-Train:ml.p4d.24xlarge" in text and "account 123456789012 (ml-dev)" in text
    )


def test_an_anomaly_on_a_project_without_an_owner_reaches_the_admin_channel(notifier: Any, sm: Any, lambda_context: Any) -> None:
    # Given a project none of whose resources names an owner
    seed.notebook(sm, "nb-x", {"ml:project": "orphan"})
    monitor = set_up(notifier)["ml:project"]
    alert = cost_anomaly.alert(ACCOUNT, monitor, "orphan", 250.0, [CAUSE], anomaly_id="an-2")
    # When the alert arrives
    notifier.handler(sns(notifier.topic, alert, "m-3"), lambda_context)
    # Then the admin channel has it, with its cause
    posts = notifier.api.posts_to(ADMIN)
    assert len(posts) == 1 and "Amazon SageMaker" in json.dumps(posts[0]["blocks"])
    assert "no `ml:owner` tag" in json.dumps(posts[0]["blocks"])


def test_an_owner_monitor_names_the_owner_and_every_aws_value_is_escaped(notifier: Any, lambda_context: Any) -> None:
    # Given an anomaly on the ml:owner monitor whose causes carry Slack's control characters
    monitor = set_up(notifier)["ml:owner"]
    hostile = {**CAUSE, "usageType": "<!channel> & <https://evil|click>"}
    alert = cost_anomaly.alert(ACCOUNT, monitor, "ana@example.com", 80.0, [hostile], anomaly_id="an-3")
    # When it arrives
    notifier.handler(sns(notifier.topic, alert, "m-4"), lambda_context)
    # Then ana has it, and nothing AWS sent became markup
    text = json.dumps(notifier.api.posts_to("U0ANA0001")[0]["blocks"])
    assert "<!channel>" not in text and "&lt;!channel&gt; &amp; &lt;https://evil|click&gt;" in text


def test_the_digest_lists_the_days_anomalies_once(notifier: Any, sm: Any, lambda_context: Any) -> None:
    # Given one anomaly delivered twice, and a training run of vision this week
    seed.notebook(sm, "nb-1", {"ml:project": "vision", "ml:owner": "ana@example.com"})
    now = datetime.now(UTC)
    run = seed_training.training_job(sm, "vision-run", now, hours_ago=3, tags={"ml:project": "vision"})
    sagemaker_jobs.bill(run, now - timedelta(hours=1), 3600, 3600)
    monitor = set_up(notifier)["ml:project"]
    alert = cost_anomaly.alert(ACCOUNT, monitor, "vision", 1001.0, [CAUSE], anomaly_id="an-1")
    for mid in ("m-1", "m-2"):
        notifier.handler(sns(notifier.topic, alert, mid), lambda_context)
    # When the digest is posted
    result = notifier.NOTIFIER.post_daily_digest()
    # Then it lists the anomaly once, with its cause and owner
    assert result["digest"]["anomalies_total"] == 1
    line = result["digest"]["anomalies"][0]
    assert "vision" in line and "Amazon SageMaker" in line and "ana@example.com" in line
    # and the week's unit costs in a line
    assert result["digest"]["units"].startswith("vision $") and "per training run" in result["digest"]["units"]
    assert "Unit costs:" in json.dumps(notifier.api.posts_to(ADMIN)[-1]["blocks"])


def test_an_sns_message_that_is_not_an_alert_is_never_posted(notifier: Any, lambda_context: Any) -> None:
    set_up(notifier)
    result = notifier.handler(sns(notifier.topic, {"hello": "world"}, "m-9"), lambda_context)
    assert result == {"posted": []} and notifier.api.posts_to(ADMIN) == []


def test_the_kit_refuses_what_the_api_reference_refuses(aws: Any) -> None:
    ce = aws.client("ce", region_name=anomalies.CE_REGION)
    with pytest.raises(ce.exceptions.ClientError, match="ValidationException"):
        ce.create_anomaly_monitor(AnomalyMonitor={"MonitorName": "m", "MonitorType": "DIMENSIONAL", "MonitorDimension": "TAG"})
    arn = ce.create_anomaly_monitor(AnomalyMonitor={"MonitorName": "s", "MonitorType": "DIMENSIONAL", "MonitorDimension": "SERVICE"})[
        "MonitorArn"
    ]
    sns_daily = {
        "SubscriptionName": "x",
        "MonitorArnList": [arn],
        "Subscribers": [{"Type": "SNS", "Address": "arn:aws:sns:us-east-1:123456789012:t"}],
        "Frequency": "DAILY",
        "ThresholdExpression": {
            "Dimensions": {"Key": "ANOMALY_TOTAL_IMPACT_ABSOLUTE", "MatchOptions": ["GREATER_THAN_OR_EQUAL"], "Values": ["1"]}
        },
    }
    with pytest.raises(ce.exceptions.ClientError, match="ValidationException"):
        ce.create_anomaly_subscription(AnomalySubscription=sns_daily)
    unknown = {**sns_daily, "Frequency": "IMMEDIATE", "MonitorArnList": [arn[:-4] + "0000"]}
    with pytest.raises(ce.exceptions.UnknownMonitorException):
        ce.create_anomaly_subscription(AnomalySubscription=unknown)


def test_a_message_from_another_topic_is_refused(notifier: Any, lambda_context: Any) -> None:
    monitor = set_up(notifier)["ml:owner"]
    alert = cost_anomaly.alert(ACCOUNT, monitor, "ana@example.com", 80.0, [CAUSE], anomaly_id="an-4")
    with pytest.raises(Exception, match="not the anomaly topic"):
        notifier.handler(sns("arn:aws:sns:us-east-1:123456789012:someone-else", alert, "m-5"), lambda_context)
    assert notifier.api.posts_to("U0ANA0001") == []

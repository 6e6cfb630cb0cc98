"""`sam deploy --guided` as docs/deploy.md tells a new admin to run it: every parameter can be answered.

SAM asks for a NoEcho parameter with a hidden prompt that has no default (samcli
commands/deploy/guided_context.py, `prompt(..., hide_input=True)` without `default=`), and click
re-asks on an empty answer. So Enter cannot skip the optional `SlackWebhookUrl`: the template takes
`none` for "no Slack", and docs/deploy.md says to type it.
"""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from reaper_devkit.template import ROOT, condition_value, load

T = load()


def test_an_empty_answer_to_a_hidden_prompt_is_asked_again():
    # The behaviour this file works around, as click (SAM's prompt library) has it
    @click.command()
    def ask() -> None:
        click.echo(f"got {click.prompt('Parameter SlackWebhookUrl', type=click.STRING, hide_input=True)!r}")

    result = CliRunner().invoke(ask, input="\n\nnone\n")
    assert result.exit_code == 0 and result.output.count("Parameter SlackWebhookUrl") == 3 and "got 'none'" in result.output


@pytest.mark.parametrize(("answer", "slack"), [("none", False), ("", False), ("https://hooks.slack.com/services/T0/B0/abc", True)])
def test_none_skips_slack_as_empty_does(answer, slack):
    param = T["Parameters"]["SlackWebhookUrl"]
    assert re.fullmatch(param["AllowedPattern"], answer)
    assert condition_value(T["Conditions"]["HasSlackUrl"], {"SlackWebhookUrl": answer}) is slack


@pytest.mark.parametrize("answer", ["None", "NONE", " none", "no", "-"])
def test_other_non_answers_are_refused_by_cloudformation(answer):
    assert not re.fullmatch(T["Parameters"]["SlackWebhookUrl"]["AllowedPattern"], answer)


def test_every_hidden_parameter_has_a_typed_way_to_skip_it_and_the_manual_gives_it():
    readme = (ROOT / "docs" / "deploy.md").read_text()
    hidden = [name for name, p in T["Parameters"].items() if p.get("NoEcho")]
    assert hidden == ["SlackWebhookUrl"]
    for name in hidden:
        assert re.fullmatch(T["Parameters"][name]["AllowedPattern"], "none")
        assert f"`{name}`" in readme and "type `none`" in readme


def test_each_function_url_without_iam_auth_is_answered_in_the_manual():
    # SAM asks "<Function> Function Url has no authentication. Is this okay? [y/N]" and N (Enter) stops the deploy
    readme = " ".join((ROOT / "docs" / "deploy.md").read_text().split())
    open_urls = [
        name
        for name, r in T["Resources"].items()
        if r.get("Type") == "AWS::Serverless::Function" and (r["Properties"].get("FunctionUrlConfig") or {}).get("AuthType") == "NONE"
    ]
    assert open_urls == ["InteractionsFunction"]
    for name in open_urls:
        assert f'answer `y` to "{name} Function Url has no authentication. Is this okay? [y/N]"' in readme

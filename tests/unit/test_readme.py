"""The README is the manual: every template parameter, every REAPER_* variable the code reads or the
stack sets, and every make target users run is in it; the environment table says which parameter
sets each variable, as template.yaml does; the deploy prerequisites it states hold."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reaper.core.settings import ENV_VARS, KINDS
from reaper_devkit.template import ROOT, load

README = (ROOT / "README.md").read_text()
T = load()
PARAMETERS = sorted(T["Parameters"])
# the targets a user runs (the others in .PHONY are the steps they are made of)
USER_TARGETS = ("demo", "test", "check", "props", "deploy", "bench", "venv")
# variables read straight from the environment, outside Settings.ENV_VARS
EXTRA_READ = re.compile(r"""(?<![A-Z0-9_])["'](REAPER_[A-Z0-9_]+)["']""")


def _section(title: str) -> str:
    """The text under a heading, up to the next heading of the same or a higher level."""
    level = len(title) - len(title.lstrip("#"))
    m = re.search(rf"^{re.escape(title)}\s*$", README, re.M)
    if m is None:
        return ""  # test_the_sections_exist says so
    rest = README[m.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


def _read_by_code() -> set[str]:
    """REAPER_* names the layer and the handlers read: Settings' table, the per-kind idle
    variables, and any quoted name in layers/ or functions/ (a prefix is expanded per kind)."""
    names = set(ENV_VARS)
    for path in [*Path(ROOT, "layers").rglob("*.py"), *Path(ROOT, "functions").rglob("*.py")]:
        for name in EXTRA_READ.findall(path.read_text()):
            if name.endswith("_"):  # e.g. "REAPER_IDLE_MINUTES_" + kind
                names |= {name + k.upper().replace("-", "_") for k in KINDS}
            else:
                names.add(name)
    return names


def _set_by_template() -> dict[str, set[str]]:
    """{variable: parameters its value is built from}, over Globals and every function."""
    envs = [T.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})]
    envs += [
        r["Properties"].get("Environment", {}).get("Variables", {})
        for r in T["Resources"].values()
        if r["Type"] == "AWS::Serverless::Function"
    ]
    out: dict[str, set[str]] = {}
    for env in envs:
        for var, value in env.items():
            if var.startswith("REAPER_"):
                text = json.dumps(value)
                used = {p for p in PARAMETERS if re.search(rf'"Ref": "{p}"|\$\{{{p}\}}', text)}
                out.setdefault(var, set()).update(used)
    return out


ENV_TABLE = _section("### Environment variables")
ROWS = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(REAPER_[A-Z0-9_]+)` \|.*$", ENV_TABLE, re.M)}
VARIABLES = sorted(_read_by_code() | set(_set_by_template()))


@pytest.mark.parametrize("title", ["## Deploy", "### Parameters", "### Environment variables", "## Modes, grace and verdicts"])
def test_the_sections_exist(title):
    assert _section(title).strip(), f"README.md has no {title!r} section"


@pytest.mark.parametrize("parameter", PARAMETERS)
def test_every_template_parameter_is_documented(parameter):
    assert f"`{parameter}`" in README, f"template parameter {parameter} is not in README.md"


@pytest.mark.parametrize("variable", VARIABLES)
def test_every_reaper_variable_has_a_row_in_the_environment_table(variable):
    assert variable in ROWS, f"{variable} has no row in README.md's '### Environment variables' table"


@pytest.mark.parametrize("variable", sorted(_set_by_template()))
def test_each_row_names_the_parameters_the_stack_sets_its_variable_from(variable):
    row = ROWS.get(variable, "")
    named = set(re.findall(r"`([A-Za-z0-9]+)`", row.split("|")[2])) if row else set()
    assert _set_by_template()[variable] <= named, (
        f"{variable}: the template sets it from {sorted(_set_by_template()[variable])}, the README row says {sorted(named)}"
    )


def test_no_row_documents_a_variable_nothing_reads_or_sets():
    assert set(ROWS) <= set(VARIABLES), f"stale rows: {sorted(set(ROWS) - set(VARIABLES))}"


@pytest.mark.parametrize("target", USER_TARGETS)
def test_every_user_make_target_exists_and_is_in_the_readme(target):
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert phony and target in phony.group(1).split(), f"{target} is not a .PHONY target of the Makefile"
    assert f"make {target}" in README, f"`make {target}` is not in README.md"


def test_the_deploy_section_states_the_prerequisites():
    deploy = _section("## Deploy")
    for needed in ("CAPABILITY_IAM", "api.slack.com/messaging/webhooks", "make deploy", "next start", "CloudTrail"):
        assert needed in deploy, f"'## Deploy' does not say {needed!r}"


def test_no_trail_is_needed_because_no_rule_matches_cloudtrail_api_calls():
    # The README says the stack needs no CloudTrail trail: AWS delivers "AWS API Call via CloudTrail"
    # events only with a trail (https://docs.aws.amazon.com/eventbridge/latest/userguide/event-types.html),
    # so no rule may depend on them.
    patterns = [
        e["Properties"]["Pattern"]
        for r in T["Resources"].values()
        if r["Type"] == "AWS::Serverless::Function"
        for e in r["Properties"].get("Events", {}).values()
        if e["Type"] == "EventBridgeRule"
    ]
    patterns += [r["Properties"]["EventPattern"] for r in T["Resources"].values() if r["Type"] == "AWS::Events::Rule"]
    assert patterns and not any("via CloudTrail" in json.dumps(p) for p in patterns)
    assert "no cloudtrail trail" in _section("## Deploy").lower()


def test_the_readme_names_the_dashboard_and_its_savings_metric():
    assert "OperationsDashboardUrl" in README and "EstimatedSavingsUSD" in README and "MLReaper/Savings" in README


def test_the_enforce_table_has_one_row_per_kind():
    table = _section("## Modes, grace and verdicts")
    assert "What `enforce` does to each kind" in table
    for kind in KINDS:
        assert re.search(rf"^\| `{kind}` \|", table, re.M), f"no row for {kind} in 'What `enforce` does to each kind'"

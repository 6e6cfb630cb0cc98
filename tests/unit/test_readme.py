"""The README is the front page and docs/ the manual; the tests hold facts, not sentences.

Every template parameter is documented (the generated parameters reference counts), every REAPER_*
variable the code reads or the stack sets has a row in the environment table (docs/configuration.md),
which names the parameters its value is built from; every CLI flag is in the generated CLI reference,
which is not stale; every make target users run is on the front page; every relative link and anchor
in README.md and docs/ resolves; the deploy prerequisites the manual states hold."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

from reaper.core.settings import ENV_VARS, KINDS
from reaper_devkit.template import ROOT, load

README = (ROOT / "README.md").read_text()
DOCS = {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted((ROOT / "docs").rglob("*.md"))}
MANUAL = README + "\n".join(DOCS.values())
T = load()
PARAMETERS = sorted(T["Parameters"])
# the targets a user runs (the others in .PHONY are the steps they are made of)
USER_TARGETS = ("demo", "test", "check", "props", "deploy", "bench", "venv", "docs")
# variables read straight from the environment, outside Settings.ENV_VARS
EXTRA_READ = re.compile(r"""(?<![A-Z0-9_])["'](REAPER_[A-Z0-9_]+)["']""")
MAX_README_LINES = 250


def _gen_docs():  # scripts/ is not a package: load the generator by its path
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _gen_docs()


def _section(text: str, title: str) -> str:
    """The text under a heading, up to the next heading of the same or a higher level."""
    level = len(title) - len(title.lstrip("#"))
    m = re.search(rf"^{re.escape(title)}\s*$", text, re.M)
    if m is None:
        return ""  # test_the_sections_exist says so
    rest = text[m.end() :]
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


ENV_TABLE = _section(DOCS["docs/configuration.md"], "## Environment variables")
ROWS = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(REAPER_[A-Z0-9_]+)` \|.*$", ENV_TABLE, re.M)}
VARIABLES = sorted(_read_by_code() | set(_set_by_template()))


PAGES = {
    "docs/deploy.md": "# Deploy to one account",
    "docs/configuration.md": "## Environment variables",
    "docs/tags.md": "## Modes, grace and verdicts",
}


@pytest.mark.parametrize(("page", "title"), sorted(PAGES.items()))
def test_the_sections_exist(page, title):
    assert _section(DOCS.get(page, ""), title).strip(), f"{page} has no {title!r} section"


def test_the_readme_is_a_front_page():
    lines = README.count("\n")
    assert lines < MAX_README_LINES, f"README.md has {lines} lines: move detail into docs/"
    for needed in ("make demo", "make test", "make deploy", "docs/index.md"):
        assert needed in README


@pytest.mark.parametrize("parameter", PARAMETERS)
def test_every_template_parameter_is_documented(parameter):
    assert f"`{parameter}`" in MANUAL, f"template parameter {parameter} is in neither README.md nor docs/"


def test_the_generated_references_are_not_stale():
    # make docs writes them; a parser flag or a template parameter changed since means a stale page
    assert DOCS.get("docs/reference/cli.md") == GEN.cli_page(), "docs/reference/cli.md is stale: run `make docs`"
    assert DOCS.get("docs/reference/parameters.md") == GEN.parameters_page(), "docs/reference/parameters.md is stale: run `make docs`"


def _flags() -> list[tuple[str, str]]:
    from reaper.cli.main import _parser

    parser = _parser()
    out = [("", s) for a in parser._actions for s in a.option_strings]
    for name, (_, sub) in GEN._commands(parser).items():
        out += [(name, s) for a in sub._actions for s in a.option_strings]
    return out


@pytest.mark.parametrize(("command", "flag"), _flags())
def test_every_cli_flag_is_in_the_cli_reference(command, flag):
    page = DOCS["docs/reference/cli.md"]
    section = _section(page, f"## `reaper {command}`") if command else page.split("\n## ", 1)[0]
    assert f"`{flag}`" in section, f"reaper {command} {flag} is not in docs/reference/cli.md"


@pytest.mark.parametrize("variable", VARIABLES)
def test_every_reaper_variable_has_a_row_in_the_environment_table(variable):
    assert variable in ROWS, f"{variable} has no row in docs/configuration.md's '## Environment variables' table"


@pytest.mark.parametrize("variable", sorted(_set_by_template()))
def test_each_row_names_the_parameters_the_stack_sets_its_variable_from(variable):
    row = ROWS.get(variable, "")
    named = set(re.findall(r"`([A-Za-z0-9]+)`", row.split("|")[2])) if row else set()
    assert _set_by_template()[variable] <= named, (
        f"{variable}: the template sets it from {sorted(_set_by_template()[variable])}, the docs row says {sorted(named)}"
    )


def test_no_row_documents_a_variable_nothing_reads_or_sets():
    assert set(ROWS) <= set(VARIABLES), f"stale rows: {sorted(set(ROWS) - set(VARIABLES))}"


@pytest.mark.parametrize("target", USER_TARGETS)
def test_every_user_make_target_exists_and_is_on_the_front_page(target):
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert phony and target in phony.group(1).split(), f"{target} is not a .PHONY target of the Makefile"
    assert f"make {target}" in README, f"`make {target}` is not in README.md"


@pytest.mark.parametrize("venv", [".venv", ".venv-sam", ".venv-checkov"])
def test_every_environment_make_test_creates_is_named(venv):
    recipe = (ROOT / "Makefile").read_text()
    assert re.search(rf":= {re.escape(venv)}$", recipe, re.M), f"the Makefile no longer makes {venv}"
    assert f"`{venv}/`" in README, f"README.md does not name {venv}"


def _anchors(text: str) -> set[str]:
    """The ids MkDocs gives a page's headings (its toc slugify; a repeated heading gets _1, _2 …)."""
    seen: dict[str, int] = {}
    fence = False
    for line in text.splitlines():
        fence = fence != line.startswith("```")
        m = None if fence or line.startswith("```") else re.match(r"^#{1,6} (.*)$", line)
        if m:
            base = slugify(m.group(1).replace("`", "").strip(), "-")
            seen[base] = seen.get(base, 0) + 1
    return {b if i == 0 else f"{b}_{i}" for b, n in seen.items() for i in range(n)}


def _links() -> list[tuple[str, str]]:
    pages = {"README.md": README, **DOCS}
    out = []
    for page, text in pages.items():
        text = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.S))  # code is not a link
        out += [(page, target) for target in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"^[a-z]+:", target)]
    return out


@pytest.mark.parametrize(("page", "target"), _links())
def test_every_relative_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    resolved = (ROOT / page).parent / path if path else ROOT / page
    assert resolved.exists(), f"{page} links to {target}: no such file"
    if anchor and resolved.suffix == ".md":
        assert anchor in _anchors(resolved.read_text()), f"{page} links to {target}: no such heading"


def test_the_deploy_page_states_the_prerequisites():
    deploy = DOCS["docs/deploy.md"]
    for needed in ("CAPABILITY_IAM", "api.slack.com/messaging/webhooks", "make deploy", "next start", "CloudTrail"):
        assert needed in deploy, f"docs/deploy.md does not say {needed!r}"


def test_no_trail_is_needed_because_no_rule_matches_cloudtrail_api_calls():
    # The manual says the stack needs no CloudTrail trail: AWS delivers "AWS API Call via CloudTrail"
    # events only with a trail (https://docs.aws.amazon.com/eventbridge/latest/userguide/event-types.html),
    # so no rule may depend on them.
    # The creation-time notices' rules are the one exception, made only with CreationNotices=cloudtrail (off by default).
    patterns = [
        e["Properties"]["Pattern"]
        for r in T["Resources"].values()
        if r["Type"] == "AWS::Serverless::Function"
        for e in r["Properties"].get("Events", {}).values()
        if e["Type"] == "EventBridgeRule"
    ]
    rules = [r for r in T["Resources"].values() if r["Type"] == "AWS::Events::Rule"]
    patterns += [r["Properties"]["EventPattern"] for r in rules if r.get("Condition") != "CreationNoticesOn"]
    assert patterns and not any("via CloudTrail" in json.dumps(p) for p in patterns)
    assert T["Parameters"]["CreationNotices"]["Default"] == "off"
    assert "no cloudtrail trail" in DOCS["docs/deploy.md"].lower()


def test_the_manual_names_the_dashboard_and_its_savings_metric():
    assert "OperationsDashboardUrl" in MANUAL and "EstimatedSavingsUSD" in MANUAL and "MLReaper/Savings" in MANUAL


def test_the_enforce_table_has_one_row_per_kind():
    table = _section(DOCS["docs/tags.md"], "## Modes, grace and verdicts")
    assert "What `enforce` does to each kind" in table
    for kind in KINDS:
        assert re.search(rf"^\| `{kind}` \|", table, re.M), f"no row for {kind} in 'What `enforce` does to each kind'"

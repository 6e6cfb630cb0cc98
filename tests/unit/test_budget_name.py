"""A budget's name built from an `ml:project` tag is one AWS Budgets accepts (docs/aws-assumptions.md,
"Slack front doors, escaping, the central role"): the BudgetName constraints of botocore's Budgets model,
which are the API reference's (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_Budget.html)."""

from __future__ import annotations

import re

import botocore.session
from hypothesis import given, settings
from hypothesis import strategies as st

from reaper.aws.budgets import BUDGET_PREFIX, budget_name

SHAPE = botocore.session.get_session().get_service_model("budgets").shape_for("BudgetName")
JAVA_PATTERN = r"^(?![^:\\]*/action/|(?i).*<script>.*</script>.*)[^:\\]+$"
# the same pattern in Python's syntax: an inline flag mid-pattern is scoped here, `.` without DOTALL as in Java
ACCEPTED = re.compile(r"^(?![^:\\]*/action/|(?i:.*<script>.*</script>.*))[^:\\]+$")

HOSTILE = [
    "vision",
    "team:vision",
    "a\\b",
    "x/action/y",
    "/action/action/",
    "<script>alert(1)</script>",
    "<SCRIPT>x</Script>",
    "<!channel>",
    "line\nbreak\ttab\x00nul",
    "é" * 300,
    "/action" + "/" * 200,
]


def test_the_pattern_is_the_one_the_budgets_api_declares():
    assert SHAPE.metadata["pattern"] == JAVA_PATTERN
    assert (SHAPE.metadata["min"], SHAPE.metadata["max"]) == (1, 100)


def _accepted(name: str) -> bool:
    return 1 <= len(name) <= SHAPE.metadata["max"] and ACCEPTED.match(name) is not None


def test_every_hostile_project_makes_a_name_budgets_accepts():
    names = {p: budget_name(p) for p in HOSTILE}
    assert {p: n for p, n in names.items() if not _accepted(n)} == {}
    assert all(n.startswith(BUDGET_PREFIX) for n in names.values())
    assert names["vision"] == "mlreaper-vision"  # a plain project keeps its name (existing budgets are found by it)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:\\/<>scriptaon\n\x00é ")) | st.characters(), min_size=1, max_size=150))
def test_any_project_makes_a_name_budgets_accepts(project):
    assert _accepted(budget_name(project))

"""The tests' own layout (issue 35, item 7): a test module is never imported as a library, and what tests
share lives in tests/helpers/ (seeders, constants, helper functions), tests/plugins/ (pytest plugins) or a
conftest.py (fixtures). A test module imported by another runs its module code twice under two names and
ties one test's edits to another's; a fixture imported by name is easy to lose to a linter's fix."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

TESTS = ROOT / "tests"
SHARED_HOMES = ("helpers", "plugins")


def imported(path: Path) -> Iterator[str]:
    """Every module name `path` imports, and for `from a import b` also a.b (b may be a module)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def is_test_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "tests" and parts[-1].startswith("test_")


def test_no_module_under_tests_imports_a_test_module():
    found = sorted(
        f"{path.relative_to(ROOT)} imports {name}" for path in TESTS.rglob("*.py") for name in imported(path) if is_test_module(name)
    )
    assert not found, "\n".join(found)


def test_what_tests_share_lives_in_helpers_plugins_or_a_conftest():
    misplaced = sorted(
        str(path.relative_to(ROOT))
        for path in TESTS.rglob("*.py")
        if not path.name.startswith("test_")
        and path.name not in ("__init__.py", "conftest.py")
        and path.relative_to(TESTS).parts[0] not in SHARED_HOMES
    )
    assert not misplaced, misplaced

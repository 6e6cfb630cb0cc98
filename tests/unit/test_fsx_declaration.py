"""The FSx kind as declared: what `reaper restore` takes, where its events go, the restore IAM, and a
package that loads lazily and has no import circle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import reaper.kinds.fsx
from reaper import kinds
from reaper.kinds.fsx import DECLARATION
from reaper_devkit.template import load

FS_ID = "fs-0123456789abcdef0"
PACKAGE = Path(reaper.kinds.fsx.__file__).parent
PARTS = ("model", "discover", "signals", "jobs", "artifacts", "rules", "actions", "restore", "events")


@pytest.mark.parametrize("name", [FS_ID, f"  {FS_ID} ", "fs-01234567"])
def test_the_restorer_claims_file_system_ids(name):
    assert DECLARATION.restorer is not None and DECLARATION.restorer.claims(name)


@pytest.mark.parametrize(
    "name",
    ["fs-0123456", "fs-0123456789ABCDEF0", "fsx-0123456789abcdef0", f"{FS_ID}/x", f"../{FS_ID}", f"{FS_ID};rm -rf /", "llm-dev", ""],
)
def test_the_restorer_does_not_claim_other_names(name):
    assert DECLARATION.restorer is not None and not DECLARATION.restorer.claims(name)


def test_each_event_goes_to_its_handler_and_no_other_is_taken():
    from reaper.kinds.fsx import events

    kind = kinds.get("fsx")
    assert kind.event_handler("aws.sagemaker", "SageMaker Training Job State Change") is events.job_state_changed
    assert kind.event_handler("mlreaper", "FSx Idle Window Check") is events.idle_window_check
    # the same detail type from another source is not ours: someone else's events never start a check
    assert kind.event_handler("mlreaper", "SageMaker Training Job State Change") is None
    assert kind.event_handler("aws.sagemaker", "FSx Idle Window Check") is None
    assert kind.event_handler("aws.fsx", "FSx File System State Change") is None


@pytest.mark.parametrize("ids", [[f"{FS_ID}\n"], ["fs-XYZ12345"], [f"../{FS_ID}"], [], [FS_ID] * 51])
def test_the_idle_check_refuses_ids_that_are_not_file_system_ids(ids):
    from reaper.kinds.fsx.events import IdleCheckDetail

    with pytest.raises(ValidationError):
        IdleCheckDetail.model_validate({"file_system_ids": ids})


def statements(logical_id: str) -> list[dict[str, Any]]:
    props = load()["Resources"][logical_id]["Properties"]
    return [s for p in props.get("Policies", []) for s in p.get("Statement", [])]


def test_the_restore_function_grants_exactly_what_the_fsx_restorer_declares():
    # Given the restore function's Sid-named FSx statements
    fsx = [s for s in statements("RestoreFunction") if s.get("Sid", "").startswith("FsxRestore")]
    granted: set[str] = set()
    for s in fsx:
        granted |= {s["Action"]} if isinstance(s["Action"], str) else set(s["Action"])
    # Then they grant the restorer's declared permissions, no more, no fewer
    assert fsx and granted == kinds.get("fsx").restore_permissions()
    # and nothing an FSx restore could destroy with
    assert not {a for a in granted if ":Delete" in a or a == "fsx:CreateBackup"}


def test_the_sweep_function_is_not_granted_the_tagging_api_it_does_not_call():
    # DescribeFileSystems returns the tags: the FSx sweep never calls tag:GetResources
    assert "tag:GetResources" not in kinds.get("fsx").permissions()


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_declaration_loads_none_of_the_parts():
    loaded = _python("import sys, reaper.kinds.fsx; print(sorted(m for m in sys.modules if m.startswith('reaper.kinds.fsx.')))")
    assert loaded == "[]"


def _imports(part: str) -> set[str]:
    """The package's parts this part imports, at the top or inside a function."""
    tree = ast.parse((PACKAGE / f"{part}.py").read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return {p for p in PARTS if f"reaper.kinds.fsx.{p}" in names}


def test_no_import_circle_between_the_parts_not_even_inside_a_function():
    graph = {part: _imports(part) for part in PARTS}
    done: set[str] = set()

    def visit(part: str, path: tuple[str, ...]) -> None:
        assert part not in path, f"import circle: {' -> '.join((*path, part))}"
        if part not in done:
            for dep in graph[part]:
                visit(dep, (*path, part))
            done.add(part)

    for part in PARTS:
        visit(part, ())
    assert graph["rules"] <= {"model"}  # the decision is pure: it reads no AWS part

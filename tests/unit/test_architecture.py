"""The layer's shape, held by a test: imports point down, no module is part of an import circle
(lazy and TYPE_CHECKING imports count: a circle hidden in a function still ties the modules), and
the layer never imports the development kit. docs/architecture.md draws the floors.
"""

from __future__ import annotations

import ast
from pathlib import Path

from reaper.core.kind_names import KIND_PACKAGES

LAYER = Path(__file__).resolve().parents[2] / "layers" / "reaper"
PACKAGE = LAYER / "reaper"

# Floors, lowest first: a module may import its own floor and the floors below it, never above.
FLOORS: list[set[str]] = [
    {"core"},
    {"aws"},
    {"record"},
    {"kinds"},
    {"sweep", "restore"},
    {"slack", "report", "org"},  # org: the organisation's central account (docs/deploy-organisation.md)
    {"cli", "handlers", "wiring", "__main__"},
]
# Known exceptions, each with its reason. None now: a kind's event that acts on the resources it names is
# handed the pipeline's door (kinds.base.Check) by its caller instead of importing the sweep.
ALLOWED_UPWARD: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    rel = path.relative_to(LAYER).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every `reaper…` / `reaper_devkit…` module this file imports, wherever the import stands."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from reaper.sweep import pipeline` imports the module reaper.sweep.pipeline; the package
            # itself counts only when a name is taken from it
            submodules = {f"{node.module}.{a.name}" for a in node.names}
            found |= submodules
            if any((PACKAGE.parent / (m.replace(".", "/") + ".py")).exists() is False for m in submodules):
                found.add(node.module)
    return {m for m in found if m.split(".")[0] in {"reaper", "reaper_devkit"}}


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}


def floor_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for n, floor in enumerate(FLOORS):
        if top in floor:
            return n
    return -1  # the package's face (reaper/__init__.py): below everything


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_in_the_layer():
    assert cycles(graph()) == []


def test_the_circle_finder_finds_a_circle():
    # Given a graph with a circle hidden two steps deep, the check above would fail on it
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_layer_never_imports_the_development_kit():
    offenders = {p.name: m for p in PACKAGE.rglob("*.py") for m in imports_of(p) if m.startswith("reaper_devkit")}
    assert offenders == {}


def test_imports_point_down():
    g = graph()
    upward = sorted((a, b) for a, targets in g.items() for b in targets if floor_of(b) > floor_of(a) and (a, b) not in ALLOWED_UPWARD)
    assert upward == []


KIND_MODULES = {package.rsplit(".", 1)[-1] for package in KIND_PACKAGES.values()}


def test_kinds_never_import_slack_the_wiring_or_each_other():
    g = graph()
    bad = []
    for a, targets in g.items():
        if not a.startswith("reaper.kinds."):
            continue
        own = ".".join(a.split(".")[:3])
        for b in targets:
            # another kind's package; the modules every kind shares (kinds.base, kinds.creation) are not a kind
            other_kind = b.startswith("reaper.kinds.") and not b.startswith(own) and b.split(".")[2] in KIND_MODULES
            if b.startswith(("reaper.slack", "reaper.wiring", "reaper.cli", "reaper.handlers")) or (other_kind and a != "reaper.kinds"):
                bad.append((a, b))
    assert bad == []


def test_the_sweep_and_the_record_know_an_outbox_not_slack():
    g = graph()
    bad = sorted(
        (a, b)
        for a, t in g.items()
        for b in t
        if a.startswith(("reaper.sweep", "reaper.record", "reaper.core", "reaper.aws")) and b.startswith("reaper.slack")
    )
    assert bad == []


# A function longer than a screen is several named steps (README, Architecture). Exceptions, each with its reason:
LONG_FUNCTION_ALLOWED = {
    # the command line is reshaped on another branch; its argument parser is split there
    "reaper/cli/",
}
MAX_FUNCTION_LINES = 60


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in `source` longer than `limit` lines, decorators excluded."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                out.append((node.name, lines))
    return out


def test_no_function_in_the_layer_is_longer_than_a_screen():
    offenders = sorted(
        (str(p.relative_to(LAYER)), name, lines)
        for p in PACKAGE.rglob("*.py")
        if not any(str(p.relative_to(LAYER)).startswith(a) for a in LONG_FUNCTION_ALLOWED)
        for name, lines in long_functions(p.read_text())
    )
    assert offenders == []


def test_the_length_check_finds_a_long_function():
    # Given a function of 62 lines (def + 61 statements) and a short one, only the long one is named
    body = "".join(f"    x{i} = {i}\n" for i in range(61))
    assert long_functions(f"def long():\n{body}\n\ndef short():\n    return 1\n") == [("long", 62)]


def test_a_kind_never_imports_the_sweep_nor_subclasses_kind():
    # Given every kind's modules: acting on named resources goes through one door, pipeline.sweep_kind(only=...),
    # handed in as kinds.base.Check; no kind imports the sweep or makes its own Kind (the old `OnlyThese`)
    g = graph()
    upward = sorted((a, b) for a, t in g.items() if a.startswith("reaper.kinds.") for b in t if b.startswith("reaper.sweep"))
    subclasses = sorted(
        str(p.relative_to(PACKAGE))
        for p in (PACKAGE / "kinds").rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == "Kind" for b in node.bases)
    )
    assert (upward, subclasses) == ([], [])

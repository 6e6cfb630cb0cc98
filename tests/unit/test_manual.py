"""The manual at the standard of the docs admins already read (Powertools for AWS Lambda's, same MkDocs
Material): light/dark, highlighted code, admonitions, search, a user guide apart from the design notes,
kind pages that open with a short box, and reference tables generated from the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# docs/cli.md belongs to another change this round (its fences are its owner's to label)
NOT_OURS = {DOCS / "cli.md"}
DESIGN_NOTES = {
    "safety.md",
    "gate.md",
    "jupyter-reads.md",
    "ssm-gpu-reads.md",
    "safety-round-three-b.md",
    "architecture.md",
    "performance.md",
}


def mkdocs() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    return loaded


def pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in pages(item)]
    return [p for value in nav.values() for p in pages(value)]


def extensions() -> set[str]:
    return {e if isinstance(e, str) else next(iter(e)) for e in mkdocs()["markdown_extensions"]}


def test_the_theme_has_a_light_dark_toggle_and_the_code_extensions():
    palette = mkdocs()["theme"]["palette"]
    assert {p["scheme"] for p in palette} == {"default", "slate"} and all("toggle" in p for p in palette)
    assert {"pymdownx.highlight", "pymdownx.inlinehilite", "pymdownx.superfences", "pymdownx.details", "admonition"} <= extensions()
    assert "search" in mkdocs()["plugins"]


def test_the_design_notes_are_a_section_of_their_own_and_nowhere_else_in_the_nav():
    nav = mkdocs()["nav"]
    sections = {next(iter(item)): item[next(iter(item))] for item in nav if isinstance(item, dict)}
    notes = set(pages(sections["Design notes"]))
    assert notes >= DESIGN_NOTES
    guide = {p for title, value in sections.items() if title != "Design notes" for p in pages(value)}
    assert not (guide & DESIGN_NOTES), guide & DESIGN_NOTES


def fences(text: str) -> list[tuple[int, str]]:
    """(line, info string) of each opening code fence."""
    found, open_fence = [], False
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*```(.*)$", line)
        if m:
            if not open_fence:
                found.append((n, m.group(1).strip()))
            open_fence = not open_fence
    return found


def test_every_code_block_in_the_manual_names_its_language():
    bare = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted(DOCS.rglob("*.md"))
        if p not in NOT_OURS
        for n, info in fences(p.read_text())
        if not info
    ]
    assert not bare, bare


def test_each_kind_page_opens_with_its_box_before_the_internals():
    for page in sorted((DOCS / "kinds").glob("*.md")):
        if page.stem == "index":
            continue
        text = page.read_text()
        head = text.split("\n## ", 1)[0]
        box = head.split('!!! abstract "At a glance"', 1)
        assert len(box) == 2, f"{page.name} has no box"
        assert len(box[0].strip().splitlines()) == 1, f"{page.name}: the box is not right under the title"
        for item in ("**What:**", "**The signal:**", "**The action:**", "**Undo:**", "**What it costs:**"):
            assert item in box[1].split("\n\n", 1)[0], f"{page.name}: the box lacks {item}"


def _codes_set_in(tree: ast.Module, constants: dict[str, str]) -> set[str]:
    def values(node: ast.expr) -> set[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, ast.Name) and node.id in constants:
            return {constants[node.id]}
        if isinstance(node, ast.IfExp):
            return values(node.body) | values(node.orelse)
        return set()

    return {
        code
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for kw in node.keywords
        if kw.arg == "unknown"
        for code in values(kw.value)
    }


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """NAME = "string" at a module's top level."""
    return {
        t.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for t in node.targets
        if isinstance(t, ast.Name) and t.id.isupper()
    }


def test_the_coverage_codes_page_lists_every_code_the_product_sets():
    # Given every `unknown=` code any rule or step sets, literal or through a named constant (its own or imported)
    layer = ROOT / "layers" / "reaper"
    trees = {".".join(p.relative_to(layer).with_suffix("").parts): ast.parse(p.read_text()) for p in (layer / "reaper").rglob("*.py")}
    own = {name: _module_constants(tree) for name, tree in trees.items()}
    codes: set[str] = set()
    for name, tree in trees.items():
        constants = dict(own[name])
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module in own:
                constants |= {a.asname or a.name: own[node.module][a.name] for a in node.names if a.name in own[node.module]}
        codes |= _codes_set_in(tree, constants)
    assert "agent-no-data" in codes and len(codes) > 20
    # Then the generated reference names each one in its table
    page = (DOCS / "reference" / "coverage-codes.md").read_text()
    listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", page, re.M))
    assert codes <= listed, sorted(codes - listed)


def test_the_reference_pages_are_in_the_nav():
    listed = set(pages(mkdocs()["nav"]))
    for page in ("reference/coverage-codes.md", "reference/verdicts.md", "reference/exit-codes.md", "reference/cli.md"):
        assert page in listed, page

"""What an admin runs before the CLI exists: the manual's deploy steps (docs/deploy.md) and `pip install .`."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def deploy_block() -> list[str]:
    """The shell lines of docs/deploy.md's step-by-step block (the one with SAM's guided deploy), comments dropped."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    block = next(b.split("```", 1)[0] for b in text.split("```bash\n")[1:] if "--guided" in b.split("```", 1)[0])
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def make_would_run(target: str) -> str:
    """What `make TARGET` runs from nothing (-B: as if no venv existed; -n: print, do not run)."""
    done = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_venv_the_readme_deploy_steps_use_is_made_by_the_make_step_before_them():
    # Given the manual's step-by-step deploy, in order
    steps = deploy_block()
    made: set[str] = set()
    used: list[str] = []
    for step in steps:
        for command in (c.strip() for c in step.split("&&")):
            # When a step is a make target, it makes the venvs its recipe creates
            if command.startswith("make "):
                recipe = make_would_run(command.split()[1])
                made |= set(re.findall(r"-m venv (\.venv[\w-]*)", recipe))
                continue
            # Then every later command that runs a venv's binary finds that venv made
            venv = command.split("/", 1)[0]
            if venv.startswith(".venv"):
                used.append(venv)
                assert venv in made, f"docs/deploy.md runs {command!r} but no make step before it creates {venv}"
    assert ".venv-sam" in used and any("sam deploy --guided" in s for s in steps)


def test_make_deploy_makes_the_sam_venv_then_runs_the_deploy_script_with_its_sam():
    recipe = make_would_run("deploy")
    assert "-m venv .venv-sam" in recipe
    assert recipe.index("-m venv .venv-sam") < recipe.index(".venv-sam/bin/python scripts/deploy.py --sam .venv-sam/bin/sam")
    assert "--guided" not in recipe


def requirement_lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.strip().startswith("#")]


@pytest.mark.slow
def test_the_wheel_holds_every_package_prices_and_the_layer_pins(tmp_path):
    # Given a copy of what `pip install .` reads (built elsewhere: no build/ or egg-info in the worktree)
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "LICENSE", src)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "layers" / "reaper", src / "layers" / "reaper", ignore=ignore)
    shutil.copytree(ROOT / "devkit", src / "devkit", ignore=ignore)
    # When pip builds the wheel (setuptools from PyPI, in build isolation, as pipx would)
    out = tmp_path / "wheel"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("mlreaper-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    # Then every package on disk is in it, and the price table
    for root in (ROOT / "layers" / "reaper", ROOT / "devkit"):
        for init in root.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            package = init.parent.relative_to(root)
            assert f"{package.as_posix()}/__init__.py" in names, f"package {package} missing from the wheel"
            for module in init.parent.glob("*.py"):
                assert f"{package.as_posix()}/{module.name}" in names
    assert "reaper/aws/prices.json" in names
    # And it requires exactly the layer's pins, so an installed `reaper` finds botocore
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    required = {line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line}
    assert "License-Expression: Apache-2.0" in text and any(n.endswith("licenses/LICENSE") for n in names)
    assert required == set(requirement_lines(ROOT / "layers" / "reaper" / "requirements.txt"))
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "reaper = reaper.cli.main:main" in zipfile.ZipFile(wheel).read(entry).decode()
    # And no setuptools warning on the way
    assert "warning" not in done.stderr.lower(), done.stderr[-2000:]


def test_the_demo_extra_pins_what_make_demo_installs_beyond_the_layer():
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["demo"]
    demo = [r.split("#", 1)[0].strip() for r in requirement_lines(ROOT / "requirements-demo.txt") if not r.startswith("-r")]
    assert extra == demo
    # and the development environment is the demo's plus its tools, never a second moto pin
    dev = requirement_lines(ROOT / "requirements-dev.txt")
    assert "-r requirements-demo.txt" in dev and not any(r.startswith(("moto", "regex")) for r in dev)


def test_make_demo_installs_no_test_lint_or_docs_tool_and_make_test_installs_them_all():
    # Given a fresh clone (-B: as if no venv existed)
    demo = make_would_run("demo")
    test = make_would_run("test")
    # Then `make demo` installs the demo's requirements only, and runs the demo from the same .venv
    installs = [line for line in demo.splitlines() if "pip install" in line and " -r " in line]
    assert installs == [".venv/bin/pip install -q -r requirements-demo.txt"], installs
    demo_pins = " ".join(requirement_lines(ROOT / "requirements-demo.txt")).lower()
    for tool in ("pytest", "hypothesis", "ruff", "mypy", "mkdocs", "jupyter", "ipykernel", "matplotlib", "sam"):
        assert tool not in demo_pins, tool
    assert demo.rstrip().endswith(".venv/bin/reaper demo")
    # and `make test` still builds the full development environment
    assert ".venv/bin/pip install -q -r requirements-dev.txt -r requirements-docs.txt" in test


def test_the_report_extra_pins_the_dev_matplotlib_and_the_layer_never_gets_it():
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["report"]
    dev = [r.split("#", 1)[0].strip() for r in requirement_lines(ROOT / "requirements-dev.txt") if r.startswith("matplotlib")]
    assert extra == dev == ["matplotlib==3.11.2"]
    assert not any("matplotlib" in r for r in requirement_lines(ROOT / "layers" / "reaper" / "requirements.txt"))


def test_the_license_is_the_apache_2_text_the_package_declares():
    import tomllib

    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == "Apache-2.0"

"""The built manual as a reader's browser sees it (scripts/site_check.py, the last step of `make docs-check`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "site_check.py"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    mkdocs = Path(sys.executable).parent / "mkdocs"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(out)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def check(site: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ} if path is None else {**os.environ, "PATH": path}
    return subprocess.run([sys.executable, str(CHECK), "--site", str(site)], env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium (apt-get install chromium)")
def test_search_finds_pages_in_headless_chromium_and_both_screenshots_are_written(site):
    done = check(site)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "search finds 'restore' in Chromium" in done.stdout
    for name in ("home", "kind"):
        assert (site / "_screenshots" / f"{name}.png").stat().st_size > 10_000


@pytest.mark.slow
def test_without_chromium_the_browser_step_says_skipped_and_the_index_is_still_checked(site, tmp_path):
    # Given no chromium on PATH
    done = check(site, path=str(tmp_path))
    # Then it says it skipped, in words, and passes on the index alone
    assert done.returncode == 0 and "SKIPPED the browser checks" in done.stdout and "apt-get install chromium" in done.stdout
    # and a site without its search index fails, chromium or not
    broken = tmp_path / "broken"
    shutil.copytree(site, broken)
    (broken / "search" / "search_index.json").unlink()
    failed = check(broken, path=str(tmp_path))
    assert failed.returncode == 1 and "search_index.json is missing" in failed.stderr

"""The docs site (`make docs`, mkdocs-material + mkdocstrings) builds in strict mode, and a broken
link or anchor fails the build — checked on a copy of the pages, so the checkout is not touched."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def build(tmp_path: Path, extra_line: str = "") -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "mkdocs_hooks.py", tmp_path / "tools" / "mkdocs_hooks.py")
    (tmp_path / "build" / "docs-api" / "masklens").mkdir(parents=True)
    (tmp_path / "build" / "docs-api" / "masklens" / "core").symlink_to(ROOT / "core")
    if extra_line:
        with (tmp_path / "docs" / "demo.md").open("a") as f:
            f.write(f"\n{extra_line}\n")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=600)


def test_the_site_builds_strictly(tmp_path):
    done = build(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "score_cafe" in (tmp_path / "site" / "reference.html").read_text()


@pytest.mark.parametrize("link", ["[gone](no-such-page.md)", "[gone](gui.md#no-such-heading)"])
def test_a_broken_link_fails_the_build(tmp_path, link):
    done = build(tmp_path, link)
    assert done.returncode != 0
    assert "no-such" in done.stderr

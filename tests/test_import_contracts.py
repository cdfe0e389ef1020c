"""The layering of the code (README, Code map) is held by import-linter contracts in pyproject.toml:
they pass on the tree, and each one fails when a forbidden import is added to a copy of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(root: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "lint-imports"
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([str(script), "--config", str(root / "pyproject.toml"), "--no-cache"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_the_contracts_hold_on_the_tree():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert len(contracts) == 6
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 kept, 0 broken" in done.stdout


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory):
    """A copy of the code as the installed package ``masklens`` (core/ and gui/), to break."""
    base = tmp_path_factory.mktemp("layering")
    for top in ("core", "gui"):
        shutil.copytree(ROOT / top, base / "masklens" / top, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", base / "pyproject.toml")
    return base


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("core/kinds/cafe/metrics.py", "import masklens.core.kinds.pcs.bulk", "kinds never import each other"),
    ("core/scoring/tables.py", "import masklens.gui.state", "never imports the window"),
    ("core/files/paths.py", "import masklens.core.review.store", "import nothing above them"),
    ("core/errors.py", "import masklens.core.files.io", "errors below files"),
    ("gui/browser/filters.py", "import masklens.core.cli.score", "never imports the command line"),
    ("gui/review/store_link.py", "import masklens.core.review.connections",
     "only core/review opens a review store"),
    ("core/cli/review.py", "from masklens.core.review.connections import acquire_writer",
     "only core/review opens a review store"),
])
def test_a_forbidden_import_breaks_its_contract(tree_copy, module, line, contract):
    path = tree_copy / "masklens" / module
    original = path.read_text()
    path.write_text(original + f"\n{line}  # forbidden, added by the test\n")
    try:
        done = lint_imports(tree_copy, pythonpath=tree_copy)
    finally:
        path.write_text(original)
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and contract in done.stdout, done.stdout

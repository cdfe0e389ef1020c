"""The test session's scratch folder (tests/conftest.py: cache, config, data and log dirs of
every test run) is removed when the session ends, and is there for the subprocesses tests start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _session_env(tmp: Path) -> dict[str, str]:
    """A pytest run as a user starts one: its temp dir is ``tmp``, no paths inherited from ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MASKLENS_", "XDG_", "PYTEST_"))}
    env["TMPDIR"] = str(tmp)
    return env


@pytest.mark.slow  # a whole pytest session in a subprocess
def test_a_pytest_session_leaves_no_scratch_folder_in_tmp(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # a real session over a real test that starts `masklens` subprocesses reading those paths
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/cli/test_cli_start.py"], cwd=REPO, env=_session_env(tmp),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert " passed" in r.stdout
    assert sorted(p.name for p in tmp.glob("masklens-tests-*")) == []


def test_the_scratch_folder_is_there_during_the_session_and_its_subprocesses():
    scratch = Path(os.environ["MASKLENS_CACHE_DIR"]).parent
    assert scratch.name.startswith("masklens-tests-") and scratch.is_dir()
    code = "import os, pathlib; print(pathlib.Path(os.environ['MASKLENS_CACHE_DIR']).parent.is_dir())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"

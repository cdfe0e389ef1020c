"""`python -m masklens` is the `masklens` command; the version has one source (pyproject.toml,
read back through the installed metadata)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import masklens.core
from masklens.core.kinds.demo import demo_argv

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_python_m_masklens_runs_the_cli(tmp_path):
    out = subprocess.run([sys.executable, "-m", "masklens", "--version"], capture_output=True, text=True,
                         cwd=tmp_path, check=True)
    assert out.stdout.strip() == f"masklens {VERSION}"
    scores = tmp_path / "s.json"
    subprocess.run([sys.executable, "-m", "masklens", "score", "ovs", *demo_argv("ovs"), "--out", str(scores)],
                   capture_output=True, text=True, cwd=tmp_path, check=True)
    assert json.loads(scores.read_text())["benchmark"] == "ovs"


def test_the_version_is_written_once():
    assert masklens.core.__version__ == VERSION
    hits = [p for p in (ROOT / "core").rglob("*.py") if f'"{VERSION}"' in p.read_text()]
    assert hits == []  # read from the installed metadata, never written in the code

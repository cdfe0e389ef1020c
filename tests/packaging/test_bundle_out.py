"""`make bundle`'s output folder: PyInstaller clears the dist/ and work/ folders it builds in, so
`packaging/bundle.py --out DIR` takes only a new or empty folder or one an earlier run wrote. A
folder of the user's files, a file or a private device node is refused in one line before anything
is built, and stays byte for byte as it was."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from file_states import snapshot

BUNDLE = Path(__file__).resolve().parents[2] / "packaging" / "bundle.py"


def _run(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BUNDLE), "--out", str(out)], capture_output=True, text=True,
                          timeout=120, check=False)


def test_a_folder_of_the_users_files_is_refused_before_anything_is_built(tmp_path):
    mine = tmp_path / "mine"
    (mine / "dist" / "masklens").mkdir(parents=True)
    (mine / "dist" / "masklens" / "notes.txt").write_text("precious")
    (mine / "share-staging").mkdir()
    (mine / "share-staging" / "thesis.tex").write_text("precious too")
    before = snapshot(mine)
    done = _run(mine)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("bundle: ") and "masklens did not write there" in lines[0], done.stderr
    assert "Traceback" not in done.stderr and not (mine / "work").exists()
    assert snapshot(mine) == before


def test_a_private_device_node_is_refused(tmp_path):
    node = tmp_path / "node"
    try:
        os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs privileges here")
    done = _run(node)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "not a folder" in done.stderr
    assert stat.S_ISCHR(node.lstat().st_mode)

"""An unwritable log (a folder named masklens.log, a full disk) costs one line on stderr per
run, never Python's "--- Logging error ---" traceback on every record; the command still works."""

from __future__ import annotations

import os
import subprocess
import sys

from masklens.core.kinds.demo import demo_argv

from .conftest import fill


def _score(log_dir, tmp_path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MASKLENS_LOG_DIR": str(log_dir)}
    return subprocess.run([sys.executable, "-m", "masklens", "score", "cafe", *demo_argv("cafe"),
                           "--out", str(tmp_path / "s.json")], capture_output=True, text=True,
                          env=env, timeout=300)


def test_a_folder_in_place_of_the_log_file_is_one_line(tmp_path):
    (tmp_path / "logs" / "masklens.log").mkdir(parents=True)
    r = _score(tmp_path / "logs", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Logging error" not in r.stderr and "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "log file" in ln]
    assert len(lines) == 1 and "cannot write the log file" in lines[0] and "masklens.log" in lines[0]
    assert (tmp_path / "s.json").is_file()


def test_a_full_disk_under_the_log_is_one_line(tiny_fs, tmp_path):
    fill(tiny_fs)
    r = _score(tiny_fs, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Logging error" not in r.stderr and r.stderr.count("cannot write the log file") == 1

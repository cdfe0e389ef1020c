"""Single-file temp leftovers: a writer killed between writing ``.{name}.{pid}.{random}.tmp``
and renaming it leaves that file; the next successful write into the folder removes it (and any
masklens temp file nobody wrote for an hour), and nothing else: not a live writer's, not a
staging folder, not a file of another pattern. Real processes, a real SIGKILL, the real CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from masklens.core.cli import main
from masklens.core.files import temp_files
from masklens.core.files.io import atomic_write_bytes

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "cafe"

#: a writer that stops inside atomic_write_bytes, after its data went to the temp file and
#: before the rename (the parent kills it there)
WRITER = textwrap.dedent("""
    import os, sys, time
    from masklens.core.files.io import atomic_write_bytes
    def stuck(fd):
        print("written", flush=True)
        time.sleep(120)
    os.fsync = stuck
    atomic_write_bytes(sys.argv[1], b'{"partial": true}' * 4096)
""")


def _kill_mid_write(target: Path) -> tuple[int, list[Path]]:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "written"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    return proc.pid, sorted(target.parent.glob(f".{target.name}.{proc.pid}.*.tmp"))


@pytest.fixture
def fresh_sweeps(monkeypatch):
    monkeypatch.setattr(temp_files, "_last_sweep", {})


def test_the_next_cli_write_sweeps_what_a_killed_writer_left(tmp_path, capsys, fresh_sweeps):
    out = tmp_path / "score.json"
    pid, left = _kill_mid_write(out)
    assert len(left) == 1 and left[0].stat().st_size > 0 and not out.exists()
    # beside it: a live writer's temp, an hour-old one (its pid reused), other people's files
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        live = tmp_path / f".score.json.{sleeper.pid}.k3j4h5g6.tmp"
        live.write_bytes(b"being written")
        old = tmp_path / f".other.json.{sleeper.pid}.a1b2c3d4.tmp"
        old.write_bytes(b"left an hour ago")
        past = time.time() - temp_files.STALE_AFTER_S - 60
        os.utime(old, (past, past))
        staging = tmp_path / f".report.{pid}.zz99yy88.tmp"  # a staging folder: not this sweep's
        staging.mkdir()
        others = [tmp_path / "notes.tmp", tmp_path / f".score.json.{pid}.tmp", tmp_path / "score.json.tmp"]
        for p in others:
            p.write_text("mine")
        assert main(["score", "cafe", "--ann", str(DEMO / "ann.json"), "--pred", str(DEMO / "pred_demo.json"),
                     "--out", str(out)]) == 0
        capsys.readouterr()
        assert out.is_file()
        assert not left[0].exists() and not old.exists()
        assert live.exists() and staging.is_dir() and all(p.exists() for p in others)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_folder_is_listed_once_a_minute_per_process(tmp_path, monkeypatch, fresh_sweeps):
    pid, left = _kill_mid_write(tmp_path / "a.json")
    atomic_write_bytes(tmp_path / "b.json", b"{}")
    assert not left[0].exists()
    pid, left = _kill_mid_write(tmp_path / "a.json")  # killed again after this process swept
    atomic_write_bytes(tmp_path / "b.json", b"{}")
    assert left[0].exists()  # within SWEEP_EVERY_S: not listed again
    monkeypatch.setattr(temp_files, "SWEEP_EVERY_S", 0.0)
    atomic_write_bytes(tmp_path / "b.json", b"{}")
    assert not left[0].exists()


def test_on_a_network_filesystem_only_the_age_counts(tmp_path, monkeypatch):
    """Another host's writer has a pid this machine cannot look up."""
    from masklens.core.files import filesystems

    monkeypatch.setattr(filesystems, "filesystem_type", lambda _p: "nfs4")
    dead = tmp_path / ".x.json.2147483646.abcd1234.tmp"
    dead.write_bytes(b"another host's write")
    assert temp_files.sweep_stale_temp_files(tmp_path) == []
    past = time.time() - temp_files.STALE_AFTER_S - 60
    os.utime(dead, (past, past))
    assert temp_files.sweep_stale_temp_files(tmp_path) == [dead]


def test_a_cache_merge_sweeps_the_copies_of_merges_killed_before_their_rename(tmp_path, monkeypatch, fresh_sweeps):
    import numpy as np

    from masklens.core.cache import shared as cache_shared
    from masklens.core.cache.entries import PredictionKey
    from masklens.core.cache.predictions import PredictionCache
    from masklens.core.masks import Mask
    from masklens.core.models.base import SegmentResult

    monkeypatch.setenv(cache_shared.MODE_ENV, "files")  # parts merged into one file by copy + rename
    root = tmp_path / "cache"
    root.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    copy = root / f".predictions.sqlite3.{dead}.0badc0de.tmp"
    journal = root / f".predictions.sqlite3.{dead}.0badc0de.tmp-journal"
    for p in (copy, journal):
        p.write_bytes(b"SQLite format 3\0 half a merge")
    with PredictionCache(root) as cache:
        cache.put(PredictionKey.make("demo", "", "img", "a prompt"),
                  SegmentResult([Mask.from_array(np.ones((2, 2), bool))], [0.5], None, {}))
    assert (root / "predictions.sqlite3").is_file()
    assert not copy.exists() and not journal.exists()
    assert not list(root.glob(".predictions.sqlite3.*.tmp*"))  # its own copy was renamed, not left

"""The prediction cache on a network filesystem: per-process part files (real SQLite, real
processes) merged into one database; detection from /proc/mounts; a killed process's work kept."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from masklens.core.cache import shared as cache_shared
from masklens.core.cache.entries import PredictionKey
from masklens.core.cache.predictions import PredictionCache
from masklens.core.errors import MasklensError
from masklens.core.masks import Mask
from masklens.core.models.base import SegmentResult

MOUNTS = """\
/dev/vda / ext4 rw,relatime 0 0
server:/export/home /home nfs4 rw,vers=4.2 0 0
fs01@o2ib:/lustre /scratch lustre rw 0 0
/dev/vdb /home/local ext4 rw 0 0
"""


def test_filesystem_type_is_the_longest_mount_above_the_path():
    assert cache_shared.filesystem_type("/home/ann/.cache/masklens", MOUNTS) == "nfs4"
    assert cache_shared.filesystem_type("/home/local/cache", MOUNTS) == "ext4"
    assert cache_shared.filesystem_type("/homework/x", MOUNTS) == "ext4"  # not under /home
    assert cache_shared.filesystem_type("/scratch/u/c", MOUNTS) == "lustre"


def test_mode_follows_the_filesystem_unless_forced(tmp_path, monkeypatch):
    monkeypatch.delenv(cache_shared.MODE_ENV, raising=False)
    monkeypatch.setattr(cache_shared, "filesystem_type", lambda path, mounts=None: "nfs4")
    assert cache_shared.cache_mode(tmp_path) == "files"
    monkeypatch.setattr(cache_shared, "filesystem_type", lambda path, mounts=None: "ext4")
    assert cache_shared.cache_mode(tmp_path) == "wal"
    monkeypatch.setenv(cache_shared.MODE_ENV, "files")
    assert cache_shared.cache_mode(tmp_path) == "files"
    monkeypatch.setenv(cache_shared.MODE_ENV, "sometimes")
    with pytest.raises(MasklensError, match="auto, wal or files"):
        cache_shared.cache_mode(tmp_path)


def _result(v: int) -> SegmentResult:
    import numpy as np

    a = np.zeros((4, 5), bool)
    a[: v % 4 + 1] = True
    return SegmentResult([Mask.from_array(a)], [v / 100], None, {})


def _key(i: int) -> PredictionKey:
    return PredictionKey.make("demo", "", f"img{i}", f"prompt {i}")


_WRITER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {here!r})
    from test_cache_shared import _key, _result
    from masklens.core.cache.predictions import PredictionCache
    cache = PredictionCache({root!r})
    for i in range({start}, {stop}):
        cache.put(_key(i), _result(i))
    if {kill}:
        os.kill(os.getpid(), signal.SIGKILL)  # no close: the part stays behind
    cache.close()
""")


def _writer(root: Path, start: int, stop: int, kill: bool = False) -> subprocess.Popen:
    code = _WRITER.format(here=str(Path(__file__).parent), root=str(root), start=start, stop=stop, kill=kill)
    env = {**os.environ, cache_shared.MODE_ENV: "files"}
    return subprocess.Popen([sys.executable, "-c", code], env=env)


def test_processes_write_parts_merged_into_one_database(tmp_path, monkeypatch):
    monkeypatch.setenv(cache_shared.MODE_ENV, "files")
    root = tmp_path / "cache"
    procs = [_writer(root, 0, 20), _writer(root, 20, 40), _writer(root, 10, 30)]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    assert not list((root / "parts").glob("*")) and not list(root.glob("*-wal"))
    assert not (root / "predictions.lock").exists()
    with PredictionCache(root) as cache:
        assert cache.mode == "files" and len(cache) == 40
        got = cache.get_many(_key(i) for i in range(40))
        assert len(got) == 40 and got[_key(33).digest].scores == [0.33]
        cache.put(_key(99), _result(99))  # into this process's part, readable at once
        assert cache.get(_key(99)).scores == [0.99]
        with pytest.raises(MasklensError, match="network filesystem"):
            cache.clear()
    monkeypatch.setenv(cache_shared.MODE_ENV, "wal")  # the merged file is an ordinary database
    with PredictionCache(root) as cache:
        assert len(cache) == 41


def test_a_killed_process_keeps_its_work(tmp_path, monkeypatch):
    monkeypatch.setenv(cache_shared.MODE_ENV, "files")
    root = tmp_path / "cache"
    proc = _writer(root, 0, 5, kill=True)
    assert proc.wait(120) == -9
    left = list((root / "parts").glob("*.sqlite3"))
    assert len(left) == 1 and cache_shared._part_owner(left[0]) == (socket.gethostname(), proc.pid)
    with PredictionCache(root) as cache:  # opening merges the dead process's part
        assert len(cache.get_many(_key(i) for i in range(5))) == 5
        assert left[0] not in cache_shared.orphan_parts(root) and not left[0].exists()


def test_parts_of_other_hosts_are_merged_only_when_old(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    fresh, old = parts / "node-7-1234-abc.sqlite3", parts / "node-8-1234-abd.sqlite3"
    for p in (fresh, old):
        p.write_bytes(b"")
    past = time.time() - cache_shared.ORPHAN_AGE_S - 5
    os.utime(old, (past, past))
    assert cache_shared._part_owner(fresh) == ("node-7", 1234)
    assert cache_shared.orphan_parts(tmp_path) == [old]


_MID_TRANSACTION = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {here!r})
    from test_cache_shared import _key, _result
    from masklens.core.cache.entries import result_to_json
    from masklens.core.cache.predictions import PredictionCache
    import json
    cache = PredictionCache({root!r})
    for i in range(3):
        cache.put(_key(i), _result(i))  # committed
    db = cache._conn
    db.execute("BEGIN IMMEDIATE")
    for i in range(3, 400):  # enough pages that the journal is written
        db.execute("INSERT OR REPLACE INTO predictions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (f"k{{i}}", "demo", "", "img", "p", "", "", "x" * 2000, 0.0))
    os.kill(os.getpid(), signal.SIGKILL)  # killed mid-transaction: a hot journal stays
""")


def test_a_process_killed_mid_transaction_leaves_no_journal_behind(tmp_path, monkeypatch):
    monkeypatch.setenv(cache_shared.MODE_ENV, "files")
    root = tmp_path / "cache"
    code = _MID_TRANSACTION.format(here=str(Path(__file__).parent), root=str(root))
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, cache_shared.MODE_ENV: "files"})
    assert proc.wait(120) == -9
    assert len(list((root / "parts").glob("*.sqlite3-journal"))) == 1
    stray = root / "parts" / "gone-1-abc.sqlite3-journal"  # an older masklens removed the part only
    stray.write_bytes(b"x")
    with PredictionCache(root) as cache:  # merges the dead process's committed rows, rolls back the rest
        assert len(cache.get_many(_key(i) for i in range(3))) == 3 and len(cache) == 3
    assert list((root / "parts").glob("*-journal")) == []


def test_the_merge_touches_only_the_parts_masklens_wrote(tmp_path, monkeypatch):
    """A cache folder whose ``parts`` holds the user's own files — a database and journals under
    names like the parts', a link to a user file, a FIFO, a private device node — and a dead
    process's real part: the part is merged and removed, every file of the user's stays as it was."""
    monkeypatch.setenv(cache_shared.MODE_ENV, "files")
    root = tmp_path / "cache"
    parts = root / "parts"
    parts.mkdir(parents=True)
    dead = parts / f"{socket.gethostname()}-999999-abcdef.sqlite3"
    with PredictionCache(tmp_path / "elsewhere") as other:  # a real part, copied as a dead process's
        other.put(_key(1), _result(1))
        dead.write_bytes(other.part.read_bytes())
    past = time.time() - cache_shared.ORPHAN_AGE_S - 5
    own = tmp_path / "mine.txt"
    own.write_text("the user's notes")
    users = {parts / "notes.sqlite3": b"SQLite format 3\x00 mine", parts / "notes.sqlite3-journal": b"mine",
             parts / "old-1-zz.sqlite3-journal": b"not hex, not ours"}
    for path, data in users.items():
        path.write_bytes(data)
        os.utime(path, (past, past))
    (parts / "gone-2-abc.sqlite3-journal").symlink_to(own)
    os.mkfifo(parts / "gone-3-abc.sqlite3-journal")
    os.mkfifo(parts / "gone-4-abc.sqlite3")
    device = parts / "gone-5-abc.sqlite3-journal"
    try:
        os.mknod(device, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
    except PermissionError:
        device = None  # not root: the FIFOs stand for it
    with PredictionCache(root) as cache:
        assert len(cache.get_many([_key(1)])) == 1  # the dead process's part was merged
    assert not dead.exists()
    for path, data in users.items():
        assert path.read_bytes() == data
    assert (parts / "gone-2-abc.sqlite3-journal").is_symlink() and own.read_text() == "the user's notes"
    assert (parts / "gone-3-abc.sqlite3-journal").is_fifo() and (parts / "gone-4-abc.sqlite3").is_fifo()
    assert device is None or device.is_char_device()

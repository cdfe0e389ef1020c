"""A review store is opened with a role. READ changes nothing: the file's bytes and mtime, and
the folder's listing, are the same afterwards, for every schema version and both journal modes,
and in a folder the user cannot write. WRITE keeps one SQLite connection per store file per
process, however often the store is opened. Real SQLite files; the connections are counted as
the kernel sees them (/proc/self/fd)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from masklens.core.errors import MasklensError
from masklens.core.masks import Mask
from masklens.core.review.store import Role, open_store

from .old_stores import BENCH, old_store

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


def _state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file of the folder -> (sha256, mtime in ns)."""
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.iterdir())}


def _read_everything(path: Path) -> tuple[int, int, int]:
    with open_store(path, Role.READ) as st:
        return len(st.history()), len(st.correction_history()), len(st.queue(BENCH, "r0"))


@pytest.mark.parametrize("journal", ["wal", "delete"])
@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_reading_leaves_the_file_and_its_folder_as_they_were(tmp_path, version, journal):
    db = old_store(tmp_path / "r.sqlite", version, journal=journal)
    before = _state(tmp_path)
    assert _read_everything(db) == (3, 0, 0)
    with open_store(db, Role.READ) as st:
        assert st.schema_version == version  # read as it is, never upgraded
        with pytest.raises(MasklensError, match="read-only"):
            st.record(BENCH, "s9", "fine")
    assert _state(tmp_path) == before  # same bytes, same mtime, no -wal / -shm left behind


def test_reading_beside_another_process_writing_sees_its_rows_and_leaves_its_files(tmp_path):
    """A writer in another process holds the store (its -wal and -shm are there): a reader uses
    them and takes nothing away."""
    db = tmp_path / "r.sqlite"
    code = ("import sys\nfrom masklens.core.review.store import Role, open_store\n"
            "st = open_store(sys.argv[1], Role.WRITE, reviewer='ann')\n"
            "for i in range(5): st.record('cafe:demo', f's{i}', 'fine')\n"
            "print('ready', flush=True)\nsys.stdin.readline()\nst.close()\n")
    writer = subprocess.Popen([sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "ready"
        names = sorted(p.name for p in tmp_path.iterdir())
        assert names == ["r.sqlite", "r.sqlite-shm", "r.sqlite-wal"]
        assert _read_everything(db)[0] == 5
        assert sorted(p.name for p in tmp_path.iterdir()) == names
    finally:
        writer.communicate("done\n", timeout=60)
    assert writer.returncode == 0


def test_a_folder_the_user_cannot_write_is_read_without_a_trace(request):
    """A store in a 0555 folder, read by a user who cannot write there. Root may write anywhere
    (``os.access`` says so), so as root the reading runs as ``nobody`` (setpriv), which cannot."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: no user who cannot write the folder")
    base = Path(tempfile.mkdtemp(prefix="masklens-ro-", dir="/tmp"))  # traversable by that user
    os.chmod(base, 0o755)
    folder = base / "archive"
    folder.mkdir()
    request.addfinalizer(lambda: (os.chmod(folder, 0o755), shutil.rmtree(base, True)))
    for v in (1, 3, 4):
        old_store(folder / f"v{v}-wal.sqlite", v, journal="wal")
        old_store(folder / f"v{v}-delete.sqlite", v, journal="delete")
    for p in folder.iterdir():
        os.chmod(p, 0o444)
    os.chmod(folder, 0o555)
    before = _state(folder)
    code = ("import json, os, sys\nfrom masklens.core.review.store import Role, open_store\n"
            "out = {'can_write': os.access(sys.argv[1], os.W_OK)}\n"
            "for name in sorted(os.listdir(sys.argv[1])):\n"
            "    with open_store(os.path.join(sys.argv[1], name), Role.READ) as st:\n"
            "        out[name] = len(st.history())\n"
            "print(json.dumps(out))\n")
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    r = subprocess.run([*user, sys.executable, "-c", code, str(folder)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got.pop("can_write") is False  # the check is honest: this user cannot write there
    assert got == dict.fromkeys(before, 3)
    assert _state(folder) == before


# ------------------------------------------------------------------ one writer per file
def _fds_on(path: Path) -> int:
    """How many file descriptors of this process are open on ``path`` (the store file itself)."""
    real = os.path.realpath(path)
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}") == real
        except OSError:
            continue
    return n


@needs_proc
def test_opening_a_store_twice_for_writing_shares_one_connection(tmp_path):
    db = tmp_path / "r.sqlite"
    a = open_store(db, Role.WRITE, reviewer="ann")
    b = open_store(tmp_path / "." / "r.sqlite", Role.WRITE, reviewer="bob")  # another spelling
    assert _fds_on(db) == 1
    a.record(BENCH, "s1", "fine")
    b.record(BENCH, "s1", "gt_wrong")
    assert {v.reviewer for v in a.current(BENCH)} == {"ann", "bob"}
    reader = open_store(db, Role.READ)  # read in the same process: the writer's connection
    assert _fds_on(db) == 1 and len(reader.current(BENCH)) == 2
    with pytest.raises(MasklensError, match="read-only"):
        reader.record(BENCH, "s2", "fine")
    reader.close()
    a.close()
    a.close()  # closing twice gives back one use only
    with pytest.raises(MasklensError, match="closed"):
        a.history()
    assert b.record(BENCH, "s2", "fine").reviewer == "bob"  # b still writes
    assert _fds_on(db) == 1
    b.close()
    assert _fds_on(db) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite"]  # the last close checkpointed
    with open_store(db, Role.WRITE) as again:
        assert len(again.history()) == 3


@needs_proc
def test_an_unclosed_store_gives_its_use_back_when_dropped(tmp_path):
    import gc

    db = tmp_path / "r.sqlite"
    open_store(db, Role.WRITE).add_correction(BENCH, "s1", "gt", None, Mask.from_array(np.ones((2, 2), bool)))
    gc.collect()
    assert _fds_on(db) == 0


def test_a_role_is_required(tmp_path):
    with pytest.raises(TypeError, match="Role.READ or Role.WRITE"):
        open_store(tmp_path / "r.sqlite", "write")  # type: ignore[arg-type]


def test_reading_a_missing_store_creates_nothing(tmp_path):
    with pytest.raises(MasklensError):
        open_store(tmp_path / "none.sqlite", Role.READ)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("journal", ["wal", "delete"])
@pytest.mark.parametrize("argv", [
    ["review", "queue", "{db}", "--benchmark", BENCH],
    ["review", "queue", "{db}", "--benchmark", BENCH, "--reviewer", "ann"],
    ["review", "summary", "{db}"],
    ["review", "export", "{db}", "--out", "{out}/v.json", "--history"],
    ["review", "agreement", "{db}", "--json"],
    ["review", "merge", "{out}/merged.sqlite", "{db}"],
], ids=["queue", "queue-reviewer", "summary", "export", "agreement", "merge-source"])
def test_reading_commands_leave_a_current_store_as_it_was(tmp_path, capsys, journal, argv):
    """A store of this schema with verdicts, corrections and queues, in either journal mode."""
    from masklens.core.cli import main

    folder, out = tmp_path / "store", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    db = folder / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ann") as st:
        st.assign(BENCH, ["s1", "s2", "s3"], ["ann", "bo"], overlap=0.5)
        st.record(BENCH, "s1", "fine")
        st.record(BENCH, "s1", "model_wrong", reviewer="bo")
        st.add_correction(BENCH, "s2", "gt", 0, Mask.from_array(np.ones((3, 3), bool)), tool="brush")
    if journal == "delete":
        with sqlite3.connect(db) as con:
            con.execute("PRAGMA journal_mode = DELETE")
    before = _state(folder)
    assert main([a.format(db=db, out=out) for a in argv]) == 0, capsys.readouterr().err
    assert _state(folder) == before


def test_a_store_replaced_under_its_path_is_opened_afresh(tmp_path):
    """The writer registry follows the file, not the name: a store deleted and made again is a
    new file, never served the connection of the one that was deleted."""
    db = tmp_path / "r.sqlite"
    old = open_store(db, Role.WRITE)
    old.record(BENCH, "s1", "fine")
    for p in tmp_path.iterdir():
        p.unlink()
    with open_store(db, Role.WRITE) as new:
        assert new.history() == []
    assert len(old.history()) == 1  # the old connection still reads its (deleted) file
    old.close()

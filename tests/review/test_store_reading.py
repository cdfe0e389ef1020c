"""Reading a review store never changes it, and its rows are read as untrusted input: an older
store stays at its schema and journal mode, a store the user may only read is readable, a BLOB
in a TEXT cell is decoded or named (never a traceback), a newer store is "made by a newer
masklens", merges are idempotent for rows without a uid and count what they skip, a store that
keeps failing is copied aside once. Real SQLite files, the real CLI."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from masklens.core.cli import main
from masklens.core.review.migrations import SCHEMA_VERSION
from masklens.core.review.store import Role, open_store

from .old_stores import old_store

BENCH = "cafe:demo"


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("command", ["export", "summary", "agreement", "check"])
def test_reading_commands_leave_an_older_store_byte_for_byte(tmp_path, capsys, version, command):
    db = old_store(tmp_path / "old.sqlite", version)
    before = _digest(db)
    argv = {"export": ["review", "export", str(db), "--out", str(tmp_path / "o.csv"), "--history"],
            "summary": ["review", "summary", str(db)],
            "agreement": ["review", "agreement", str(db), "--json"],
            "check": ["review", "check", str(db)]}[command]
    rc = main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert _digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("old")) == ["old.sqlite"]
    if command == "export":
        assert (tmp_path / "o.csv").read_text().count("model_wrong") == 3
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == version
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_a_store_the_user_may_only_read_is_readable(tmp_path, request):
    """Shared or archived: a read-only file in a read-only folder (checked as another user,
    since root ignores permissions)."""
    if os.geteuid() != 0 and not hasattr(os, "setuid"):
        pytest.skip("needs a second user")
    base = Path(tempfile.mkdtemp(prefix="masklens-ro-", dir="/tmp"))  # traversable by the other user
    os.chmod(base, 0o755)
    request.addfinalizer(lambda: (os.chmod(base / "archive", 0o755), shutil.rmtree(base, True)))
    folder = base / "archive"
    folder.mkdir()
    db = folder / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ann") as st:  # a WAL store, as masklens writes them
        st.record(BENCH, "s1", "gt_wrong")
    os.chmod(db, 0o444)
    os.chmod(folder, 0o555)
    code = ("import sys; from masklens.core.cli import main; "
            f"sys.exit(main(['review', 'summary', {str(db)!r}]))")
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    if user and subprocess.run(["which", "setpriv"], capture_output=True).returncode != 0:
        pytest.skip("setpriv is not installed")
    r = subprocess.run([*user, sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "MASKLENS_LOG_DIR": str(tmp_path / "logs-none")}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "gt_wrong" in r.stdout and "read-only" not in r.stderr


def test_a_blob_in_a_text_cell_is_found_by_check_and_never_a_traceback(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ann") as st:
        st.record(BENCH, "s1", "gt_wrong", note="fine")
        st.record(BENCH, "s2", "model_wrong")
    con = sqlite3.connect(db)
    con.execute("UPDATE verdicts SET note = CAST('utf8 note' AS BLOB) WHERE sample_id = 's1'")
    con.execute("UPDATE verdicts SET reviewer = X'FFFE00' WHERE sample_id = 's2'")
    con.commit()
    con.close()
    assert main(["review", "check", str(db)]) == 1
    out = capsys.readouterr().out
    assert "DAMAGED" in out and "field 'note' holds binary data" in out and "field 'reviewer'" in out
    for argv in (["review", "export", str(db), "--out", str(tmp_path / "h.csv"), "--history"],
                 ["review", "summary", str(db)], ["review", "agreement", str(db)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "record row id" in err and "field 'reviewer'" in err
    con = sqlite3.connect(db)  # the undecodable one fixed: the UTF-8 blob reads as text
    con.execute("UPDATE verdicts SET reviewer = 'bob' WHERE sample_id = 's2'")
    con.commit()
    con.close()
    assert main(["review", "export", str(db), "--out", str(tmp_path / "h.csv"), "--history"]) == 0
    assert "utf8 note" in (tmp_path / "h.csv").read_text()


def test_a_newer_store_is_made_by_a_newer_masklens_not_damaged(tmp_path, capsys):
    db = tmp_path / "new.sqlite"
    with open_store(db, Role.WRITE, reviewer="ann") as st:
        st.record(BENCH, "s1", "gt_wrong")
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    assert main(["review", "check", str(db)]) == 1
    cap = capsys.readouterr()
    assert "made by a newer masklens" in cap.out and "DAMAGED" not in cap.out and ".recover" not in cap.err
    assert main(["review", "summary", str(db)]) == 2
    err = capsys.readouterr().err
    assert "made by a newer masklens" in err and "damaged" not in err


def test_merge_is_idempotent_for_rows_without_uid_and_counts_what_it_skips(tmp_path, capsys):
    src = tmp_path / "theirs.sqlite"
    con = sqlite3.connect(src)  # a foreign store: the columns, no constraints, some rows broken
    con.execute("CREATE TABLE verdicts (id INTEGER PRIMARY KEY, benchmark TEXT, sample_id TEXT, "
                "prompt_id TEXT, verdict TEXT, note TEXT, reviewer TEXT, time TEXT, uid TEXT, retracts TEXT)")
    rows = [(BENCH, "s1", "", "gt_wrong", "", "eve", "2026-01-01T00:00:00.000Z", None, ""),
            (BENCH, "s2", "", "model_wrong", "", "eve", "2026-01-02T00:00:00.000Z", None, ""),
            (BENCH, None, "", "model_wrong", "", "eve", "2026-01-03T00:00:00.000Z", "u3", ""),
            (BENCH, "s4", "", "model_wrong", "", None, "2026-01-04T00:00:00.000Z", "u4", "")]
    con.executemany("INSERT INTO verdicts (benchmark, sample_id, prompt_id, verdict, note, reviewer, "
                    "time, uid, retracts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    con.commit()
    con.close()
    before = _digest(src)
    target = tmp_path / "mine.sqlite"
    for _ in range(3):
        assert main(["review", "merge", str(target), str(src)]) == 0
    err = capsys.readouterr().err
    assert err.count("merged 2 new verdict and correction row(s)") == 1
    assert err.count("merged 0 new verdict and correction row(s)") == 2
    assert err.count("2 row(s) not merged") == 3
    with open_store(target, Role.READ) as st:
        assert len(st.history()) == 2
    assert _digest(src) == before


def test_a_failing_damaged_store_is_copied_aside_once(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE, reviewer="ann") as st:
        for i in range(400):
            st.record(BENCH, f"s{i}", "model_wrong", note="n" * 200)
    rng = np.random.default_rng(0)
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        for off in range(4096 * 2, size, size // 8):
            fh.seek(off)
            fh.write(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    for i in range(3):
        assert main(["review", "summary", str(db)]) == 2
        assert "is damaged" in capsys.readouterr().err
        copies = [p for p in tmp_path.glob("r.sqlite.damaged-*") if not p.name.endswith("-wal")]
        assert len(copies) == 1
        if i == 0:  # as if it was kept by a run a while ago (the names are stamped to the second)
            for part in tmp_path.glob(f"{copies[0].name}*"):  # the copy and its -wal
                part.rename(tmp_path / part.name.replace(copies[0].name, "r.sqlite.damaged-20260101-000000"))
    assert stat.S_ISREG(copies[0].stat().st_mode) and copies[0].name.endswith("20260101-000000")

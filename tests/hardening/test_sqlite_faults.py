"""Real SQLite faults in the review store and the prediction cache: a full disk (SQLITE_FULL from
`PRAGMA max_page_count`, and ENOSPC on a real tmpfs), garbage written into database pages, a
dropped table and a 0-byte file — each a clear message, never a traceback or a silent new store."""

from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest

from masklens.core.cache.entries import PredictionKey
from masklens.core.cache.predictions import PredictionCache
from masklens.core.cli import main
from masklens.core.errors import MasklensError
from masklens.core.masks import Mask
from masklens.core.models.base import SegmentResult
from masklens.core.review.migrations import SCHEMA_VERSION
from masklens.core.review.store import ReviewStore, Role, open_store

from .conftest import fill

BENCH = "cafe:demo"


def _store_with(path, n: int, note_len: int = 200) -> list[str]:
    with open_store(path, Role.WRITE, reviewer="ann") as st:
        return [st.record(BENCH, f"s{i}", "model_wrong", note="n" * note_len).uid for i in range(n)]


def _cap_pages(st: ReviewStore) -> None:
    """Let the store's connection grow the file by no more page: the next new page is SQLITE_FULL."""
    pages = st._db.execute("PRAGMA page_count").fetchone()[0]
    st._db.execute(f"PRAGMA max_page_count = {pages}")


# ------------------------------------------------------------------ review store: disk full
def test_record_on_a_full_database_says_disk_full_and_keeps_acknowledged_verdicts(tmp_path):
    db = tmp_path / "r.sqlite"
    acknowledged = _store_with(db, 5)
    with open_store(db, Role.WRITE, reviewer="ann") as st:
        _cap_pages(st)
        with pytest.raises(MasklensError) as info:
            for i in range(10_000):
                acknowledged.append(st.record(BENCH, f"t{i}", "fine", note="x" * 3000).uid)
        msg = str(info.value)
        assert "disk full while writing" in msg and str(db) in msg
        assert "cannot rollback" not in msg
        assert not st._db.in_transaction
    with open_store(db, Role.WRITE) as st:
        assert [v.uid for v in st.history()] == acknowledged  # nothing acknowledged was lost


def test_record_on_a_real_full_filesystem(tiny_fs):
    db = tiny_fs / "r.sqlite"
    acknowledged = _store_with(db, 3)
    st = open_store(db, Role.WRITE, reviewer="ann")
    fill(tiny_fs)
    with pytest.raises(MasklensError) as info:
        for i in range(10_000):
            acknowledged.append(st.record(BENCH, f"t{i}", "fine", note="x" * 3000).uid)
    assert "disk full while writing" in str(info.value)
    assert "cannot rollback" not in str(info.value)
    st.close()
    os.unlink(tiny_fs / "filler")
    with open_store(db, Role.WRITE) as again:
        assert [v.uid for v in again.history()] == acknowledged


# ------------------------------------------------------------------ review store: damage
def _garbage_pages(db, first: int) -> None:
    """Overwrite every page from ``first`` (1-based) on with random bytes."""
    with sqlite3.connect(db) as c:
        size = c.execute("PRAGMA page_size").fetchone()[0]
        count = c.execute("PRAGMA page_count").fetchone()[0]
    assert count > first, "the test store is too small to damage"
    rng = np.random.default_rng(0)
    with open(db, "r+b") as fh:
        for page in range(first, count + 1):
            fh.seek((page - 1) * size)
            fh.write(rng.integers(0, 256, size, dtype=np.uint8).tobytes())


@pytest.mark.parametrize("command", [["summary"], ["export", "--out", "OUT.csv"], ["agreement"]])
def test_corrupt_pages_give_a_clean_error_with_a_copy(tmp_path, capsys, command):
    db = tmp_path / "r.sqlite"
    _store_with(db, 400)
    _garbage_pages(db, 6)
    argv = ["review", *[str(tmp_path / a) if a == "OUT.csv" else a for a in command], str(db)]
    if command[0] == "export":
        argv = ["review", "export", str(db), "--out", str(tmp_path / "out.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is damaged" in err and "a copy was kept at" in err and "masklens review check" in err
    assert "Traceback" not in err
    copies = [p for p in tmp_path.glob("r.sqlite.damaged-*") if not p.name.endswith("-wal")]
    assert len(copies) == 1 and copies[0].read_bytes()[:16] == b"SQLite format 3\x00"
    assert not (tmp_path / "out.csv").exists()
    assert main(["review", "check", str(db)]) == 1
    out = capsys.readouterr().out
    assert "DAMAGED" in out and ("integrity" in out or "cannot read" in out)


def test_missing_table_is_a_clean_error(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    _store_with(db, 3)
    with sqlite3.connect(db) as c:
        c.execute("DROP TABLE verdicts")
    assert main(["review", "summary", str(db)]) == 2
    err = capsys.readouterr().err
    assert "is damaged" in err and "no such table: verdicts" in err
    assert main(["review", "check", str(db)]) == 1
    assert "'verdicts' table is missing" in capsys.readouterr().out


def test_zero_byte_file_is_not_turned_into_a_store(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    db.write_bytes(b"")
    for argv in (["review", "summary", str(db)],
                 ["review", "export", str(db), "--out", str(tmp_path / "v.csv")],
                 ["review", "merge", str(tmp_path / "target.sqlite"), str(db)],
                 ["review", "check", str(db)]):
        assert main(argv) == 2, argv
        assert "empty file (0 bytes)" in capsys.readouterr().err
        assert db.stat().st_size == 0
    assert not (tmp_path / "target.sqlite").exists()
    assert not list(tmp_path.glob("r.sqlite-*"))  # no -wal/-shm either


def test_an_sqlite_file_of_another_program_is_refused_by_read_commands(tmp_path, capsys):
    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE t (x)")
    assert main(["review", "summary", str(db)]) == 2
    assert "not a masklens review database" in capsys.readouterr().err
    with sqlite3.connect(db) as c:
        assert [r[0] for r in c.execute("SELECT name FROM sqlite_master")] == ["t"]


def test_check_a_sound_store(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    _store_with(db, 7)
    assert main(["review", "check", str(db)]) == 0
    assert capsys.readouterr().out.strip() == f"{db}: ok (schema version {SCHEMA_VERSION}, 7 verdict rows)"


def test_report_reviews_with_a_damaged_or_empty_store(tmp_path, capsys):
    from masklens.core.kinds.demo import demo_argv, demo_kinds

    if "cafe" not in demo_kinds():
        pytest.skip("no CAFE demo")
    damaged, empty = tmp_path / "d.sqlite", tmp_path / "e.sqlite"
    _store_with(damaged, 400)
    _garbage_pages(damaged, 6)
    empty.write_bytes(b"")
    for db, text in ((damaged, "is damaged"), (empty, "empty file (0 bytes)")):
        rc = main(["report", "cafe", *demo_argv("cafe"), "--reviews", str(db), "--no-sweep",
                   "--out", str(tmp_path / "rep")])
        assert rc == 2 and text in capsys.readouterr().err
    assert empty.stat().st_size == 0 and not (tmp_path / "rep").exists()


# ------------------------------------------------------------------ prediction cache
def _result(seed: int) -> SegmentResult:
    rng = np.random.default_rng(seed)
    return SegmentResult(masks=[Mask.from_array(rng.random((64, 64)) > 0.5) for _ in range(4)],
                         scores=[0.5] * 4)


def test_cache_disk_full_disables_the_cache_with_one_warning(tmp_path, capsys):
    pc = PredictionCache(tmp_path)
    kept = PredictionKey.make("m", "c", "img", "kept")
    pc.put(kept, _result(0))
    pages = pc._conn.execute("PRAGMA page_count").fetchone()[0]
    pc._conn.execute(f"PRAGMA max_page_count = {pages}")
    for i in range(200):  # raises nothing: the run goes on without the cache
        pc.put(PredictionKey.make("m", "c", "img", f"p{i}"), _result(i))
    assert pc.disabled and "disk full while writing" in pc.disabled
    err = capsys.readouterr().err
    assert err.count("prediction cache disabled for this run") == 1
    assert pc.get(kept) is None and pc.get_many([kept]) == {}  # off for the rest of the run
    pc.close()
    with PredictionCache(tmp_path) as again:
        assert again.get(kept) is not None  # what was committed is still there


def test_predict_goes_on_when_the_cache_disk_is_full(tiny_fs, tmp_path, capsys):
    from masklens.core.kinds.demo import demo_argv, demo_kinds

    if "cafe" not in demo_kinds():
        pytest.skip("no CAFE demo")
    cache = tiny_fs / "cache"
    PredictionCache(cache).close()
    fill(tiny_fs)
    out = tmp_path / "pred.json"
    rc = main(["predict", "cafe", "--model", "demo", *demo_argv("cafe", with_predictions=False),
               "--quiet", "--cache-dir", str(cache), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "prediction cache disabled for this run: disk full while writing" in err
    assert out.is_file()


def test_cache_with_garbage_pages_is_disabled_not_fatal(tmp_path, capsys):
    with PredictionCache(tmp_path) as pc:
        pc.put_many([(PredictionKey.make("m", "c", "img", f"p{i}"), _result(i)) for i in range(40)])
    _garbage_pages(tmp_path / PredictionCache.FILENAME, 4)
    with PredictionCache(tmp_path) as pc:
        got = [pc.get(PredictionKey.make("m", "c", "img", f"p{i}")) for i in range(40)]
        pc.put(PredictionKey.make("m", "c", "img", "new"), _result(99))
    assert got == [None] * 40  # misses: the model would recompute them
    assert pc.disabled and "is damaged" in pc.disabled
    assert capsys.readouterr().err.count("prediction cache disabled for this run") == 1


def test_cache_on_a_disk_full_from_the_start(tiny_fs, capsys):
    fill(tiny_fs)
    key = PredictionKey.make("m", "c", "img", "p")
    with PredictionCache(tiny_fs / "new" / "cache") as pc:
        assert pc.disabled and "disk full while" in pc.disabled
        pc.put(key, _result(1))
        assert pc.get(key) is None and len(pc) == 0
    assert capsys.readouterr().err.count("prediction cache disabled for this run") == 1

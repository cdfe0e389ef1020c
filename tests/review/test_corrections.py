"""Ground-truth corrections: stored as data (append-only, retractable, migrated), applied to a
copy of the benchmark, conflicts between reviewers found, carried by merges."""

import sqlite3

import numpy as np
import pytest

import masklens.core as ml
from masklens.core.errors import MasklensError
from masklens.core.kinds.demo import demo_files
from masklens.core.masks import Mask
from masklens.core.review.check import check_review_db
from masklens.core.review.corrections import (
    changed_samples,
    corrected_benchmark,
    correction_conflicts,
)
from masklens.core.review.migrations import MIGRATIONS, SCHEMA_VERSION
from masklens.core.review.store import Role, open_store

from .hostile_stores import HOSTILE_CELLS, short, spoil_cell


def _square(h, w, y0, y1, x0, x1):
    a = np.zeros((h, w), bool)
    a[y0:y1, x0:x1] = True
    return Mask.from_array(a)


def test_corrections_are_appended_retracted_and_read_back(tmp_path):
    m1, m2 = _square(8, 8, 0, 4, 0, 4), _square(8, 8, 2, 6, 2, 6)
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ana") as st:
        v = st.record("k:b", "s1", "gt_wrong")
        a = st.add_correction("k:b", "s1", "target", 0, m1, tool="brush", note="too small",
                              verdict_uid=v.uid)
        b = st.add_correction("k:b", "s1", "target", 0, m2, tool="model")
        new = st.add_correction("k:b", "s1", "target", None, m1, tool="new", category=7)
        gone = st.add_correction("k:b", "s2", "target", 1, None, tool="delete")
        assert [c.uid for c in st.corrections("k:b")] == [b.uid, new.uid, gone.uid]
        st.retract_correction(b)  # undo: the earlier correction of the instance is back
        assert [c.uid for c in st.corrections("k:b")] == [a.uid, new.uid, gone.uid]
        with pytest.raises(MasklensError, match="new instance needs a mask"):
            st.add_correction("k:b", "s1", "target", None, None)
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ben") as st:  # reopened: all kept
        got = {c.uid: c for c in st.corrections("k:b", reviewer="ana")}
        assert got[a.uid].mask == m1 and got[a.uid].verdict_uid == v.uid
        assert got[a.uid].note == "too small" and got[a.uid].tool == "brush"
        assert got[new.uid].instance is None and got[new.uid].category == 7
        assert got[gone.uid].mask is None and got[gone.uid].deleted
        assert len(st.correction_history("k:b")) == 5
        assert st.corrections("k:b", reviewer="ben") == []
    assert changed_samples(got.values()) == {"s1", "s2"}


def _store_at(path, version):
    """A store built by the migrations up to ``version``, holding one verdict."""
    db = sqlite3.connect(path)
    for step in MIGRATIONS[:version]:
        step(db)
    if version:
        cols = "benchmark, sample_id, prompt_id, verdict, note, reviewer, time"
        db.execute(f"INSERT INTO verdicts ({cols}) VALUES "
                   "('k:b', 's1', '', 'gt_wrong', 'old', 'ana', '2026-01-01T00:00:00.000Z')")
        if version >= 2:
            db.execute("UPDATE verdicts SET uid = 'u-old'")
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
def test_every_earlier_schema_migrates_to_corrections(tmp_path, version):
    path = tmp_path / f"v{version}.sqlite"
    _store_at(path, version)
    m = _square(4, 4, 0, 2, 0, 2)
    with open_store(path, Role.WRITE, reviewer="ana") as st:
        assert st.schema_version == SCHEMA_VERSION
        assert [v.note for v in st.current("k:b")] == (["old"] if version else [])
        c = st.add_correction("k:b", "s1", "gt", 0, m, tool="brush")
        st.assign("k:b", ["s1", "s2"], ["ana", "ben"], seed=1)
    with open_store(path, Role.WRITE, reviewer="ana") as st:
        assert st.corrections("k:b") == [c]
        assert sorted(st.queue("k:b", "ana") + st.queue("k:b", "ben")) == ["s1", "s2"]


@pytest.fixture(scope="module")
def cafe():
    files = demo_files("cafe")
    return ml.load_benchmark("cafe", **files)


def test_corrected_benchmark_is_a_new_benchmark(cafe, tmp_path):
    s0, s1 = cafe.samples[0], cafe.samples[1]
    pos = s0.gts["pos_entry"]
    h, w = pos.height, pos.width
    before = list(pos.masks)
    new0 = _square(h, w, 0, h // 2, 0, w // 2)
    extra = _square(h, w, h // 2, h, w // 2, w)
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ana") as st:
        key = "cafe:" + cafe.name
        st.add_correction(key, s0.id, "pos_entry", 0, new0, tool="brush")
        st.add_correction(key, s0.id, "pos_entry", None, extra, tool="new", category=1)
        st.add_correction(key, s1.id, "neg_entry", None, extra, tool="new")
        rows = st.corrections(key)
    out = corrected_benchmark(cafe, rows)
    assert out is not cafe and out.samples is not cafe.samples
    assert pos.masks == before and cafe.samples[0] is s0  # the original untouched
    c0 = out.sample(s0.id)
    assert c0 is not s0
    assert c0.gts["pos_entry"].masks == [new0, *before[1:], extra]
    assert c0.gts["target"].masks == [new0]  # CAFE's target follows the positive's first instance
    assert c0.gts["pos_entry"].crowd[-1] is False
    assert c0.gts["pos_entry"].meta["category_ids"][-1] == 1
    assert out.sample(s1.id).gts["neg_entry"].masks[-1] == extra
    untouched = [s for s in out.samples if s.id not in {s0.id, s1.id}]
    assert all(a is b for a, b in zip(untouched, [s for s in cafe.samples
                                                  if s.id not in {s0.id, s1.id}], strict=True))


def test_deletion_and_bad_corrections(cafe, tmp_path):
    s0 = cafe.samples[0]
    key = "cafe:" + cafe.name
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ana") as st:
        n = len(s0.gts["pos_entry"].masks)
        everything = [st.add_correction(key, s0.id, "pos_entry", i, None, tool="delete")
                      for i in range(n)]
        with pytest.raises(MasklensError, match="delete every instance of the positive"):
            corrected_benchmark(cafe, everything)  # CAFE would drop the pair
        h, w = s0.gts["pos_entry"].height, s0.gts["pos_entry"].width
        extra = st.add_correction(key, s0.id, "pos_entry", None, _square(h, w, 0, 2, 0, 2))
        out = corrected_benchmark(cafe, st.corrections(key))
        assert out.sample(s0.id).gts["pos_entry"].masks == [extra.mask]
        assert out.sample(s0.id).gts["target"].masks == [extra.mask]
        bad = st.add_correction(key, s0.id, "pos_entry", n + 5, None, tool="delete")
        with pytest.raises(MasklensError, match=f"correction {bad.uid}.*instance {n + 5} does not exist"):
            corrected_benchmark(cafe, [bad])
        small = st.add_correction(key, s0.id, "pos_entry", 0, _square(3, 3, 0, 1, 0, 1))
        with pytest.raises(MasklensError, match="mask is 3x3"):
            corrected_benchmark(cafe, [small])
        ghost = st.add_correction(key, "no-such-sample", "pos_entry", 0, None)
        with pytest.raises(MasklensError, match="no-such-sample"):
            corrected_benchmark(cafe, [ghost])
        nogt = st.add_correction(key, s0.id, "nothing", 0, None)
        with pytest.raises(MasklensError, match="no ground truth 'nothing'"):
            corrected_benchmark(cafe, [nogt])


def test_conflicts_between_reviewers(tmp_path):
    a_mask, b_mask = _square(6, 6, 0, 3, 0, 3), _square(6, 6, 1, 5, 1, 5)
    with open_store(tmp_path / "ana.sqlite", Role.WRITE, reviewer="ana") as ana:
        ana.add_correction("k:b", "s1", "gt", 0, a_mask, tool="brush")
        ana.add_correction("k:b", "s2", "gt", 0, a_mask, tool="brush")  # ben agrees here
        ana.add_correction("k:b", "s3", "gt", 1, None, tool="delete")
        ana.add_correction("k:b", "s4", "gt", None, a_mask, tool="new")
    with open_store(tmp_path / "ben.sqlite", Role.WRITE, reviewer="ben") as ben:
        ben.add_correction("k:b", "s1", "gt", 0, b_mask, tool="model")
        ben.add_correction("k:b", "s2", "gt", 0, a_mask, tool="polygon")
        ben.add_correction("k:b", "s3", "gt", 1, b_mask, tool="brush")
        ben.add_correction("k:b", "s4", "gt", None, b_mask, tool="new")  # added: no conflict
        undone = ben.add_correction("k:b", "s5", "gt", 0, b_mask)
        ben.retract_correction(undone)
    with open_store(tmp_path / "ana.sqlite", Role.WRITE, reviewer="ana") as ana:
        ana.add_correction("k:b", "s5", "gt", 0, a_mask)
        assert ana.merge(tmp_path / "ben.sqlite") == 6  # corrections travel with the merge
        assert ana.merge(tmp_path / "ben.sqlite") == 0  # idempotent
        conflicts = correction_conflicts(ana.corrections("k:b"))
    assert [(c.sample_id, c.instance, c.reviewers) for c in conflicts] == [
        ("s1", 0, ["ana", "ben"]), ("s3", 1, ["ana", "ben"])]
    assert "ana: deleted (delete); ben: new mask of area 16 (brush)" in conflicts[1].describe()


def test_check_names_a_missing_corrections_table(tmp_path):

    path = tmp_path / "r.sqlite"
    open_store(path, Role.WRITE).close()
    assert check_review_db(path).ok
    db = sqlite3.connect(path)
    db.execute("DROP TABLE corrections")
    db.commit()
    db.close()
    assert check_review_db(path).problems == ["the 'corrections' table is missing"]


def test_a_damaged_correction_row_is_a_clear_error(tmp_path):
    path = tmp_path / "r.sqlite"
    with open_store(path, Role.WRITE, reviewer="ana") as st:
        c = st.add_correction("k:b", "s1", "gt", 0, _square(4, 4, 0, 2, 0, 2))
    db = sqlite3.connect(path)
    db.execute("UPDATE corrections SET mask = '{\"size\": [4, 4], \"counts\": \"##\"}'")
    db.commit()
    db.close()
    with open_store(path, Role.WRITE) as st, pytest.raises(MasklensError) as err:
        st.corrections("k:b")
    assert str(err.value).startswith(f"{path}, record corrections row id 1, field 'mask': corrupt RLE")
    assert c.uid


@pytest.mark.parametrize("cell", list(HOSTILE_CELLS), ids=short)
def test_a_hostile_cell_is_named_by_file_table_row_and_column(tmp_path, cell):
    path = tmp_path / "r.sqlite"
    with open_store(path, Role.WRITE, reviewer="ana") as st:
        st.add_correction("k:b", "s1", "gt", 0, _square(4, 4, 0, 2, 0, 2))
    spoil_cell(path, cell)
    column = HOSTILE_CELLS[cell]
    with open_store(path, Role.READ) as st, pytest.raises(MasklensError) as err:
        st.corrections("k:b")
    assert str(err.value).startswith(f"{path}, record corrections row id 1, field '{column}': ")
    found = check_review_db(path)
    assert not found.ok and found.problems == [f"corrections row id 1: field '{column}' "
                                               + err.value.detail]


def test_assignment_cells_are_checked_on_read_and_by_check(tmp_path):
    path = tmp_path / "r.sqlite"
    with open_store(path, Role.WRITE, reviewer="ana") as st:
        st.assign("k:b", ["s1", "s2"], ["ana", "ben"])
    db = sqlite3.connect(path)
    db.execute("UPDATE assignments SET shared = x'00' WHERE sample_id = 's1'")
    db.commit()
    db.close()
    with open_store(path, Role.READ) as st, pytest.raises(MasklensError, match="field 'shared'"):
        st.queue_items("k:b", "ana") + st.queue_items("k:b", "ben")
    assert any(p.startswith("assignments row id ") and "'shared'" in p
               for p in check_review_db(path).problems)


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_an_earlier_store_read_only_has_no_corrections_and_merges_unchanged(tmp_path, version):
    """Reading never upgrades: an older store opened read-only reads as having
    no corrections or queues, and merging it leaves it at its version."""
    old = tmp_path / f"v{version}.sqlite"
    _store_at(old, version)
    before = old.read_bytes()
    with open_store(old, Role.READ) as st:
        assert st.correction_history() == [] and st.corrections("k:b") == []
        assert st.queue("k:b", "ana") == [] and st.assigned_reviewers("k:b") == []
    with open_store(tmp_path / "mine.sqlite", Role.WRITE, reviewer="ben") as mine:
        assert mine.merge(old) == 1
        assert [v.note for v in mine.current("k:b")] == ["old"]
    assert old.read_bytes() == before

"""Batch verdicts (the gallery): one row per sample, as if recorded one by one, written
in one transaction; undone with one retraction row each, the verdicts before them current again."""

import sqlite3

import pytest

from masklens.core.errors import MasklensError
from masklens.core.review.store import Role, open_store

B = "toy:t"


def test_a_batch_is_one_row_per_sample_and_one_undo_brings_back_what_was_before(tmp_path):
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        before = st.record(B, "s2", "model_wrong")
        rows = st.record_many(B, ["s1", "s2", "s3"], "gt_wrong")
        assert [(v.sample_id, v.prompt_id, v.verdict, v.reviewer) for v in rows] == [
            ("s1", "", "gt_wrong", "ann"), ("s2", "", "gt_wrong", "ann"), ("s3", "", "gt_wrong", "ann")]
        assert {v.sample_id: v.verdict for v in st.current(B)} == dict.fromkeys(["s1", "s2", "s3"], "gt_wrong")
        undone = st.retract_many(rows)
        assert sorted(r.retracts for r in undone) == sorted(v.uid for v in rows)
        assert [v.uid for v in st.current(B)] == [before.uid]  # s2's earlier verdict is current again
        assert len(st.history(B)) == 1 + 3 + 3  # nothing deleted
    with sqlite3.connect(tmp_path / "r.sqlite") as db:  # what another process reads: the same rows
        assert db.execute("SELECT COUNT(*) FROM verdicts WHERE verdict = 'gt_wrong'").fetchone()[0] == 3


def test_a_batch_is_all_or_nothing(tmp_path):
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        with pytest.raises(MasklensError, match="unknown verdict"):
            st.record_many(B, ["s1", "s2"], "wrongish")
        assert st.history(B) == []
        rows = st.record_many(B, ["s1", "s2"], "fine", reviewer="bob")
        st._db.execute("CREATE TRIGGER no_s2 BEFORE INSERT ON verdicts WHEN NEW.sample_id = 's2' "
                       "BEGIN SELECT RAISE(ABORT, 'refused'); END")
        with pytest.raises(MasklensError, match="refused"):
            st.retract_many(rows)  # s2's retraction refused: s1's is not written either
        assert {v.sample_id for v in st.current(B)} == {"s1", "s2"} and len(st.history(B)) == 2

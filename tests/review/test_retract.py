"""Undo of a verdict: a retraction row is appended (nothing deleted) and every reading — current
verdicts, verdict_of, the review summary, CSV/JSON export, κ, report exclusions and merges —
treats the retracted verdict as absent."""

import csv
import json
import sqlite3

import pytest

from masklens.core.errors import MasklensError
from masklens.core.review.agreement import agreement
from masklens.core.review.migrations import SCHEMA_VERSION
from masklens.core.review.store import Role, open_store

B = "toy:t"


def test_retraction_restores_the_previous_verdict_and_keeps_the_history(tmp_path):
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        first = st.record(B, "s1", "model_wrong", note="edge")
        second = st.record(B, "s1", "gt_wrong")
        r = st.retract(second)
        assert (r.retracts, r.verdict, r.sample_id, r.reviewer) == (second.uid, "", "s1", "ann")
        assert [v.uid for v in st.current(B)] == [first.uid]
        assert st.verdict_of(B, "s1").uid == first.uid
        st.retract(first)
        assert st.current(B) == [] and st.verdict_of(B, "s1") is None
        assert st.reviewed_samples(B) == set()
        assert len(st.history(B)) == 4  # two verdicts, two retractions: nothing deleted
        with pytest.raises(MasklensError, match="retraction"):
            st.retract(r)


def test_export_summary_and_kappa_ignore_retracted_verdicts(tmp_path):
    with open_store(tmp_path / "r.sqlite", Role.WRITE) as st:
        for sid, a, b in (("s1", "fine", "fine"), ("s2", "model_wrong", "model_wrong"),
                          ("s3", "fine", "model_wrong")):
            st.record(B, sid, a, reviewer="ann")
            st.record(B, sid, b, reviewer="bob")
        wrong = st.record(B, "s3", "fine", reviewer="bob")  # bob agrees on s3 ... by mistake
        k_with = agreement(st.current(B)).pairs[0]["cohen_kappa"]
        st.retract(wrong)  # ... and takes it back: s3 disagrees again
        ag = agreement(st.current(B))
        assert ag.items_complete == 3
        assert k_with == pytest.approx(1.0)
        # ann: fine, model_wrong, fine; bob: fine, model_wrong, model_wrong -> κ = (2/3 - 4/9) / (5/9)
        assert ag.pairs[0]["cohen_kappa"] == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
        st.export(tmp_path / "cur.csv", benchmark=B)
        st.export(tmp_path / "cur.json", benchmark=B)
        st.export(tmp_path / "all.json", benchmark=B, history=True)
        with open(tmp_path / "cur.csv", newline="") as f:
            cur = list(csv.DictReader(f))
        assert wrong.uid not in {row["uid"] for row in cur}
        assert sorted((row["sample_id"], row["reviewer"], row["verdict"]) for row in cur if row["sample_id"] == "s3") \
            == [("s3", "ann", "fine"), ("s3", "bob", "model_wrong")]
        assert len(json.loads((tmp_path / "cur.json").read_text())["verdicts"]) == 6
        hist = json.loads((tmp_path / "all.json").read_text())["verdicts"]
        assert [v["retracts"] for v in hist].count(wrong.uid) == 1  # the audit trail keeps both rows


def test_report_exclusions_follow_undo(tmp_path):
    from masklens.core.cli.report import load_verdicts

    class Bench:
        kind, name = "toy", "t"

    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        v = st.record(B, "s1", "gt_wrong")  # excludes s1 from recomputed metrics
        assert [x.verdict for x in load_verdicts([str(tmp_path / "r.sqlite")], Bench)] == ["gt_wrong"]
        st.retract(v)
    assert load_verdicts([str(tmp_path / "r.sqlite")], Bench) == []


def test_merge_carries_retractions(tmp_path):
    with open_store(tmp_path / "a.sqlite", Role.WRITE, reviewer="ann") as a:
        v = a.record(B, "s1", "model_wrong")
        a.retract(v)
    with open_store(tmp_path / "m.sqlite", Role.WRITE) as m:
        assert m.merge(tmp_path / "a.sqlite") == 2
        assert m.merge(tmp_path / "a.sqlite") == 0  # idempotent
        assert m.current(B) == []


def test_a_v2_store_is_upgraded_with_its_verdicts(tmp_path):
    p = tmp_path / "old.sqlite"
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE verdicts (id INTEGER PRIMARY KEY AUTOINCREMENT, benchmark TEXT NOT NULL,"
               " sample_id TEXT NOT NULL, prompt_id TEXT NOT NULL DEFAULT '', verdict TEXT NOT NULL,"
               " note TEXT NOT NULL DEFAULT '', reviewer TEXT NOT NULL, time TEXT NOT NULL, uid TEXT)")
    db.execute("INSERT INTO verdicts (benchmark, sample_id, verdict, reviewer, time, uid)"
               " VALUES (?, 's1', 'fine', 'ann', '2024-01-01T00:00:00.000Z', 'u1')", (B,))
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    with open_store(p, Role.WRITE) as st:
        assert st.schema_version == SCHEMA_VERSION == 4  # v4: corrections, queues
        (v,) = st.current(B)
        assert (v.uid, v.retracts) == ("u1", "")
        st.retract(v)
        assert st.current(B) == []


def test_cli_summary_and_agreement_count_an_undone_verdict_as_absent(tmp_path, capsys):
    from masklens.core.cli import main

    db = tmp_path / "r.sqlite"
    with open_store(db, Role.WRITE) as st:
        st.record(B, "s1", "fine", reviewer="ann")
        st.record(B, "s1", "fine", reviewer="bob")
        st.retract(st.record(B, "s2", "model_wrong", reviewer="ann"))
    assert main(["review", "summary", str(db)]) == 0
    out = capsys.readouterr().out
    assert "model_wrong" not in out and "fine" in out
    assert main(["review", "agreement", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items_total"] == 1

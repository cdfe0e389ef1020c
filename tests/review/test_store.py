"""ReviewStore: recording, current verdicts, clearing, export, merge, schema migrations."""

import csv
import json
import sqlite3

import pytest

from masklens.core.errors import DataFormatError, MasklensError
from masklens.core.review.locations import default_store_path
from masklens.core.review.migrations import MIGRATIONS, SCHEMA_VERSION
from masklens.core.review.store import Role, open_store
from masklens.core.review.verdict_types import (
    VERDICT_TYPES,
    VerdictType,
    excluding_verdicts,
    register_verdict_type,
)


def test_default_verdict_list_and_shortcuts():
    assert list(VERDICT_TYPES)[:5] == [
        "model_wrong", "gt_wrong", "prompt_ambiguous", "edit_invalid", "fine"
    ]
    shortcuts = [v.shortcut.lower() for v in VERDICT_TYPES.values()]
    assert len(set(shortcuts)) == len(shortcuts)
    assert excluding_verdicts() == {"gt_wrong", "edit_invalid"}
    with pytest.raises(ValueError, match="shortcut"):
        register_verdict_type(VerdictType("other", "Other", "m"))


def test_record_current_and_clear(tmp_path):
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        assert st.journal_mode == "wal"
        assert st.schema_version == SCHEMA_VERSION
        st.record("cafe:demo", "s1", "model_wrong", note="misses the sun")
        st.record("cafe:demo", "s1", "fine")  # later verdict replaces the earlier one
        st.record("cafe:demo", "s2", "gt_wrong", prompt_id="s2/neg")
        st.record("cafe:demo", "s3", "edit_invalid")
        st.clear("cafe:demo", "s3")
        cur = {(v.sample_id, v.prompt_id): v.verdict for v in st.current("cafe:demo")}
        assert cur == {("s1", ""): "fine", ("s2", "s2/neg"): "gt_wrong"}
        assert st.verdict_of("cafe:demo", "s1").verdict == "fine"
        assert st.verdict_of("cafe:demo", "s3") is None
        assert st.verdict_of("cafe:demo", "s2", "s2/neg").reviewer == "ann"
        assert len(st.history("cafe:demo")) == 5
        assert st.reviewed_samples("cafe:demo") == {"s1", "s2"}
        assert st.current("other") == []
        with pytest.raises(MasklensError, match="unknown verdict 'wrongish'"):
            st.record("cafe:demo", "s1", "wrongish")
        assert st.history()[-1].time.endswith("Z")


def test_export_csv_and_json_escape_formulas(tmp_path):
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        st.record("b", "s1", "model_wrong", note="=HYPERLINK(\"x\")")
        st.record("b", "s2", "fine", note="<script>alert(1)</script>")
        st.export(tmp_path / "v.csv")
        st.export(tmp_path / "v.json")
        with pytest.raises(MasklensError, match="csv or .json"):
            st.export(tmp_path / "v.txt")
    rows = list(csv.DictReader((tmp_path / "v.csv").open()))
    assert [r["sample_id"] for r in rows] == ["s1", "s2"]
    assert rows[0]["note"].startswith("'=")
    data = json.loads((tmp_path / "v.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["verdicts"][1]["note"] == "<script>alert(1)</script>"
    assert not list(tmp_path.glob(".*tmp"))  # no temp files left


def test_merge_is_idempotent(tmp_path):
    a = open_store(tmp_path / "a.sqlite", Role.WRITE, reviewer="ann")
    b = open_store(tmp_path / "b.sqlite", Role.WRITE, reviewer="bob")
    a.record("b", "s1", "fine")
    b.record("b", "s1", "model_wrong")
    b.record("b", "s2", "gt_wrong")
    b.close()
    assert a.merge(tmp_path / "b.sqlite") == 2
    assert a.merge(tmp_path / "b.sqlite") == 0
    assert a.reviewers("b") == ["ann", "bob"]
    assert len(a.current("b")) == 3
    a.close()


def test_old_schema_is_migrated_and_newer_refused(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    MIGRATIONS[0](db)
    db.execute(
        "INSERT INTO verdicts (benchmark, sample_id, prompt_id, verdict, note, reviewer, time)"
        " VALUES ('b', 's1', '', 'fine', 'kept', 'ann', '2026-01-01T00:00:00.000Z')"
    )
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with open_store(path, Role.WRITE) as st:
        assert st.schema_version == SCHEMA_VERSION
        (v,) = st.current("b")
        assert (v.note, len(v.uid)) == ("kept", 32)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(MasklensError, match="schema version"):
        open_store(path, Role.WRITE)


def test_not_a_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("this is not sqlite " * 100)
    with pytest.raises(DataFormatError, match="bad.sqlite"):
        open_store(bad, Role.WRITE)


def test_default_store_path_beside_annotations(tmp_path):
    ann = tmp_path / "ann.json"
    ann.write_text("{}")
    assert default_store_path({"ann": ann}) == tmp_path / "ann.masklens-reviews.sqlite"
    assert default_store_path([ann]) == tmp_path / "ann.masklens-reviews.sqlite"
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "data.json").write_text("{}")
    ro.chmod(0o500)
    try:
        p = default_store_path([ro / "data.json"])
        import os
        if not os.access(ro, os.W_OK):  # root can write anywhere
            assert p.parent != ro and p.name.startswith("data-")
    finally:
        ro.chmod(0o700)


def test_demo_reviews_never_go_into_the_package(tmp_path, monkeypatch):
    from masklens.resources import DEMO_DIR

    monkeypatch.setenv("MASKLENS_DATA_DIR", str(tmp_path))
    p = default_store_path({"ann": DEMO_DIR / "cafe" / "ann.json"})
    assert p.parent == tmp_path / "reviews" and p.name.startswith("ann-")

"""The correction recorder (Qt-free): an edit made on the ground truth shown becomes a correction of
the loaded ground truth; it merges with this reviewer's earlier correction of the instance, links
the sample's "Ground truth wrong" verdict, and names every tool of the edit. Real SQLite stores."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from masklens.core.masks import Mask
from masklens.core.review.corrections import tool_names
from masklens.core.review.recorder import CorrectionRecorder, Edit
from masklens.core.review.store import Role, open_store

B = "toy:t"


def _mask(x0: int, x1: int) -> Mask:
    a = np.zeros((8, 8), bool)
    a[2:6, x0:x1] = True
    return Mask.from_array(a)


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ana") as st:
        yield st


def test_every_tool_of_the_edit_is_recorded_in_the_order_of_first_use(store, tmp_path):
    rec = CorrectionRecorder(store, B)
    c = rec.record(Edit("s1", "gt", 0, _mask(1, 4), ["brush", "eraser", "brush", "model", "fill", "polygon"]),
                   reviewer="ana")
    assert c.tool == "brush+eraser+model+fill+polygon"
    assert tool_names(c.tool) == ["brush", "eraser", "model", "fill", "polygon"]
    with sqlite3.connect(tmp_path / "r.sqlite") as db:  # what is in the file
        assert db.execute("SELECT tool FROM corrections").fetchall() == [("brush+eraser+model+fill+polygon",)]
    assert tool_names("polygon") == ["polygon"]  # a row of one tool (as older stores hold) reads as it did


def test_new_deleted_and_category_edits_name_what_they_did(store):
    rec = CorrectionRecorder(store, B)
    assert rec.record(Edit("s1", "gt", None, _mask(1, 3), ["polygon", "fill"]), reviewer="ana").tool == "new+polygon+fill"
    assert rec.record(Edit("s1", "gt", 1, None, ["delete"]), reviewer="ana").tool == "delete"
    got = rec.record(Edit("s1", "gt", 2, _mask(0, 2), category=7, keep_mask=True), reviewer="ana")
    assert (got.tool, got.category) == ("category", 7)


def test_an_edit_merges_with_the_reviewers_earlier_correction(store):
    rec = CorrectionRecorder(store, B)
    first = rec.record(Edit("s1", "gt", 0, _mask(1, 4), ["brush"]), reviewer="ana")
    recat = rec.record(Edit("s1", "gt", 0, _mask(0, 8), category=3, keep_mask=True), reviewer="ana")
    assert recat.mask == first.mask and recat.category == 3  # the category change kept the corrected mask
    again = rec.record(Edit("s1", "gt", 0, _mask(2, 7), ["eraser"]), reviewer="ana")
    assert again.mask == _mask(2, 7) and again.category == 3  # the new mask kept the category
    other = rec.record(Edit("s1", "gt", 0, _mask(5, 6), ["brush"]), reviewer="ben")
    assert other.category is None  # another reviewer's correction is not merged
    assert [c.mask for c in store.corrections(B, reviewer="ana")] == [_mask(2, 7)]


def test_the_latest_ground_truth_wrong_verdict_is_linked(store):
    rec = CorrectionRecorder(store, B)
    assert rec.record(Edit("s1", "gt", 0, _mask(1, 4), ["brush"]), reviewer="ana").verdict_uid == ""
    store.record(B, "s1", "gt_wrong", reviewer="ben")
    newest = store.record(B, "s1", "gt_wrong", prompt_id="p1")
    store.record(B, "s2", "gt_wrong")
    assert rec.record(Edit("s1", "gt", 0, _mask(1, 5), ["brush"]), reviewer="ana").verdict_uid == newest.uid
    store.retract(newest)
    linked = rec.record(Edit("s1", "gt", 0, _mask(1, 6), ["brush"]), reviewer="ana").verdict_uid
    assert linked == store.sample_verdicts(B)["s1"][0].uid != newest.uid


def test_indices_of_the_corrected_ground_truth_map_back_to_the_loaded_one(store):
    """Shown: the loaded instances 0 and 2 (1 was deleted), then two added instances."""
    rec = CorrectionRecorder(store, B)
    first_added = rec.record(Edit("s1", "gt", None, _mask(0, 1), ["brush"]), reviewer="ana")
    second_added = rec.record(Edit("s1", "gt", None, _mask(6, 7), ["brush"]), reviewer="ana")
    shown_from = [0, 2, None, None]
    moved = rec.record(Edit("s1", "gt", 1, _mask(2, 5), ["eraser"]), reviewer="ana", shown_from=shown_from)
    assert moved.instance == 2  # shown second, loaded third
    changed = rec.record(Edit("s1", "gt", 3, _mask(5, 8), ["polygon"]), reviewer="ana", shown_from=shown_from)
    assert changed.instance is None and changed.tool == "polygon"  # an added instance is added again…
    retracted = {c.retracts for c in store.correction_history(B) if c.retracts}
    assert retracted == {second_added.uid}  # … in place of the one it changes
    assert {c.uid for c in store.corrections(B) if c.instance is None} == {first_added.uid, changed.uid}
    loaded = rec.record(Edit("s1", "gt", 0, _mask(1, 2), ["brush"]), reviewer="ana")  # the loaded ground truth shown
    assert loaded.instance == 0

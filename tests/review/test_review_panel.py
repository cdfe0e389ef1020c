"""The review panel (real Qt widgets, offscreen): one-key verdicts are committed at once."""

import pytest

pytest.importorskip("pytestqt")

from masklens.core.review.store import Role, open_store  # noqa: E402
from masklens.core.review.verdict_types import VERDICT_TYPES  # noqa: E402
from masklens.gui.review.panel import ReviewPanel  # noqa: E402


@pytest.fixture
def panel(qtbot, tmp_path):
    p = ReviewPanel()
    qtbot.addWidget(p)
    store = open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann")
    p.set_store(store, ["s1", "s2", "s3"])
    p.set_sample("toy:t", "s1", ["s1/pos", "s1/neg"])
    yield p, store, tmp_path
    store.close()


def test_shortcut_records_and_commits(panel, qtbot):
    p, store, tmp_path = panel
    acts = {a.shortcut().toString(): a for a in p.shortcut_actions()}
    assert set(acts) == {vt.shortcut for vt in VERDICT_TYPES.values()} | {"N", "Ctrl+Z"}
    p.note.setText("<b>mask bleeds</b>")
    with qtbot.waitSignal(p.verdictRecorded, timeout=2000) as sig:
        acts["M"].trigger()
    assert sig.args == ["s1"]
    # visible to another connection immediately: committed, not pending
    with open_store(tmp_path / "r.sqlite", Role.WRITE) as other:
        (v,) = other.current("toy:t")
    assert (v.verdict, v.note, v.reviewer, v.prompt_id) == ("model_wrong", "<b>mask bleeds</b>", "ann", "")
    assert p.buttons["model_wrong"].isChecked() and p.note.text() == ""
    assert p.current.count() == 1


def test_prompt_level_verdict_clear_and_next_unreviewed(panel, qtbot):
    p, store, _ = panel
    p.target.setCurrentIndex(2)  # prompt s1/neg
    p.buttons["gt_wrong"].click()
    assert store.verdict_of("toy:t", "s1", "s1/neg").verdict == "gt_wrong"
    assert p.next_unreviewed() == "s2"
    with qtbot.waitSignal(p.nextUnreviewedRequested) as sig:
        p.next_button.click()
    assert sig.args == ["s2"]
    p.clear()
    assert store.verdict_of("toy:t", "s1", "s1/neg") is None
    assert p.next_unreviewed() == "s2"  # s1 has no verdict now; the search starts after s1
    p.reviewer.setText("bob")
    p.buttons["fine"].click()
    assert {v.reviewer for v in store.current("toy:t")} == {"bob"}
    p.reviewer.setText("ann")
    p.buttons["fine"].click()  # same item (prompt s1/neg) as bob, same verdict
    # one category only: chance agreement is 1, κ undefined (not 1.0)
    assert "2 reviewers; Fleiss' κ = undefined over the 1 item(s)" in p.agreement.text()


def test_without_store_nothing_crashes(qtbot):
    p = ReviewPanel()
    qtbot.addWidget(p)
    assert p.record("fine") is None
    assert "open a benchmark" in p.status.text()

"""The window with a kind whose records are handed out lazily (SA-Co/PCS: ``Records`` over
its memo): the slider's first frame, the worker's readouts, the browser and the release of
old readouts all see the records the per-sample path gives."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from masklens.core.scoring.records import Records

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
from cafe_synth import synth_pcs  # noqa: E402


def pcs_files(tmp: Path, n: int) -> list[str]:
    files, preds = synth_pcs(3, n, 2)
    words = []
    for a, f in enumerate(files):
        (tmp / f"gt{a}.json").write_text(json.dumps(f))
        words += ["--gt", str(tmp / f"gt{a}.json")]
    (tmp / "pred.json").write_text(json.dumps(preds))
    return [*words, "--pred", str(tmp / "pred.json")]


def test_slider_on_lazy_records_shows_the_per_sample_records(window, qtbot, tmp_path, monkeypatch):
    from masklens.gui.jobs import rescoring

    monkeypatch.setattr(rescoring, "ASYNC_FROM", 20)  # the worker path
    w = window
    assert w.commands.open_benchmark("pcs", pcs_files(tmp_path, 60))
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=30000)
    w.browser.set_expression("n_accepted == 0")
    w.state.set_index(5)
    scorer = w.state.scorers[w.state.active]
    kind, sample = w.state.kind, w.state.sample
    shown = w.state.readouts[w.state.active]
    assert type(shown) is Records and w.browser.model.readouts is shown
    before = shown[0]
    for v in (0.9, 0.2, 0.65):
        w.readout_panel.sliders.set_value("score_threshold", v)
        rows = w.state.readouts[w.state.active]
        p = kind.resolve_params({"score_threshold": v})
        assert type(rows) is Records
        assert rows[5] == kind.sample_readout(sample, scorer.overlaps[5], p)  # the first frame
    qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=30000)
    p = kind.resolve_params({"score_threshold": 0.65})
    want = [kind.sample_readout(s, o, p) for s, o in zip(w.state.benchmark.samples, scorer.overlaps, strict=True)]
    rows = w.state.readouts[w.state.active]
    assert type(rows) is Records and rows == want and w.browser.model.readouts == want
    n_match = sum(r["n_accepted"] == 0 for r in want)
    assert 0 < n_match < 60
    assert w.browser.count.text() == f"{n_match} / 60"
    assert before == kind.sample_readout(w.state.benchmark.samples[0], scorer.overlaps[0],
                                         kind.resolve_params({}))  # fmt: skip  # old ones intact


def test_releasing_records_frees_them_unless_still_iterated() -> None:
    from masklens.gui.window import disposal

    recs = Records([{"i": i} for i in range(1000)])
    list(recs)
    disposal._dismantle(recs)
    assert len(recs) == 0
    held = Records([{"i": i} for i in range(1000)])
    it = iter(held)
    first = next(it)
    disposal._dismantle(held)  # its list is still iterated: left whole
    assert [first, *it] == [{"i": i} for i in range(1000)]


def test_release_later_takes_records_apart_off_the_gui_thread(monkeypatch, qtbot) -> None:
    from masklens.gui.window import disposal

    seen: list[tuple[str, int, int]] = []
    real = disposal._dismantle

    def spy(obj):
        size = len(obj)
        real(obj)
        if isinstance(obj, Records):
            seen.append((threading.current_thread().name, size, len(obj)))

    monkeypatch.setattr(disposal, "_dismantle", spy)
    recs = Records([{"i": i} for i in range(5000)])
    list(recs)
    disposal.release_later(recs)
    del recs  # the release thread now holds the last reference
    qtbot.waitUntil(lambda: ("masklens-release", 5000, 0) in seen, timeout=30000)


def test_a_one_entry_pcs_set_in_the_window(window, qtbot, tmp_path):
    assert window.commands.open_benchmark("pcs", pcs_files(tmp_path, 1))
    qtbot.waitUntil(lambda: bool(window.state.readouts) and not window.jobs.busy, timeout=30000)
    window.readout_panel.sliders.set_value("score_threshold", 0.3)
    rows = window.state.readouts[window.state.active]
    assert type(rows) is Records and len(rows) == 1 and rows[0]["n_pred"] >= 0


def test_late_ids_and_texts_read_whole_in_the_list(window, qtbot, tmp_path):
    """At 700 entries the last rows' ids and prompt texts ("np 699") are the longest; the
    browser's columns fit them, not only the first rows' ("np 5")."""
    from PySide6.QtCore import Qt

    from masklens.gui.browser.sample_table import FIXED

    w = window
    assert w.commands.open_benchmark("pcs", pcs_files(tmp_path, 700))
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=60000)
    b = w.browser
    header, fm = b.table.horizontalHeader(), b.table.fontMetrics()
    names = [b.model.headerData(c, Qt.Orientation.Horizontal) for c in range(b.model.columnCount())]
    for name in ("text", "image_id"):
        col = names.index(name)
        texts = [str(b.model.data(b.model.index(r, col)) or "") for r in range(b.model.rowCount())]
        assert "np 699" in texts or name != "text"
        assert header.sectionSize(col) >= max(map(fm.horizontalAdvance, texts)) + 12, name
    longest = max((s.id for s in w.state.benchmark.samples), key=fm.horizontalAdvance)
    assert header.sectionSize(FIXED.index("sample")) >= fm.horizontalAdvance(longest) + 6

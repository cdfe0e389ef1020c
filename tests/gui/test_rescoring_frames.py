"""A slider step on a benchmark re-scored in the worker pool draws the sample shown once (the
first frame), not again when the other samples' readouts arrive; a sample switch while the
worker runs still gets the new values drawn; the list's columns stay put across steps."""

from __future__ import annotations

from PySide6.QtCore import Qt
from test_records_gui import pcs_files


def open_async(window, qtbot, tmp_path, monkeypatch):
    from masklens.gui.jobs import rescoring

    monkeypatch.setattr(rescoring, "ASYNC_FROM", 20)  # the worker path
    assert window.commands.open_benchmark("pcs", pcs_files(tmp_path, 60))
    qtbot.waitUntil(lambda: bool(window.state.readouts) and not window.jobs.busy, timeout=30000)
    drawn = []
    show = window.sample_view.show_panels
    window.sample_view.show_panels = lambda *a, **k: (drawn.append(window.state.index), show(*a, **k))
    return drawn


def test_a_step_draws_the_sample_once(window, qtbot, tmp_path, monkeypatch, no_internal_errors):
    w = window
    drawn = open_async(w, qtbot, tmp_path, monkeypatch)
    w.state.set_index(5)
    drawn.clear()
    columns = w.browser.model.columns
    before = w.state.params["score_threshold"]
    slider = w.readout_panel.sliders.sliders["score_threshold"]._slider
    slider.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.keyClick(slider, Qt.Key.Key_Right)  # a t step from the keyboard (debounced 40 ms)
    qtbot.waitUntil(lambda: w.state.params["score_threshold"] != before, timeout=3000)
    qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=30000)
    assert drawn == [5]  # the first frame only
    scorer, kind = w.state.scorers[w.state.active], w.state.kind
    want = kind.sample_readout(w.state.sample, scorer.overlaps[5], w.state.params)
    assert w.state.readout() == want and w.browser.model.readouts[5] == want
    assert w.browser.model.columns is columns  # fixed for the benchmark and set: not read again


def test_a_switch_during_the_worker_is_drawn_again(window, qtbot, tmp_path, monkeypatch, no_internal_errors):
    w = window
    drawn = open_async(w, qtbot, tmp_path, monkeypatch)
    w.state.set_index(5)
    w.readout_panel.sliders.set_value("score_threshold", 0.8)
    w.state.set_index(6)  # before the worker's readouts arrive
    drawn.clear()
    qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=30000)
    assert drawn == [6]  # sample 6 was drawn with older readouts: drawn again with these


def test_a_step_updates_the_card_once(window, qtbot, tmp_path, monkeypatch, no_internal_errors):
    """The worker's readouts hold the same record for the sample shown as the first frame drew:
    the card is not filled again (one card update per step), and shows those values."""
    w = window
    open_async(w, qtbot, tmp_path, monkeypatch)
    w.state.set_index(5)
    deck = w.readout_panel.deck
    card = deck.main_card
    in_place: list[bool] = []  # each refresh that kept the cards (CardDeck._update_in_place)
    update_in_place = type(deck)._update_in_place
    monkeypatch.setattr(type(deck), "_update_in_place",
                        lambda self, plan: in_place.append(update_in_place(self, plan)) or in_place[-1])
    for value in (0.3, 0.7):
        updated = in_place.count(True)
        w.readout_panel.sliders.set_value("score_threshold", value)
        qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=30000)
        assert deck.main_card is card and in_place.count(True) == updated + 1  # the first frame only
        rec = w.state.readout()
        assert rec is w.browser.model.readouts[5]  # the worker's records are installed …
        for key in ("TP@0.5", "FP@0.5", "FN@0.5", "local_F1"):
            assert card.numbers[key] == rec[key]  # … and the card reads as they do
        assert card.texts["IL"] == f"IL {rec['IL']}"


def test_the_worker_keeps_the_lists_columns(window, qtbot, tmp_path, monkeypatch, no_internal_errors):
    """The worker plans a step's rows with the list's own columns (the same key as the window's:
    ~20 ms at 20,000 entries to read them again from the records on every step)."""
    from masklens.gui.browser import sample_table

    w = window
    open_async(w, qtbot, tmp_path, monkeypatch)
    read = []
    real = sample_table.metric_columns
    monkeypatch.setattr(sample_table, "metric_columns", lambda rows: (len(rows) and read.append(1)) or real(rows))
    columns = list(w.browser.model.columns)
    w.browser.set_expression("local_F1 < 0.5")  # a filter on a metric: the worker plans the rows
    for value in (0.3, 0.7):
        w.readout_panel.sliders.set_value("score_threshold", value)
        qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=30000)
        assert read == [] and w.browser.model.columns == columns
        rows = w.state.readouts[w.state.active]
        want = [i for i in range(len(rows)) if rows[i]["local_F1"] is not None and rows[i]["local_F1"] < 0.5]
        pinned = w.browser.proxy.pinned  # the sample shown stays listed whatever the filter
        assert list(w.browser.proxy.visible_rows()) == sorted({*want, *([pinned] if pinned is not None else [])})


def test_the_first_frame_is_painted_then_the_worker_starts_at_once(window, qtbot, tmp_path, monkeypatch,
                                                                   no_internal_errors):
    """No fixed wait between the first frame and the worker (it was 20 ms on every step): the
    sample shown is painted within the step, then the worker is started, before the step returns."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    w = window
    open_async(w, qtbot, tmp_path, monkeypatch)
    w.state.set_index(5)
    qtbot.wait(100)
    painted = []

    class Paints(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt override
            if event.type() == QEvent.Type.Paint and w.readout_panel.deck.isAncestorOf(obj):
                painted.append(1)
            return False

    paints = Paints()
    QApplication.instance().installEventFilter(paints)
    started = []
    run = w.rescoring.runner.run
    monkeypatch.setattr(w.rescoring.runner, "run", lambda *a, **k: (started.append(len(painted)), run(*a, **k))[1])
    try:
        w.readout_panel.sliders.set_value("score_threshold", 0.9)  # the card's numbers change
        assert len(started) == 1 and started[0] > 0  # painted, then started, within the step
    finally:
        QApplication.instance().removeEventFilter(paints)
    qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=30000)
    assert w.state.readout() == w.state.kind.sample_readout(w.state.sample, w.state.scorers[w.state.active].overlaps[5],
                                                              w.state.params)


def test_a_step_keeps_the_list_sorted_by_a_metric(window, qtbot, tmp_path, monkeypatch, no_internal_errors):
    """Sorted by a metric column, a step re-sorts the list by the new values as Python's stable
    sort of the records does (ties in benchmark order, missing values first when ascending,
    last when descending); the sample shown stays the list's current row; the cells show the
    new records."""
    from masklens.gui.browser.bulk import sort_key
    from masklens.gui.browser.sample_table import _fmt

    w = window
    open_async(w, qtbot, tmp_path, monkeypatch)
    proxy, model = w.browser.proxy, w.browser.model
    column = model.column_named("local_F1")
    for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder):
        w.browser.table.sortByColumn(column, order)
        w.browser.select_source_row(5)
        for value in (0.3, 0.7, 0.45):
            w.readout_panel.sliders.set_value("score_threshold", value)
            qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=30000)
            rows = w.state.readouts[w.state.active]
            f1 = [rows[i]["local_F1"] for i in range(len(rows))]
            want = sorted(range(len(rows)), key=lambda i: sort_key(f1[i]),
                          reverse=order == Qt.SortOrder.DescendingOrder)
            assert list(proxy.visible_rows()) == want
            assert len(set(f1)) > 2 and None in f1  # ties and missing values to place
            assert proxy.mapToSource(w.browser.table.currentIndex()).row() == 5 == w.state.index
            shown = [proxy.data(proxy.index(p, column)) for p in range(len(want))]
            assert shown == [_fmt(f1[i]) for i in want]

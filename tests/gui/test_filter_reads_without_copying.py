"""A preset filter reads the re-scored records without copying them (at 20,000 entries
the first filter after a t step copied every record, a 0.3–0.8 s stall), and lists exactly the
samples the preset names."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from masklens.core.scoring.records import Records


def test_a_preset_after_a_t_step_lists_its_samples_without_copying_the_records(window, qtbot,
                                                                                no_internal_errors):
    w = window
    assert w.commands.open_demo("pcs", sync=True)
    qtbot.waitUntil(lambda: bool(w.state.readouts), timeout=20000)
    slider = w.readout_panel.sliders.sliders["score_threshold"]._slider
    before = w.state.params["score_threshold"]
    slider.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.keyClick(slider, Qt.Key.Key_PageDown)  # a t step: new records
    qtbot.waitUntil(lambda: w.state.params["score_threshold"] != before, timeout=5000)
    qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=20000)
    rows = w.state.readouts[w.state.active]
    assert isinstance(rows, Records)
    unowned = rows._unowned
    assert unowned > 0  # records not read yet: a copying read would own them all
    box = w.browser.presets
    target = next(i for i in range(box.count()) if box.itemText(i) == "image-level false positive")
    box.setFocus(Qt.FocusReason.OtherFocusReason)
    while box.currentIndex() != target:  # chosen with the keyboard, as a user does
        qtbot.keyClick(box, Qt.Key.Key_Down)
    listed = set(w.browser.proxy.visible_rows()) - {w.state.index}
    want = {i for i, r in enumerate(rows.view()) if r["IL"] == "FP"}
    assert want and listed <= want and want - listed <= {w.state.index}
    assert rows._unowned >= unowned - 1 - len(listed)  # at most the rows looked at were copied, not all


def test_a_t_step_builds_no_record_in_the_worker_and_the_filter_after_it_reads_columns(
        window, qtbot, tmp_path, monkeypatch, no_internal_errors):
    """At SA-Co/Gold's full size building every record at a new t took 0.5 s a step: the
    worker builds none, and the first filter after the step reads its key from the kind's
    columns instead of building them on the GUI thread."""
    import threading

    from test_rescoring_frames import open_async

    from masklens.core.kinds.pcs import records as pcs_records

    w = window
    open_async(w, qtbot, tmp_path, monkeypatch)  # 60 entries, re-scored in the worker pool
    built_on: list[str] = []
    columns_read: list[str] = []
    real_build, real_column = pcs_records.EntryRecords._build, pcs_records.EntryRecords.column

    def build(self, rows):
        built_on.append(threading.current_thread().name)
        return real_build(self, rows)

    def column(self, rows, key):
        columns_read.append(key)
        return real_column(self, rows, key)

    monkeypatch.setattr(pcs_records.EntryRecords, "_build", build)
    monkeypatch.setattr(pcs_records.EntryRecords, "column", column)
    slider = w.readout_panel.sliders.sliders["score_threshold"]._slider
    before = w.state.params["score_threshold"]
    slider.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.keyClick(slider, Qt.Key.Key_PageDown)
    qtbot.waitUntil(lambda: w.state.params["score_threshold"] != before, timeout=5000)
    qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=20000)
    main = threading.main_thread().name
    assert set(built_on) <= {main}, "the worker built records"
    box = w.browser.presets
    target = next(i for i in range(box.count()) if box.itemText(i) == "image-level false positive")
    box.setFocus(Qt.FocusReason.OtherFocusReason)
    while box.currentIndex() != target:
        qtbot.keyClick(box, Qt.Key.Key_Down)
    assert "IL" in columns_read  # the preset's key, from the columns
    rows = w.state.readouts[w.state.active]
    listed = set(w.browser.proxy.visible_rows()) - {w.state.index}
    want = {i for i, r in enumerate(rows.view()) if r["IL"] == "FP"}
    assert listed <= want and want - listed <= {w.state.index}


def test_a_sorted_metric_column_keeps_its_order_after_a_t_step_read_from_the_kinds_columns(
        window, qtbot, tmp_path, monkeypatch, no_internal_errors):
    """With the list sorted by local F1 (clicked on its header), a t step re-sorts from the
    kind's numeric columns, and the order is the one Python's sort of the records gives
    (undefined values first, ties in benchmark order)."""
    from test_rescoring_frames import open_async

    from masklens.core.kinds.pcs import records as pcs_records
    from masklens.gui.browser.bulk import sort_key
    from masklens.gui.browser.row_proxy import column_of

    w = window
    open_async(w, qtbot, tmp_path, monkeypatch)
    read: list[str] = []
    real = pcs_records.EntryRecords.sort_column

    def sort_column(self, rows, key):
        read.append(key)
        return real(self, rows, key)

    monkeypatch.setattr(pcs_records.EntryRecords, "sort_column", sort_column)
    table, proxy = w.browser.table, w.browser.proxy
    header = table.horizontalHeader()
    col = column_of(proxy, "local_F1")
    assert col >= 0
    x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))
    qtbot.waitUntil(lambda: proxy.sort_name() == "local_F1", timeout=5000)
    slider = w.readout_panel.sliders.sliders["score_threshold"]._slider
    for _ in range(2):
        before = w.state.params["score_threshold"]
        slider.setFocus(Qt.FocusReason.OtherFocusReason)
        qtbot.keyClick(slider, Qt.Key.Key_PageDown)
        qtbot.waitUntil(lambda b=before: w.state.params["score_threshold"] != b, timeout=5000)
        qtbot.waitUntil(lambda: not w.rescoring.pending, timeout=20000)
        rows = w.state.readouts[w.state.active]
        descending = header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
        want = sorted(range(len(rows)), key=lambda r: sort_key(rows.view()[r]["local_F1"]), reverse=descending)
        assert list(proxy.visible_rows()) == want
    assert "local_F1" in read

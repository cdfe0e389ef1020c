"""Each interaction does only what changed: what nobody can
see is not computed on a slider step or a sample switch, and what is shown reads as before."""

from __future__ import annotations

from PySide6.QtCore import Qt
from test_cards_in_place import key_step


def _open(window, qtbot, kind: str) -> None:
    assert window.commands.open_demo(kind, sync=True)
    qtbot.waitUntil(lambda: bool(window.state.readouts), timeout=20000)
    qtbot.waitExposed(window)


def test_the_hidden_corrected_summary_is_summarised_only_when_shown(window, qtbot, monkeypatch,
                                                                     no_internal_errors):
    _open(window, qtbot, "pcs")
    view = window.corrected_view
    calls = []
    real = view.summaries
    monkeypatch.setattr(view, "summaries", lambda: calls.append(1) or real())
    for index in (1, 2, 3):
        window.state.set_index(index)
    key_step(window, qtbot, "score_threshold", Qt.Key.Key_PageUp)
    key_step(window, qtbot, "score_threshold", Qt.Key.Key_PageDown)
    assert not view.summary.isVisible() and calls == []  # the switch is off: the summary is hidden
    values = view.summary.values  # read (a test, a screen reader): summarised now, once
    assert len(calls) == 1 and values
    st = window.state
    rows = st.scorers[st.active].readouts(st.params)
    expect = st.kind.summarize(st.benchmark.samples, st.scorers[st.active].overlaps, rows,
                               st.kind.resolve_params(st.params))
    first = next(iter(expect.values()))
    assert {k: a for k, (a, _b) in values.items()} == {k: v for k, v in first.items() if k in values}
    assert view.summary.values is values and len(calls) == 1  # nothing new: not again
    button = window.view_toolbar.widgetForAction(view.action)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # the switch on: the summary is shown
    assert view.on and view.summary.isVisible()
    shown = len(calls)
    key_step(window, qtbot, "score_threshold", Qt.Key.Key_PageUp)
    assert len(calls) == shown + 1  # visible: it follows the slider at once


def test_score_labels_are_reused_and_read_as_given(qtbot):
    from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsSimpleTextItem

    from masklens.gui.canvas.image_canvas import Canvas
    from masklens.gui.canvas.score_label import label_colours

    canvas = Canvas()
    qtbot.addWidget(canvas)
    canvas.set_labels([(10, 10, "0.91", "#E69F00"), (50, 60, "0.55", "#56B4E9")])
    first = list(canvas._labels)
    canvas.set_labels([(10, 12, "0.91", "#E69F00"), (50, 60, "0.56", "#56B4E9"), (5, 5, "0.70", "#009E73")])
    assert canvas._labels[:2] == first  # the same items, moved or re-worded
    assert canvas.label_texts() == ["0.91", "0.56", "0.70"]
    assert (canvas._labels[0].pos().x(), canvas._labels[0].pos().y()) == (10, 12)
    canvas.set_labels([(1, 1, "0.30", "#000000")])
    assert canvas.label_texts() == ["0.30"] and len(canvas.scene().items()) == 3  # the image and one label (its box, its text)
    assert label_colours(canvas._labels[0]) == ("#ffffff", "#000000")  # white ink on a dark label
    # plain Qt items (no Python subclass): painting them never waits for the GIL held by a model job
    assert type(canvas._labels[0]) is QGraphicsRectItem
    assert {type(i) for i in canvas._labels[0].childItems()} == {QGraphicsSimpleTextItem}


def test_an_image_drawn_again_reuses_its_pixmap(window, qtbot):
    """Stepping back to a sample whose image was just drawn converts it to a pixmap no more."""
    from masklens.gui.canvas.sample_view import image_pixmap

    _open(window, qtbot, "pcs")
    st = window.state
    image = window.sample_view.panels[0].canvas._image
    st.set_index(1)
    key = image.pixmap().cacheKey()
    st.set_index(2)
    st.set_index(1)
    assert image.pixmap().cacheKey() == key
    rgb = window.store.image(next(iter(st.sample.images.values())))
    assert image_pixmap(rgb) is image_pixmap(rgb)
    assert image_pixmap(rgb.copy()).cacheKey() != image_pixmap(rgb).cacheKey()  # another array: its own


def test_a_switch_does_not_repaint_the_frame_under_the_canvas(window, qtbot, no_internal_errors):
    """A sample switch paints what changed: not the centre's frame under the canvas (the canvas
    paints all of its area), not the list's column headers (a whole row is selected: nothing to
    highlight); the canvas shows the new sample as a fresh render does."""
    from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPoint
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    _open(window, qtbot, "pcs")
    w = window
    w.browser.table.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.wait(50)
    tabs = w.tabs
    headers = (w.browser.table.horizontalHeader().viewport(), w.browser.frozen.horizontalHeader().viewport())
    canvas_viewport = w.sample_view.panels[0].canvas.viewport()
    painted, header_paints, canvas_paints = [], [], []

    class Paints(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt override
            if event.type() == QEvent.Type.Paint and obj is tabs:
                painted.append(sum(r.width() * r.height() for r in event.region()))
            if event.type() == QEvent.Type.Paint and obj in headers:
                header_paints.append(obj)
            if event.type() == QEvent.Type.Paint and obj is canvas_viewport:
                canvas_paints.append(obj)
            return False

    paints = Paints()
    QApplication.instance().installEventFilter(paints)
    try:
        for key in (Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Up):
            before, seen = w.state.index, len(canvas_paints)
            qtbot.keyClick(w.browser.table, key)
            assert w.state.index != before
            # the switch is drawn (the canvas painted the new sample) …
            qtbot.waitUntil(lambda n=seen: len(canvas_paints) > n and w.sample_view.drawing_left() == 0,
                            timeout=10000)
            QCoreApplication.sendPostedEvents(None, QEvent.Type.UpdateRequest)  # … and painted all it asked
    finally:
        QApplication.instance().removeEventFilter(paints)
    whole = tabs.width() * tabs.height()
    assert all(area < whole / 4 for area in painted)  # at most the title, caption and border strips
    assert header_paints == []
    qtbot.mouseClick(headers[0], Qt.MouseButton.LeftButton, pos=QPoint(  # a click on a header still sorts
        w.browser.table.horizontalHeader().sectionViewportPosition(5) + 5, 5))
    assert w.browser.proxy.sortColumn() == 5
    canvas = w.sample_view.panels[0].canvas
    vp = canvas.viewport()
    at = vp.mapTo(w, QPoint(0, 0))
    shot = QGuiApplication.primaryScreen().grabWindow(w.winId()).toImage()
    assert shot.copy(at.x(), at.y(), vp.width(), vp.height()) == vp.grab().toImage()

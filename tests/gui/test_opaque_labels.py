"""Labels whose text changes on every sample switch fill their own background: Qt then
repaints such a label alone, not every see-through widget under it up to the window; they stay
opaque after a style sheet's polish, and they look as before."""

from __future__ import annotations

import numpy as np
from paint_log import PaintLog
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication


def test_the_switching_labels_stay_opaque_once_styled_and_shown(window, qtbot, no_internal_errors):
    """A style sheet's polish (the panel titles have one) clears the attribute Qt reads."""
    assert window.commands.open_demo("cafe", sync=True)
    qtbot.waitUntil(lambda: bool(window.sample_view.panels), timeout=20000)
    panel = window.sample_view.panels[0]
    labels = [panel.title, panel.caption, window.review_panel.title, window.status.sample]
    for label in labels:
        assert label.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    panel.title.setStyleSheet("font-weight: normal; padding: 2px;")  # styled again
    QApplication.processEvents()
    assert panel.title.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)


def test_a_label_alone_is_repainted_when_only_it_needs_painting(qtbot):
    """An update of an opaque label paints no widget under it (a see-through one paints its parent)."""
    from PySide6.QtWidgets import QFrame, QVBoxLayout

    from masklens.gui.widgets.elided_label import ElidedLabel

    painted = {}
    for opaque in (False, True):
        host = QFrame()
        qtbot.addWidget(host)
        label = ElidedLabel("Sample s0001", opaque=opaque)
        QVBoxLayout(host).addWidget(label)
        host.resize(300, 60)
        host.show()
        qtbot.waitExposed(host)
        counter = PaintLog()
        host.installEventFilter(counter)
        label.installEventFilter(counter)
        host.setObjectName("host")
        label.setObjectName("label")
        qtbot.wait(50)
        counter.painted.clear()
        label.update()
        qtbot.waitUntil(lambda counter=counter: "label" in counter.painted)
        painted[opaque] = list(counter.painted)
    assert painted[False] == ["host", "label"] and painted[True] == ["label"]


def test_an_opaque_label_looks_like_a_see_through_one(qtbot):
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from masklens.gui.widgets.elided_label import ElidedLabel

    host = QWidget()
    qtbot.addWidget(host)
    lay = QVBoxLayout(host)
    plain, opaque = ElidedLabel("Sample s0001 · group a"), ElidedLabel("Sample s0001 · group a", opaque=True)
    lay.addWidget(plain)
    lay.addWidget(opaque)
    host.resize(300, 80)
    host.show()
    qtbot.waitExposed(host)
    assert plain.size() == opaque.size()
    rgb32 = QImage.Format.Format_RGB32
    a, b = plain.grab().toImage().convertToFormat(rgb32), opaque.grab().toImage().convertToFormat(rgb32)
    pa = np.frombuffer(a.constBits(), np.uint8, a.sizeInBytes())
    pb = np.frombuffer(b.constBits(), np.uint8, b.sizeInBytes())
    assert np.array_equal(pa, pb), int((pa != pb).sum())

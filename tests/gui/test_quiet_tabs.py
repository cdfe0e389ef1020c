"""QuietTabWidget: a label's new text inside a page no longer repaints the whole page
(Qt's QTabWidget does, on every LayoutRequest), while a real change — a longer tab text, a
resize, a page asking for more room — is still laid out as QTabWidget lays it out."""

from __future__ import annotations

import pytest
from paint_log import PaintLog
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QTabWidget, QVBoxLayout, QWidget

from masklens.gui.widgets.quiet_tabs import QuietTabWidget


def _tabs(cls, qtbot):
    tabs = cls()
    qtbot.addWidget(tabs)
    page = QWidget(objectName="page")
    label = QLabel("sample 1", objectName="label")
    label.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # as the panel titles are, and
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # their width
    lay = QVBoxLayout(page)
    lay.addWidget(label)
    lay.addStretch(1)
    tabs.addTab(page, "Sample")
    tabs.resize(400, 300)
    tabs.show()
    qtbot.waitExposed(tabs)
    log = PaintLog()
    for w in (page, label):
        w.installEventFilter(log)
    qtbot.wait(30)
    return tabs, page, label, log


@pytest.mark.parametrize("cls", [QTabWidget, QuietTabWidget])
def test_a_new_label_text_repaints_the_page_only_with_qt_s_tab_widget(cls, qtbot):
    tabs, page, label, log = _tabs(cls, qtbot)
    label.setText("sample 1 · the first text change lays the tab widget out once")
    qtbot.wait(30)
    for i in range(3):
        log.painted.clear()
        label.setText(f"sample {i + 2} · a longer text than before")
        qtbot.waitUntil(lambda: "label" in log.painted)
        qtbot.wait(30)  # the LayoutRequest posted up to the tab widget has been handled
        if cls is QTabWidget:
            assert "page" in log.painted  # what QuietTabWidget removes (the test's contrast)
        else:
            assert log.painted == ["label"]


def test_real_layout_changes_still_lay_out_like_qt_s(qtbot):
    quiet, qpage, _ql, _ = _tabs(QuietTabWidget, qtbot)
    plain, ppage, _pl, _ = _tabs(QTabWidget, qtbot)
    for tabs in (quiet, plain):
        tabs.setTabText(0, "A much longer tab text than before")
        tabs.addTab(QWidget(), "Gallery")
        tabs.resize(500, 340)
    for page in (qpage, ppage):
        page.layout().addWidget(QLabel("another row"))
        page.setMinimumHeight(200)
    qtbot.wait(50)
    assert quiet.tabBar().geometry() == plain.tabBar().geometry()
    assert qpage.geometry() == ppage.geometry()
    assert quiet.minimumSizeHint() == plain.minimumSizeHint()
    assert quiet.tabBar().width() > 0 and qpage.height() > 0

"""The window's layout and View › Reset layout under real use —
160-character sample ids, messages of several lines, shrinking and re-growing, restarts."""

from __future__ import annotations

import json

import pytest
import toykind
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication
from test_gui_defects import open_demo, window_with_settings

pytest.importorskip("masklens.core.kinds.demo")


def _long(sid: str) -> str:
    return sid + "_" + ("very-long-sample-identifier-" * 6)[:159 - len(sid)]


def _long_id_toy(folder) -> dict:
    """The toy benchmark with 160-character ids for all samples but the last."""
    files = toykind.write_toy(folder)
    ann, pred = json.loads(files["ann"].read_text()), json.loads(files["pred"].read_text())
    last = ann["samples"][-1]["id"]
    for s in ann["samples"][:-1]:
        s["id"] = _long(s["id"])
    for p in pred:
        p["sample"] = p["sample"] if p["sample"] == last else _long(p["sample"])
    files["ann"].write_text(json.dumps(ann))
    files["pred"].write_text(json.dumps(pred))
    return files


def _in_window(w, widget) -> QRect:
    return QRect(widget.mapTo(w, widget.rect().topLeft()), widget.size())


def _settle(qtbot, ms: int = 30) -> None:
    qtbot.wait(ms)
    QApplication.processEvents()


def test_long_sample_ids_never_widen_the_window(qtbot, tmp_path, no_internal_errors):
    from masklens.gui.window.main_window import MainWindow

    path = tmp_path / "settings.json"
    w = window_with_settings(qtbot, path, 1400, 900)
    size, review_w = w.size(), w.review_dock.width()
    files = _long_id_toy(tmp_path / "toy")
    assert w.commands.open_benchmark("toy", ["--ann", str(files["ann"]), "--pred", str(files["pred"])])
    qtbot.waitUntil(lambda: bool(w.state.readouts) and not w.jobs.busy, timeout=10000)
    w.review_dock.raise_()
    _settle(qtbot)
    sid = w.state.sample.id
    assert len(sid) == 160
    assert w.size() == size and w.review_dock.width() == review_w  # nothing grew
    title = w.review_panel.title
    assert title.text() == f"Sample {sid}" and title.is_elided() and sid in title.toolTip()
    for b in w.review_panel.buttons.values():  # every verdict button on screen, inside the window
        assert w.rect().contains(_in_window(w, b)), b.text()
    assert w.status.sample.minimumSizeHint().width() < 200  # the status line cannot widen the window either
    w.review_panel.target.addItem("prompt “" + "a very long prompt text " * 8 + "”", "long")  # prompts by text
    _settle(qtbot)
    assert w.size() == size and w.review_dock.width() == review_w
    w.state.set_index(len(w.state.benchmark.samples) - 1)  # a short id: the dock is as it was
    _settle(qtbot)
    assert w.review_dock.width() == review_w and not title.is_elided()
    w.close()  # what is saved is the good layout
    saved = json.loads(path.read_text())
    assert saved["window_rect"][2:] == [size.width(), size.height()]
    w2 = MainWindow(settings_path=path)
    qtbot.addWidget(w2)
    w2.show()
    _settle(qtbot, 60)
    assert w2.size() == size and w2.review_dock.width() == review_w


def test_messages_of_several_lines_cover_nothing(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    w.message_bar.show_message("ann.json: record 'annotations[3]', field 'segmentation': truncated RLE counts\n"
                               "  hint: re-export the file\n  a third line\n  a fourth line\n  a fifth line", "warning")
    _settle(qtbot)
    bar = _in_window(w, w.message_bar)
    tab_bar = w.tabs.tabBar()
    title = w.sample_view.panels[0].title
    assert not bar.intersects(_in_window(w, tab_bar)) and not bar.intersects(_in_window(w, title))
    assert bar.height() < 2 * w.message_bar.fontMetrics().height() + 8  # one line, whatever the text
    assert w.message_bar.more.isVisible()
    i = w.tabs.indexOf(w.set_comparison.tab)  # a click on "Compare sets" under the warning works
    qtbot.mouseClick(tab_bar, Qt.MouseButton.LeftButton, pos=tab_bar.tabRect(i).center())
    assert w.tabs.currentWidget() is w.set_comparison.tab
    sets_row = w.set_comparison.tab.sets_row.geometry()
    sets = QRect(w.set_comparison.tab.mapTo(w, sets_row.topLeft()), sets_row.size())
    assert not bar.intersects(sets) and w.message_bar.isVisible()  # the Sets row is not hidden
    qtbot.mouseClick(w.message_bar.more, Qt.MouseButton.LeftButton)  # asked for: the whole text
    assert w.message_bar.full.isVisible() and "a fifth line" in w.message_bar.full.text()
    qtbot.mouseClick(w.message_bar.more, Qt.MouseButton.LeftButton)
    assert not w.message_bar.full.isVisible()
    w.message_bar.show_message("predictions scored", "info")  # never hides the warning; said on hover
    assert w.message_bar.level == "warning" and "also: predictions scored" in w.message_bar.label.toolTip()


def test_dock_widths_come_back_after_shrinking_and_regrowing(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    qtbot.waitUntil(lambda: w.browser_dock.width() > 300, timeout=5000)
    w.resizeDocks([w.browser_dock], [450], Qt.Orientation.Horizontal)  # the user's choice
    _settle(qtbot)
    widths = (w.browser_dock.width(), w.readout_dock.width())
    for width in (900, 600, 1400):
        w.resize(width, 900)
        _settle(qtbot)
    assert (w.browser_dock.width(), w.readout_dock.width()) == widths


def test_geometry_comes_back_unshifted_on_every_restart(qtbot, tmp_path, no_internal_errors):
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    path = tmp_path / "settings.json"
    w = MainWindow(Settings(), settings_path=path)
    qtbot.addWidget(w)
    w.setGeometry(0, 0, 1600, 1000)
    w.show()
    qtbot.waitUntil(lambda: w.browser_dock.width() > 300, timeout=5000)
    first, dock = w.geometry(), w.browser_dock.width()
    w.close()
    for _ in range(3):
        w = MainWindow(settings_path=path)
        qtbot.addWidget(w)
        w.show()
        _settle(qtbot, 60)
        assert w.geometry() == first and w.browser_dock.width() == dock
        w.close()


def test_reset_layout_brings_every_dock_back(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    qtbot.waitUntil(lambda: w.browser_dock.width() > 300, timeout=5000)
    first = {d.objectName(): (w.dockWidgetArea(d), d.width()) for d in (w.browser_dock, w.readout_dock)}
    w.review_dock.setFloating(True)
    w.browser_dock.hide()
    w.removeToolBar(w.view_toolbar)
    w.addToolBar(Qt.ToolBarArea.LeftToolBarArea, w.view_toolbar)
    w.resizeDocks([w.readout_dock], [700], Qt.Orientation.Horizontal)
    _settle(qtbot)
    act = next(a for a in w.menuBar().actions() if a.text().replace("&", "") == "View")
    reset = next(a for a in act.menu().actions() if a.text().replace("&", "") == "Reset layout")
    reset.trigger()
    qtbot.waitUntil(lambda: w.browser_dock.isVisible() and abs(w.browser_dock.width() - 520) <= 4, timeout=5000)
    assert not w.review_dock.isFloating() and w.toolBarArea(w.view_toolbar) == Qt.ToolBarArea.TopToolBarArea
    for d in (w.browser_dock, w.readout_dock):
        area, width = first[d.objectName()]
        assert w.dockWidgetArea(d) == area and abs(d.width() - width) <= 4, (d.objectName(), d.width(), width)


@pytest.mark.parametrize("kind", ["hallusegbench", "cgebench", "cafe"])
def test_the_prompt_field_is_never_squeezed_below_its_minimum(window, qtbot, kind, no_internal_errors):
    """HalluSegBench's image choice (factual / counterfactual) sits in the second row: the prompt
    field keeps at least its minimum width at the default layout (it was squeezed to ~80 px)."""
    w = window
    open_demo(w, qtbot, kind)
    qtbot.waitUntil(lambda: w.browser_dock.width() > 300, timeout=5000)
    _settle(qtbot)
    pb = w.prompt_bar
    for role in ("positive", "negative", "hypernym"):
        pb.set_role(role)
        _settle(qtbot)
        assert pb.text.width() >= pb.text.minimumSizeHint().width(), (role, pb.text.width())
    if kind == "hallusegbench":
        assert pb.image.isVisible() and pb.image.y() > pb.text.y()


def test_a_layout_pushed_past_the_screen_is_not_saved():
    from PySide6.QtCore import QSize

    from masklens.gui.window.layout_memory import worth_saving

    screen, least = QRect(0, 0, 1600, 1000), QSize(1000, 700)
    assert worth_saving(QSize(1500, 950), screen, least)
    assert not worth_saving(QSize(1796, 950), screen, least)  # widened past the screen: kept out
    assert not worth_saving(QSize(1500, 1200), screen, least)
    assert worth_saving(QSize(1796, 950), QRect(0, 0, 800, 800), least)  # cannot fit at all: as it is

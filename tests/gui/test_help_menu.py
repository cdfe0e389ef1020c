"""Help — F1 opens the shortcut sheet made from the action table, the
filter-language reference lists the open benchmark's columns (a click puts one in the filter),
Help › Documentation opens the docs (caught by a real QDesktopServices URL handler)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QKeySequence
from test_gui_defects import canvas, focus, open_demo

pytest.importorskip("masklens.core.kinds.demo")


def _menu_action(w, menu: str, name: str):
    m = next(a for a in w.menuBar().actions() if a.text().replace("&", "") == menu).menu()
    return next(a for a in m.actions() if a.text().replace("&", "") == name)


def test_f1_opens_the_shortcut_sheet_from_anywhere(window, qtbot, no_internal_errors):
    from masklens.gui.window.help import registered_actions

    w = window
    open_demo(w, qtbot, "cafe")
    for where in (canvas(w), w.browser.expression, w.prompt_bar.text.lineEdit()):
        focus(w, qtbot, where)
        qtbot.keyClick(where, Qt.Key.Key_F1)
        qtbot.waitUntil(lambda: w.help.sheet is not None and w.help.sheet.isVisible(), timeout=3000)
        sheet = w.help.sheet
        rows = {(name, keys) for keys, name, _ in sheet.rows}
        with_keys = [a for a in registered_actions(w) if a.shortcuts()]
        assert len(sheet.rows) == len(with_keys) >= 20
        native = QKeySequence.SequenceFormat.NativeText
        assert ("Next sample", f"{QKeySequence('PgDown').toString(native)}, {QKeySequence('Alt+Right').toString(native)}") in rows
        assert any(n.startswith("Verdict: Model wrong") and k == "M" for n, k in rows), rows
        assert any(n == "Keyboard shortcuts" and k.startswith("F1") for n, k in rows)
        assert sheet.table.rowCount() == len(sheet.rows) and sheet.table.item(0, 0).text() == sheet.rows[0][0]
        sheet.close()
        w.help.sheet = None


def test_filter_reference_lists_the_columns_and_a_click_inserts_one(window, qtbot, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    _menu_action(w, "Help", "Filter language…").trigger()
    ref = w.help.filter_reference
    assert ref.isVisible()
    names = [r[0] for r in ref.rows]
    assert names == w.browser.model.filter_columns()
    meaning = dict(ref.rows)
    assert meaning["verdict"].startswith("your review verdict")
    assert "misleading negative" in meaning["neg_class"], meaning["neg_class"]  # CAFE's own help
    row = names.index("neg_class")
    table = ref.table
    table.scrollToItem(table.item(row, 0))
    rect = table.visualItemRect(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    edit = w.browser.expression
    assert edit.text() == "neg_class " and edit.hasFocus()
    n_all = w.browser.proxy.rowCount()
    qtbot.keyClicks(edit, "== TA-FP")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert 0 < w.browser.proxy.rowCount() < n_all  # the inserted name is a column the filter knows
    ref.close()


class UrlCatcher(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_documentation_opens_the_docs(window, qtbot, no_internal_errors):
    catcher = UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    try:
        _menu_action(window, "Help", "Documentation").trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert len(catcher.urls) == 1
    path = Path(catcher.urls[0].toLocalFile())
    assert path.name == "gui.md" and path.is_file() and "# " in path.read_text()
    assert window.message_bar.text == f"opened {path}"


def test_the_docs_ship_with_the_package_where_help_looks_for_them():
    """An installed window finds masklens/docs/gui.md: pyproject installs docs/ as masklens.docs,
    beside masklens.gui, which is where Help › Documentation looks."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    tool = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "masklens.docs" in tool["packages"] and tool["package-dir"]["masklens.docs"] == "docs"
    assert "*.md" in tool["package-data"]["masklens.docs"]
    assert tool["package-dir"]["masklens.gui"] == "gui"  # docs/ and gui/ are siblings in both layouts


def test_filter_reference_of_hallusegbench_gives_each_column_a_per_sample_meaning_and_typing_goes_on(
        window, qtbot, no_internal_errors):
    """Every HalluSegBench column has a meaning; dIoU_* is this item's drop, not the benchmark's
    mean; after a click puts a name in the filter, keys typed go on there (the main window is
    the active one again), as a user types them: delivered to the active window."""
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    w = window
    w.show()
    w.activateWindow()
    open_demo(w, qtbot, "hallusegbench")
    _menu_action(w, "Help", "Filter language…").trigger()
    ref = w.help.filter_reference
    qtbot.waitUntil(lambda: QApplication.activeWindow() is ref, timeout=3000)
    meaning = dict(ref.rows)
    for name in ("ann_id", "factual_label", "counterfactual_label", "size", "area_factual",
                 "area_counterfactual", "CCMS_item"):
        assert meaning.get(name), name
    assert "of this item" in meaning["dIoU_textual"] and not meaning["dIoU_textual"].startswith("mean over")
    names = [r[0] for r in ref.rows]
    table = ref.table
    row = names.index("IoU_fact")
    table.scrollToItem(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualItemRect(table.item(row, 0)).center())
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w, timeout=3000)
    target = QApplication.activeWindow().windowHandle()
    for ch in "< 0.5":
        QTest.keyClick(target, ch)
    assert w.browser.expression.text() == "IoU_fact < 0.5"
    ref.close()

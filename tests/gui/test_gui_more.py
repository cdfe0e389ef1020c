"""Drag-and-drop, recent files, tooltips, colours, model errors and the integrated menus."""

from __future__ import annotations

import pytest
import toykind
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDropEvent, QImage
from PySide6.QtWidgets import QDialog

from masklens.core.schema import Role
from masklens.gui.prompts.prompt_bar import PromptRequest


def test_drop_a_file_opens_the_dialog_prefilled(window, toy, qtbot, monkeypatch):
    from masklens.gui.window import commands as window_commands

    seen = {}

    def fake_exec(dlg):
        dlg.kinds.setCurrentIndex(dlg.kinds.findData("toy"))
        seen["argv"] = dlg.result_argv()
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(window_commands.OpenDialog, "exec", fake_exec)
    monkeypatch.setattr(window_commands.OpenDialog, "__init__",
                        _init_with_kind(window_commands.OpenDialog.__init__, "toy"))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(toy["ann"]))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert seen["argv"] == ["--ann", str(toy["ann"])]


def _init_with_kind(init, kind):
    def wrapped(self, parent=None, *, kind_=kind, **kw):
        kw["kind"] = kind_
        init(self, parent, **kw)
    return wrapped


def test_recent_menu_reopens(window, toy, qtbot):
    window.commands.open_benchmark("toy", ["--ann", str(toy["ann"])], sync=True)
    first = window.state.benchmark
    window.commands.fill_recent(window.recent_menu)
    actions = [a for a in window.recent_menu.actions() if a.isEnabled()]
    assert actions and actions[0].text() == "toy — toy.json (Toy)"  # by folder and kind
    actions[0].trigger()
    qtbot.waitUntil(lambda: window.state.benchmark is not first, timeout=10000)
    assert window.state.benchmark.name == "toy"


def test_metric_tooltips_come_from_the_kind(toy_window):
    tree = toy_window.readout_panel.tree
    top = tree.topLevelItem(0)
    pos = next(top.child(i) for i in range(top.childCount()) if top.child(i).text(0) == "positive")
    hit = next(pos.child(i) for i in range(pos.childCount()) if pos.child(i).text(0) == "hit")
    assert toykind.KIND.metric_help["hit"] in hit.toolTip(1)
    model = toy_window.browser.model
    col = model.columns.index("positive.best_iou") + model.FIXED_COLUMNS
    assert toykind.KIND.metric_help["best_iou"] in model.headerData(col, Qt.Orientation.Horizontal,
                                                                    Qt.ItemDataRole.ToolTipRole)


def test_colours_change_the_overlay_and_persist(toy_window):
    w = toy_window
    w.view_toolbar.actions_by_name["error"].setChecked(True)
    w.commands.set_colour("fp", "#ff00ff")
    assert w.settings.colours["fp"] == "#ff00ff"
    item = w.sample_view.panels[1].canvas._layers["error"]  # negative: blue box = FP pixels
    img = item.pixmap().toImage().convertToFormat(QImage.Format.Format_ARGB32)  # un-premultiplied
    found = {QColor.fromRgba(img.pixel(x, y)).name() for x in range(img.width()) for y in range(img.height())
             if QColor.fromRgba(img.pixel(x, y)).alpha()}
    assert "#ff00ff" in found  # FP pixels
    assert "#56b4e9" in found  # FN pixels keep the default sky blue


def test_unknown_model_is_a_clear_message(toy_window, qtbot):
    w = toy_window
    w.commands.run_prompt(PromptRequest("red square", Role.POSITIVE, None, None, "no-such-model"))
    qtbot.waitUntil(lambda: w.message_bar.level == "error", timeout=10000)
    assert "unknown model 'no-such-model'" in w.message_bar.text and w.state.live == []


def test_model_selector_lists_every_backend_with_availability(window):
    from masklens.core.models.registry import backend_names

    combo = window.prompt_bar.model
    names = [combo.itemData(i) for i in range(combo.count())]
    assert names == backend_names()
    demo_label = combo.itemText(names.index("demo"))
    assert "weights missing" not in demo_label and "not installed" not in demo_label
    from masklens.core.models.inventory import inventory

    for e in inventory():  # the labels say what `masklens models` says
        label = combo.itemText(names.index(e.name))
        item = combo.model().item(names.index(e.name))
        assert ("not installed" in label) == (not e.available) == (not item.isEnabled())
        assert ("weights missing" in label) == (e.available and e.needs_weights and not e.ready)


def test_integrated_review_evaluate_and_report(toy_window):
    w = toy_window
    menus = {a.text().replace("&", ""): a.menu() for a in w.menuBar().actions()}
    file_items = [a.text() for a in menus["File"].actions()]
    import importlib.util

    if importlib.util.find_spec("masklens.gui.dialogs.report_dialog"):
        assert "Export report…" in file_items
    if importlib.util.find_spec("masklens.gui.dialogs.evaluate_dialog"):
        assert "Run benchmark…" in [a.text() for a in menus["Evaluate"].actions()]
    if w.review_panel is not None:
        assert w.state.review_store is not None
        v = w.review_panel.record("model_wrong")
        assert v is not None
        assert w.browser.model.verdicts.get(w.state.sample.id)
        w.browser.presets.setCurrentText("unreviewed")
        assert w.browser.proxy.rowCount() == len(w.state.benchmark.samples) - 1


@pytest.mark.slow  # imports torch for the real sam3 backend
def test_model_options_and_a_missing_checkpoint(toy_window, qtbot, tmp_path):
    from masklens.gui.prompts.model_options import ModelOptionsDialog, parse_options

    assert parse_options(" /w ", "cpu", "0.4", "mask_threshold=0.3, name=x") == {
        "weights": "/w", "device": "cpu", "score_threshold": 0.4, "mask_threshold": 0.3, "name": "x"}
    dlg = ModelOptionsDialog("sam3", {})
    qtbot.addWidget(dlg)
    dlg.threshold.setText("high")
    dlg._accept()
    assert "number" in dlg.error.text() and dlg.result() != QDialog.DialogCode.Accepted
    w = toy_window
    names = [w.prompt_bar.model.itemData(i) for i in range(w.prompt_bar.model.count())]
    if "sam3" not in names or not w.prompt_bar.model.model().item(names.index("sam3")).isEnabled():
        return
    missing = tmp_path / "no-such-checkpoint"
    w.commands.set_model_options("sam3", {"weights": str(missing), "device": "cpu"})
    w.commands.run_prompt(PromptRequest("red square", Role.POSITIVE, None, None, "sam3"))
    qtbot.waitUntil(lambda: w.message_bar.level == "error", timeout=60000)
    assert str(missing) in w.message_bar.text and "not found" in w.message_bar.text
    assert "Traceback" not in w.message_bar.text and w.state.live == []

"""Every QAction and QShortcut the window registers, triggered as a user would and checked.

The actions are enumerated from the window (menus, the window's own actions, the toolbar, every
widget's shortcut actions, QShortcut objects), so an action added without an entry in ``TABLE``
fails the test. An action with a shortcut is triggered by a real key event for each of its key
sequences (the focus on the canvas, where a user's hands are); one without is triggered as its
menu entry is; one on a toolbar is also clicked there with the mouse. No exception may escape and no "internal error" may be shown (``no_internal_errors``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QToolBar
from test_gui_defects import canvas, focus, open_demo, type_filter

pytest.importorskip("masklens.core.kinds.demo")


def name_of(action: QAction) -> str:
    return action.text().replace("&", "")


def toolbar_button(w, action: QAction):
    """The button a user clicks for ``action`` on one of the window's toolbars, else None."""
    for bar in w.findChildren(QToolBar):
        if action in bar.actions():
            return bar.widgetForAction(action)
    return None


def registered_actions(w) -> list[QAction]:
    """The window's actions, as the F1 shortcut sheet lists them (one function: they cannot drift)."""
    from masklens.gui.window.help import registered_actions as actions_of

    return actions_of(w)


@dataclass
class Entry:
    """How to prepare, and what must hold after the action ran (``before`` → ``check``)."""

    check: Callable[[Any, Any], None]  # (window, what before returned)
    before: Callable[[Any], Any] = lambda w: None


class Seen:
    """Modal dialogs opened by actions are recorded and answered with Cancel; Qt's file dialogs
    (``QFileDialog.getSaveFileName``/``getOpenFileName``) are answered from ``file_answers`` by
    caption ("": Cancel)."""

    def __init__(self, monkeypatch) -> None:
        self.dialogs: list[QDialog] = []
        self.file_answers: dict[str, str] = {}
        self.files_asked: list[str] = []

        def ask_file(parent, caption="", directory="", filter="", *args, **kwargs):  # noqa: A002 - Qt's names
            self.files_asked.append(caption)
            return self.file_answers.get(caption, ""), ""

        from PySide6.QtWidgets import QFileDialog

        monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(ask_file))
        monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(ask_file))

        def exec_(dlg) -> int:
            self.dialogs.append(dlg)
            return QDialog.DialogCode.Rejected

        from masklens.gui.dialogs.colours_dialog import ColoursDialog
        from masklens.gui.dialogs.open_dialog import OpenDialog

        monkeypatch.setattr(OpenDialog, "exec", exec_)
        monkeypatch.setattr(ColoursDialog, "exec", exec_)


def _dialog_shown(cls_path: str, **attrs):
    def check(w, _before):
        seen: Seen = w._seen
        mod, _, cls = cls_path.rpartition(".")
        import importlib

        klass = getattr(importlib.import_module(mod), cls)
        found = [d for d in seen.dialogs if isinstance(d, klass)] + w.findChildren(klass)
        assert found, f"no {cls} shown"
        for k, v in attrs.items():
            assert getattr(found[-1], k) == v
        for d in w.findChildren(klass):
            d.close()
            d.deleteLater()
        seen.dialogs.clear()

    return check


def _workspace_saved():
    """File › Save workspace…: the path the file dialog answers holds the open benchmark."""
    def before(w):
        import tempfile

        out = Path(tempfile.mkdtemp()) / "w.masklens"
        w._seen.file_answers["Save workspace"] = str(out)
        return out

    def check(w, out):
        assert json.loads(out.read_text())["kind"] == w.state.kind.name
        out.unlink()

    return Entry(check, before)


def _model_environment_set():
    """Evaluate › Model environment…: the Python the file dialog answers runs the models next."""
    import sys

    from masklens.gui.window.model_environment import set_model_environment

    def before(w):
        caption = "Model environment: the Python that has masklens[models]"
        w._seen.file_answers[caption] = sys.executable

    def check(w, _):
        assert w.model_host.python == Path(sys.executable)
        assert set_model_environment(w, None)  # back to the default, for the next entries

    return Entry(check, before)


def _index_moved(delta: int):
    return Entry(before=lambda w: w.state.index,
                 check=lambda w, i: (w.state.index == i + delta) or pytest.fail(f"{w.state.index} != {i}+{delta}"))


def _toggled(name: str, layer: str | None):
    def before(w):
        return w.view_toolbar.actions_by_name[name].isChecked()

    def check(w, was):
        act = w.view_toolbar.actions_by_name[name]
        assert act.isChecked() != was
        if layer is not None:
            assert (layer in canvas(w).layer_names()) == act.isChecked() or name == "outlines"
        act.setChecked(was)  # back, for the next entries

    return Entry(check, before)


def _fit(w, _):
    c = canvas(w)
    c.fit()
    fitted = c.scale_factor()
    c.zoom(2.0)
    return fitted


def _dock_toggled(title: str):
    def before(w):
        dock = next(d for d in w.findChildren(type(w.browser_dock)) if d.windowTitle() == title)
        return dock, dock.isVisible()

    def check(w, got):
        dock, was = got
        assert dock.isVisible() != was
        dock.setVisible(was)

    return Entry(check, before)


def _verdict(key: str):
    def check(w, _):
        from masklens.core.review.locations import benchmark_key

        sid = w.state.sample.id
        mine = w.state.review_store.sample_verdicts(benchmark_key(w.state.benchmark)).get(sid, [])
        assert any(v.verdict == key for v in mine), (key, mine)

    return Entry(check)


def _next_unreviewed(w, before):
    from masklens.core.review.locations import benchmark_key

    done = w.state.review_store.sample_verdicts(benchmark_key(w.state.benchmark))
    assert w.state.sample.id not in done and w.state.index != before


def _undo_last_verdict():
    """A verdict recorded first (M, from the canvas); Ctrl+Z appends its retraction."""
    def before(w):
        from masklens.core.review.locations import benchmark_key

        focus(w, w._qtbot, canvas(w))
        w._qtbot.keyClick(canvas(w), Qt.Key.Key_M)
        key = benchmark_key(w.state.benchmark)
        newest = w.state.review_store.history(key)[-1]
        assert newest.sample_id == w.state.sample.id and not newest.retracts
        return key, newest, len(w.state.review_store.history(key))

    def check(w, got):
        key, v, n = got
        current = w.state.review_store.sample_verdicts(key).get(v.sample_id, [])
        assert v.uid not in {c.uid for c in current}
        assert w.state.review_store.history(key)[-1].retracts == v.uid
        assert len(w.state.review_store.history(key)) == n + 1  # a retraction appended, nothing deleted
        assert w.message_bar.text.startswith("undone:"), w.message_bar.text

    return Entry(check, before)


def _tool_chosen(tool: str):
    def before(w):
        w.visual_tool.set_tool("box" if tool == "pan" else "pan")

    def check(w, _):
        assert w.visual_tool.tool == tool and w.visual_tool.tool_actions[tool].isChecked()
        assert canvas(w).tool == tool
        w.visual_tool.set_tool("pan")

    return Entry(check, before)


def _drawn_box(w):
    """A box drawn on the first panel (as the Box tool's drag adds it)."""
    spec = w.sample_view.specs[0]
    w.visual_tool.set_tool("box")
    w.visual_tool.add(spec.image, box=(10.0, 10.0, 40.0, 40.0))
    assert [m[0] for m in canvas(w).marks()] == ["box"]
    return len(w.state.live)


def _cleared(w, _):
    assert not w.visual_tool.prompt and canvas(w).marks() == [] and w.visual_tool.tool == "pan"


def _ran_drawn(w, n):
    w._qtbot.waitUntil(lambda: len(w.state.live) > n and not w.jobs.busy, timeout=30000)
    assert w.state.live[-1].prompt.meta["boxes"][0] == pytest.approx((10.0, 10.0, 40.0, 40.0))
    w.visual_tool.clear()


def _about_shown(w, _):
    dlg = w.about.dialog
    assert dlg is not None and dlg.isVisible(), "About masklens not shown"
    assert "masklens" in dlg.text()
    dlg.close()


def _editing(w, instance: int | None = 0):
    """An edit of the first panel's ground-truth instance (as Correct › Select's click starts one)."""
    w.visual_tool.set_tool("correct")
    c = w.correction
    c.end()
    assert c.start(0, w.sample_view.specs[0].gts[0], instance)
    if not hasattr(w, "_accepted"):
        c.accepted.connect(lambda *a: w._accepted.append(a))
    w._accepted = []
    return c.session, np.array(c.session.mask)


def _done_editing(w):
    w.correction.end()
    w.visual_tool.set_tool("pan")


def _edit_entry(prepare, check):
    """Before: an edit, ``prepare(w, session)``; check: ``check(w, session, mask before)``."""
    def before(w):
        s, m = _editing(w)
        prepare(w, s)
        w.correction._show()  # the toolbar follows the session (enabled Undo, Add…)
        return s, np.array(s.mask) if s is not None else m

    def after(w, got):
        check(w, *got)
        _done_editing(w)

    return Entry(after, before)


def _subtool(name: str):
    def check(w, _):
        assert w.correction.subtool == name and w.visual_tool.tool == "correct"
        w.visual_tool.set_tool("pan")

    return Entry(check, lambda w: w.correction.toolbar.subtools["select" if name != "select" else "brush"]
                 .setChecked(True))


def _brush_resized(grew: bool):
    return Entry(before=lambda w: w.correction.radius,
                 check=lambda w, r: (w.correction.radius > r) == grew or pytest.fail(f"{w.correction.radius} vs {r}"))


def _hole(w, s):
    ys, xs = s.mask.nonzero()
    y, x = int(ys.mean()), int(xs.mean())
    s.begin_stroke(x, y, 1, erase=True)
    s.end_stroke()


def _proposal(w, s):
    p = np.zeros(s.shape, bool)
    p[: s.shape[0] // 2, : s.shape[1] // 3] = True
    w.correction._set_proposal(p)


def _combined(mode: str):
    def check(w, s, before):
        p = np.zeros(s.shape, bool)
        p[: s.shape[0] // 2, : s.shape[1] // 3] = True
        want = before | p if mode == "add" else before & ~p if mode == "subtract" else p
        assert np.array_equal(s.mask, want) and w.correction.proposal is None

    return _edit_entry(_proposal, check)


def _stroked(w, s):
    s.begin_stroke(3, 3, 3)
    s.end_stroke()


def _no_category_change(w, s, before):
    """CAFE's ground truth carries no categories: the action is disabled, says why, does nothing."""
    act = w.correction.toolbar.commands["category"]
    assert not act.isEnabled() and "cafe's ground truth carries no categories" in act.toolTip()
    assert w.correction.session is s and not w._accepted and np.array_equal(s.mask, before)


def _accepted(mask_expected: bool, instance: int | None = 0):
    def check(w, s, before):
        assert w.correction.session is None and len(w._accepted) == 1, w._accepted
        sid, key, inst, mask, tools = w._accepted[0]
        assert sid == w.state.sample.id and inst == instance and (mask is not None) == mask_expected
        assert tools == (["brush"] if mask is not None else ["delete"])
        if mask is not None:
            assert mask.area == int(before.sum())

    return check


def _edit_difference():
    """On a HalluSegBench demo sample (CAFE has no image pairs: the action is disabled there)."""
    def before(w):
        assert not w.edit_check.action.isEnabled()  # CAFE
        open_demo(w, w._qtbot, "hallusegbench")
        w._qtbot.waitUntil(lambda: not w.jobs.busy, timeout=20000)
        return w.edit_check.action.isChecked()

    def check(w, was):
        ec = w.edit_check
        assert ec.action.isChecked() != was and bool(ec.items) == ec.action.isChecked()
        ec.action.setChecked(False)

    return Entry(check, before)


def _layout_changed(w):
    """A dock floated, one hidden, the toolbar moved: Reset layout brings them back."""
    w.review_dock.setFloating(True)
    w.browser_dock.hide()
    w.removeToolBar(w.view_toolbar)
    w.addToolBar(Qt.ToolBarArea.LeftToolBarArea, w.view_toolbar)
    w.view_toolbar.show()


def _layout_reset(w, _):
    w._qtbot.waitUntil(lambda: w.browser_dock.isVisible() and w.browser_dock.width() > 400, timeout=5000)
    assert not w.review_dock.isFloating() and w.toolBarArea(w.view_toolbar) == Qt.ToolBarArea.TopToolBarArea


def _sheet_shown(w, _):
    sheet = w.help.sheet
    assert sheet is not None and sheet.isVisible(), "no shortcut sheet"
    listed = {(r[1], r[0]) for r in sheet.rows}
    for a in registered_actions(w):
        for seq in a.shortcuts():
            assert any(n == name_of(a) and seq.toString(QKeySequence.SequenceFormat.NativeText) in k
                       for n, k in listed), (name_of(a), seq.toString())
    sheet.close()


def _reference_shown(w, _):
    ref = w.help.filter_reference
    assert ref is not None and ref.isVisible()
    names = [r[0] for r in ref.rows]
    assert names == w.browser.model.filter_columns() and "neg_class" in names
    ref.close()


class UrlCatcher(QObject):
    """A real QDesktopServices handler for file: URLs (no browser is started)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url.toLocalFile())


def _catch_urls(w):
    w._url_catcher = UrlCatcher()
    QDesktopServices.setUrlHandler("file", w._url_catcher, "open")


def _docs_opened(w, _):
    QDesktopServices.unsetUrlHandler("file")
    opened = w._url_catcher.urls
    assert len(opened) == 1 and opened[0].endswith("docs/gui.md"), opened
def _one_correction(w):
    """The store's corrections retracted, then one recorded (a square added to instance 0)."""
    from masklens.core.masks import Mask
    from masklens.core.review.locations import benchmark_key

    st = w.state.review_store
    for c in st.corrections(benchmark_key(w.state.benchmark)):
        st.retract_correction(c)
    sample, gt_key = w.state.sample, w.sample_view.specs[0].gts[0]
    m = sample.gts[gt_key].masks[0].to_array().astype(bool).copy()
    m[:10, :10] = True
    return w.corrections_link.persist(sample.id, gt_key, 0, Mask.from_array(m))


def _corrected_switch():
    def before(w):
        return _one_correction(w), w.corrected_view.on

    def check(w, got):
        c, was = got
        view = w.corrected_view
        assert view.on != was and view.action.isChecked() == view.on
        if view.on:
            assert view.changed == {c.sample_id}
            assert w.state.benchmark.sample(c.sample_id).gts[c.gt_key].masks[0] == c.mask
        view.action.setChecked(was)

    return Entry(check, before)


def _written_by(action: str):
    """Apply corrections… / Export verdicts/corrections…: the path asked for is written."""
    def before(w):
        import tempfile

        c = _one_correction(w)
        out = Path(tempfile.mkdtemp()) / f"{action}.json"
        w.corrections_link.ask_path = lambda *_a: str(out)
        return c, out

    def check(w, got):
        c, out = got
        data = json.loads(out.read_text())
        if action == "apply":
            log = json.loads(out.with_name(f"{out.stem}.changelog.json").read_text())
            assert [e["uid"] for e in log["corrections"]] == [c.uid] and data
        else:
            assert [e["uid"] for e in data["corrections"]] == [c.uid]

    return Entry(check, before)


def table(w) -> dict[str, Entry]:
    from masklens.core.kinds.demo import demo_kinds
    from masklens.core.review.verdict_types import VERDICT_TYPES
    from masklens.core.scoring.contract import get_kind
    from masklens.gui.correct.toolbar import SUBTOOLS

    t: dict[str, Entry] = {
        "Open benchmark…": Entry(_dialog_shown("masklens.gui.dialogs.open_dialog.OpenDialog", predictions_only=False)),
        "Open predictions…": Entry(_dialog_shown("masklens.gui.dialogs.open_dialog.OpenDialog", predictions_only=True)),
        "Export report…": Entry(_dialog_shown("masklens.gui.dialogs.report_dialog.ReportDialog")),
        "Run benchmark…": Entry(_dialog_shown("masklens.gui.dialogs.evaluate_dialog.EvaluateDialog")),
        "Save workspace…": _workspace_saved(),
        "Model environment…": _model_environment_set(),
        "Colours…": Entry(_dialog_shown("masklens.gui.dialogs.colours_dialog.ColoursDialog")),
        "Reset layout": Entry(before=_layout_changed, check=_layout_reset),
        "Next sample": _index_moved(+1),
        "Previous sample": _index_moved(-1),
        "Next failure (match of the current filter)": Entry(
            before=lambda w: (type_filter(w, w._qtbot, "group != " + str(w.state.sample.group)), w.state.index)[1],
            check=lambda w, i: (w.state.index != i and w.browser.proxy.matches(w.state.index))
            or pytest.fail("F3 did not jump to a match")),
        "Ground truth": _toggled("gt", "gt"),
        "Prediction": _toggled("pred", "pred"),
        "TP/FP/FN": _toggled("error", "error"),
        "Outlines": _toggled("outlines", None),
        "Scores": _toggled("scores", None),
        "Fit": Entry(before=lambda w: _fit(w, None),
                     check=lambda w, f: canvas(w).scale_factor() == pytest.approx(f, rel=0.01) or pytest.fail("no fit")),
        "1:1": Entry(check=lambda w, _: canvas(w).scale_factor() == pytest.approx(1.0) or pytest.fail("not 1:1")),
        "Samples": _dock_toggled("Samples"),
        "Readout": _dock_toggled("Readout"),
        "Typed prompts": _dock_toggled("Typed prompts"),
        "Review": _dock_toggled("Review"),
        "Next unreviewed sample": Entry(before=lambda w: w.state.index, check=_next_unreviewed),
        "Undo last verdict": _undo_last_verdict(),
        "Pan": _tool_chosen("pan"),
        "Box": _tool_chosen("box"),
        "Points": _tool_chosen("point"),
        "Clear (in an edit: close the edit)": Entry(before=_drawn_box, check=_cleared),
        "About masklens": Entry(check=_about_shown),
        "Correct": _tool_chosen("correct"),
        "Edit difference": _edit_difference(),
        **{label: _subtool(name) for name, (label, _k, _t) in SUBTOOLS.items()},
        "Smaller brush": _brush_resized(False),
        "Larger brush": _brush_resized(True),
        "Close polygon": _edit_entry(
            lambda w, s: setattr(w.correction, "polygon", [(1, 1), (9, 1), (9, 9), (1, 9)]),
            lambda w, s, before: (s.mask.sum() > before.sum() and not w.correction.polygon) or pytest.fail("not filled")),
        "Fill holes": _edit_entry(_hole, lambda w, s, before: np.array_equal(s.mask, w.state.sample.gts[s.gt_key]
                                                                              .masks[0].to_array().astype(bool))
                                  or pytest.fail("hole not filled")),
        "Add proposal": _combined("add"),
        "Subtract proposal": _combined("subtract"),
        "Replace by proposal": _combined("replace"),
        "New instance": Entry(before=lambda w: (_done_editing(w), w.visual_tool.set_tool("correct")),
                              check=lambda w, _: (w.correction.session is not None and w.correction.session.instance
                                                  is None and _done_editing(w) is None) or pytest.fail("no new instance")),
        "Delete instance": _edit_entry(lambda w, s: None, _accepted(False)),
        "Change category…": _edit_entry(lambda w, s: None, _no_category_change),
        "Undo edit": _edit_entry(_stroked, lambda w, s, before: (not s.undo_stack and s.area < before.sum())
                                 or pytest.fail("not undone")),
        "Redo edit": _edit_entry(lambda w, s: (_stroked(w, s), s.undo()),
                                 lambda w, s, before: (len(s.undo_stack) == 1 and s.area > before.sum())
                                 or pytest.fail("not redone")),
        "Accept edit": _edit_entry(_stroked, _accepted(True)),
        "Discard edit": _edit_entry(_stroked, lambda w, s, before: (w.correction.session is None and not w._accepted)
                                    or pytest.fail("not discarded")),
        "Keyboard shortcuts": Entry(check=_sheet_shown),
        "Filter language…": Entry(check=_reference_shown),
        "Documentation": Entry(before=_catch_urls, check=_docs_opened),
        "Run drawn": Entry(before=lambda w: (w.prompt_bar.select_model("demo"), _drawn_box(w))[1], check=_ran_drawn),
        "Corrected ground truth": _corrected_switch(),
        "Apply corrections…": _written_by("apply"),
        "Export verdicts/corrections…": _written_by("export"),
    }
    for k in demo_kinds():
        t[f"{get_kind(k).title or k} ({k})"] = Entry(
            check=lambda w, _, k=k: (w._qtbot.waitUntil(lambda: w.state.kind.name == k and not w.jobs.busy,
                                                        timeout=20000)))
    for vt in VERDICT_TYPES.values():
        t[f"Verdict: {vt.label}"] = _verdict(vt.key)
    # the recent entry of the benchmark opened by the test, and Quit (last: it closes the window)
    t["Quit"] = Entry(check=lambda w, _: (not w.isVisible()) or pytest.fail("still open"))
    return t


def test_every_action_and_shortcut_is_triggered_and_checked(window, qtbot, monkeypatch, no_internal_errors):
    w = window
    w._qtbot, w._seen = qtbot, Seen(monkeypatch)
    open_demo(w, qtbot, "cafe")
    assert w.findChildren(QShortcut) == [], "a QShortcut needs an entry in this test's table"
    actions = registered_actions(w)
    entries = table(w)
    names = [name_of(a) for a in actions]
    missing = [n for n in names if n not in entries]
    assert not missing, f"actions without a test entry: {missing}"
    ran = []
    for a in sorted(actions, key=lambda a: name_of(a) == "Quit"):  # Quit last
        entry = entries[name_of(a)]
        # every key sequence of the action, and a mouse click on its toolbar button; each checked
        ways: list[QKeySequence | str | None] = [*a.shortcuts()] or [None]
        if toolbar_button(w, a) is not None:
            ways.append("mouse")
        for way in ways:
            if w.state.kind is None or w.state.kind.name != "cafe":
                open_demo(w, qtbot, "cafe")
            w.state.set_index(1)
            got = entry.before(w)
            if way == "mouse":
                button = toolbar_button(w, a)
                if not button.isVisible():  # the correction toolbar shows in Correct mode, as a user sees it
                    w.visual_tool.set_tool("correct")
                    w.correction._show()
                assert button.isVisible(), f"{name_of(a)}: its button cannot be seen"
                qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
            elif way is None:
                a.trigger()  # as its menu entry does
            else:
                focus(w, qtbot, canvas(w))
                qtbot.keyClick(canvas(w), way[0].key(), way[0].keyboardModifiers())
            entry.check(w, got)
            ran.append((name_of(a), way.toString() if isinstance(way, QKeySequence) else way or "menu"))
    assert not w.isVisible()  # Quit ran last
    assert len(set(names)) >= 30 and ("Next sample", "Alt+Right") in ran and ("Next sample", "PgDown") in ran
    clicked = {n for n, way in ran if way == "mouse"}
    assert {"Pan", "Box", "Points", "Correct", "Run drawn", "Accept edit", "Brush"} <= clicked, clicked


def test_key_sequences_are_unique(window):
    """Two actions on one key would make Qt fire neither ("ambiguous shortcut")."""
    seen: dict[str, str] = {}
    for a in registered_actions(window):
        for s in a.shortcuts():
            text = s.toString(QKeySequence.SequenceFormat.PortableText)
            assert text not in seen, f"{text}: {seen[text]} and {name_of(a)}"
            seen[text] = name_of(a)

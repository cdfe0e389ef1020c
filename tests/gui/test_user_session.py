"""A scripted user session on each demo kind, with real key and
mouse events: open the demo from File › Open demo, filter the sample list by typing an
expression, step with F3, type a prompt with each role the benchmark has, move each slider,
record and undo a verdict, attach a second prediction set and compare, select a range in the
Gallery and give it one verdict (undone at once), draw a box prompt and run it, export a report. After every step the status bar, the sample list's selection, the
readout card and the canvas layers must agree; no exception may reach ``sys.excepthook`` and no
Qt critical message or "internal error" may be shown (``no_internal_errors``)."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QSlider
from test_gui_defects import canvas, focus, open_demo, type_filter, type_prompt

from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store

demo = pytest.importorskip("masklens.core.kinds.demo")

KINDS = ["cafe", "hallusegbench", "cgebench", "r2sm", "pcs", "ovs"]


# ------------------------------------------------------------------ what must agree after a step
def settle(w, qtbot) -> None:
    qtbot.waitUntil(lambda: not w.jobs.busy and not w.rescoring.runner.busy
                    and not w.readout_panel.sliders._timer.isActive(), timeout=30000)
    qtbot.wait(10)  # queued slots (deck refresh, browser re-plan) run


def consistent(w, qtbot, step: str) -> None:
    """Status bar, sample list, readout card and canvas describe the same sample."""
    settle(w, qtbot)
    s, b = w.state, w.browser
    sample, n = s.sample, len(s.benchmark.samples)
    status = w.status.sample.text()
    assert status.startswith(f"sample {s.index + 1}/{n}: {sample.id}"), (step, status)
    assert ("outside the filter" in status) == b.current_outside(), (step, status)
    cur = b.table.currentIndex()
    shown = b.proxy.mapFromSource(b.model.index(s.index, 0))
    if shown.isValid():  # the sample shown is the one selected in the list
        assert cur.isValid() and b.proxy.mapToSource(cur).row() == s.index, step
    if w.tabs.currentWidget() is getattr(w, "gallery", None):  # the gallery's current tile is the list's row
        assert w.gallery.grid.current() == cur.row(), step
    card = w.readout_panel.deck.main_card
    if s.readout() is not None:
        assert card is not None and card.ctx.sample.id == sample.id, step
    if w.tabs.currentWidget() is w.sample_view:
        specs = w.sample_view.specs
        assert [p.prompt_id for p in specs] == [p.prompt_id for p in w.sample_view.specs]
        layers = [set(p.canvas.layer_names()) for p in w.sample_view.panels]
        assert len(layers) == len(specs), step
        for name in ("gt", "pred", "error"):
            if not w.view_toolbar.actions_by_name[name].isChecked():
                assert not any(name in ls for ls in layers), (step, name, layers)
        if w.view_toolbar.actions_by_name["gt"].isChecked() and any(spec.gts for spec in specs):
            assert any("gt" in ls for ls in layers), (step, layers)


# ------------------------------------------------------------------ steps
def filter_by_typing(w, qtbot) -> None:
    """A numeric column at its median: about half the samples match; the list says so."""
    m = w.browser.model
    for col in m.filter_columns():
        values = [m.flat(i).get(col) for i in range(m.rowCount())]
        nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(nums) == m.rowCount() and len(set(nums)) > 2:
            break
    else:
        pytest.fail("no numeric column to filter on")
    cut = statistics.median(nums)
    type_filter(w, qtbot, f"{col} >= {cut:g}")
    matching = sum(v >= float(f"{cut:g}") for v in nums)
    assert w.browser.count.text() == f"{matching} / {m.rowCount()}", w.browser.count.text()
    assert w.browser.expression.styleSheet() == ""  # applied, not flagged


def step_with_f3(w, qtbot) -> None:
    before = w.state.index
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(canvas(w), Qt.Key.Key_F3)
    assert w.browser.proxy.matches(w.state.index)
    n = sum(w.browser.proxy.matches(i) for i in range(w.browser.model.rowCount()))
    assert w.state.index != before or (n == 1 and w.browser.proxy.matches(before))


def click_row(w, qtbot, source_row: int) -> None:
    b = w.browser
    idx = b.proxy.mapFromSource(b.model.index(source_row, 1))
    if not idx.isValid():  # filtered out: clear the expression (typed away) first
        edit = b.expression
        focus(w, qtbot, edit)
        edit.selectAll()
        qtbot.keyClick(edit, Qt.Key.Key_Backspace)
        qtbot.keyClick(edit, Qt.Key.Key_Return)
        assert b.count.text() == f"{b.model.rowCount()} / {b.model.rowCount()}"
        idx = b.proxy.mapFromSource(b.model.index(source_row, 1))
    b.table.scrollTo(idx)
    pos = b.table.visualRect(idx).center()
    qtbot.mouseClick(b.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert w.state.index == source_row, (pos, b.table.viewport().size(), b.proxy.mapToSource(b.table.indexAt(pos)).row())


def type_each_role(w, qtbot) -> None:
    w.prompt_bar.select_model("demo")
    samples = w.state.benchmark.samples
    roles = list(dict.fromkeys(p.role for s in samples for p in s.prompts))
    assert roles
    for role in roles:
        if role not in {p.role for p in w.state.sample.prompts}:
            click_row(w, qtbot, next(i for i, s in enumerate(samples) if role in {p.role for p in s.prompts}))
        combo = w.prompt_bar.role
        focus(w, qtbot, combo)
        while w.prompt_bar.current_role() != role:  # the role chosen with the keyboard
            before = combo.currentIndex()
            qtbot.keyClick(combo, Qt.Key.Key_Down if combo.findData(role) > before else Qt.Key.Key_Up)
            assert combo.currentIndex() != before
        original = next(p for p in w.state.sample.prompts if p.role == role)
        n = len(w.state.live)
        type_prompt(w, qtbot, original.text or "object")
        qtbot.waitUntil(lambda n=n: len(w.state.live) > n and not w.jobs.busy, timeout=30000)
        r = w.state.live[-1]
        assert r.prompt.role == role and r.sample_id == w.state.sample.id
        assert w.message_bar.level != "error", w.message_bar.text
        settle(w, qtbot)
        assert any(t[0] is r for t in w.readout_panel.deck.typed)  # its card beside the original's
        consistent(w, qtbot, f"typed {role.value}")


def move_each_slider(w, qtbot) -> None:
    sliders = w.readout_panel.sliders.sliders
    assert sliders
    for name, labeled in sliders.items():
        slider = labeled.findChild(QSlider)
        focus(w, qtbot, slider)
        before = w.state.params[name]
        up = labeled.value() < labeled.maximum()
        index = w.state.index
        for _ in range(3):  # three steps of 1 % of the range, then a page (10 %)
            qtbot.keyClick(slider, Qt.Key.Key_Right if up else Qt.Key.Key_Left)
        qtbot.keyClick(slider, Qt.Key.Key_PageUp if up else Qt.Key.Key_PageDown)
        settle(w, qtbot)
        assert w.state.index == index  # Page Up/Down moved the slider, not the sample
        assert w.state.params[name] != before and w.state.params[name] == pytest.approx(labeled.value())
        consistent(w, qtbot, f"slider {name}")


def verdict_and_undo(w, qtbot) -> None:
    if w.review_panel is None:
        return
    focus(w, qtbot, canvas(w))
    key, sid = benchmark_key(w.state.benchmark), w.state.sample.id
    qtbot.keyClick(canvas(w), Qt.Key.Key_M)
    assert "Ctrl+Z to undo" in w.message_bar.text
    bar = w.message_bar  # one line of text in a box one line high, not three over the tabs
    assert bar.height() < 1.6 * bar.fontMetrics().height() + 14, bar.height()
    assert [v.verdict for v in w.state.review_store.sample_verdicts(key).get(sid, [])] == ["model_wrong"]
    qtbot.keyClick(canvas(w), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert w.message_bar.text.startswith("undone:")
    with open_store(w.state.review_store.path, Role.READ) as st:
        assert st.current(key) == [] and len(st.history(key)) == 2  # a retraction, nothing deleted
    consistent(w, qtbot, "verdict undone")


def attach_and_compare(w, qtbot) -> None:
    assert w.commands.attach_predictions(w.state.namespace, "second run", sync=True)
    w.state.set_active("demo predictions")
    bar = w.tabs.tabBar()
    i = w.tabs.indexOf(w.set_comparison.tab)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
    cmp = w.set_comparison
    assert w.tabs.currentWidget() is cmp.tab
    assert cmp.compared() == ["demo predictions", "second run"]
    base = len(w.sample_view.specs)
    titles = [p.title.text() for p in cmp.tab.view.panels]
    assert titles[0].startswith("A") and titles[base].startswith("B"), titles
    assert set(cmp.tab.cards.cards) >= {"A", "B"}
    if cmp.failure() is not None:  # the same predictions: nothing fixed, nothing broken
        changes = {w.browser.model.flat(i)["compare.B.change"] for i in range(w.browser.model.rowCount())}
        assert changes == {"same"}
    consistent(w, qtbot, "compare")
    i = w.tabs.indexOf(w.sample_view)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
    assert w.tabs.currentWidget() is w.sample_view


def gallery_and_batch_verdict(w, qtbot) -> None:
    """The Gallery tab shows the list's rows; a Shift+click selects a range in both views; one
    key records a verdict for each selected sample; one Ctrl+Z takes all of them back."""
    bar = w.tabs.tabBar()
    i = w.tabs.indexOf(w.gallery)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
    assert w.tabs.currentWidget() is w.gallery
    grid = w.gallery.grid
    qtbot.waitUntil(lambda: bool(grid.painted), timeout=5000)
    rows = list(w.browser.proxy.visible_rows())
    assert grid.painted == rows[: len(grid.painted)]
    n = min(3, grid.count())
    click = lambda k, mods=Qt.KeyboardModifier.NoModifier: qtbot.mouseClick(  # noqa: E731
        grid.viewport(), Qt.MouseButton.LeftButton, mods, grid.tile_rect(k).center())
    click(0)
    click(n - 1, Qt.KeyboardModifier.ShiftModifier)
    assert grid.selected_rows() == list(range(n)) and w.state.index == rows[n - 1]
    consistent(w, qtbot, "gallery range")
    if w.review_panel is not None and n > 1:
        key = benchmark_key(w.state.benchmark)
        ids = {w.browser.model.samples[r].id for r in rows[:n]}
        qtbot.keyClick(grid.viewport(), Qt.Key.Key_K)  # Fine, for every selected sample
        assert {v.sample_id for v in w.state.review_store.current(key) if v.verdict == "fine"} == ids
        assert all(w.gallery.tiles.glyphs(r) == [("✓", "#009E73")] for r in rows[:n])
        qtbot.keyClick(grid.viewport(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        assert w.state.review_store.current(key) == []
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Left)
    assert w.state.index == rows[max(0, n - 2)]
    qtbot.keyClick(grid.viewport(), Qt.Key.Key_Return)  # back to the Sample tab, on that sample
    assert w.tabs.currentWidget() is w.sample_view
    consistent(w, qtbot, "gallery")


def draw_box_and_run(w, qtbot) -> None:
    c = canvas(w)
    qtbot.waitUntil(lambda: c.width() > 100, timeout=3000)
    focus(w, qtbot, c)
    qtbot.keyClick(c, Qt.Key.Key_B)
    spec, sample = w.sample_view.specs[0], w.state.sample
    h, wd = w.store.image(sample.images[spec.image]).shape[:2]
    x0, y0, x1, y1 = wd * 0.25, h * 0.25, wd * 0.75, h * 0.75
    vp = c.viewport()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=c.mapFromScene(QPointF(x0, y0)))
    qtbot.mouseMove(vp, c.mapFromScene(QPointF(x1, y1)))
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=c.mapFromScene(QPointF(x1, y1)))
    assert [m[0] for m in c.marks()] == ["box"]
    n = len(w.state.live)
    qtbot.keyClick(c, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(w.state.live) > n and not w.jobs.busy, timeout=30000)
    r = w.state.live[-1]
    assert np.allclose(r.prompt.meta["boxes"][0], (x0, y0, x1, y1), atol=3.5)
    assert w.message_bar.level != "error", w.message_bar.text
    qtbot.keyClick(c, Qt.Key.Key_Escape)  # the drawn prompt cleared, Pan back
    assert not w.visual_tool.prompt and w.visual_tool.tool == "pan"
    consistent(w, qtbot, "box run")


def export_report(w, qtbot, out) -> None:
    from masklens.gui.dialogs.report_dialog import ReportDialog

    focus(w, qtbot, canvas(w))
    qtbot.keyClick(w, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    rep = w.findChildren(ReportDialog)[-1]
    rep.out.setText(str(out))
    rep.sweep.setChecked(False)
    rep.gallery.setValue(0)
    qtbot.mouseClick(rep.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: rep.job is None and rep.written is not None, timeout=60000)
    assert (out / "index.html").is_file() or any(out.glob("*.html")), list(out.iterdir())
    rep.close()
    consistent(w, qtbot, "report")


@pytest.mark.parametrize("kind", KINDS)
def test_a_user_session_on_each_demo(window, qtbot, kind, tmp_path, no_internal_errors):
    if kind not in demo.demo_kinds():
        pytest.skip(f"no {kind} demo")
    w = window
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=3000)
    open_demo(w, qtbot, kind)
    consistent(w, qtbot, "open")
    filter_by_typing(w, qtbot)
    consistent(w, qtbot, "filter")
    step_with_f3(w, qtbot)
    consistent(w, qtbot, "F3")
    type_each_role(w, qtbot)
    move_each_slider(w, qtbot)
    verdict_and_undo(w, qtbot)
    attach_and_compare(w, qtbot)
    gallery_and_batch_verdict(w, qtbot)
    draw_box_and_run(w, qtbot)
    export_report(w, qtbot, tmp_path / "report")


def test_sample_ids_and_headers_read_whole_in_the_list(window, qtbot):
    """CAFE ids ("18/1000000018") and the fixed headers fit their columns (no "1/10000…", "gro…")."""
    from masklens.gui.browser.sample_table import FIXED

    if "cafe" not in demo.demo_kinds():
        pytest.skip("no cafe demo")
    open_demo(window, qtbot, "cafe")
    b = window.browser
    header, fm = b.table.horizontalHeader(), b.table.fontMetrics()
    longest = max((s.id for s in window.state.benchmark.samples), key=fm.horizontalAdvance)
    assert header.sectionSize(FIXED.index("sample")) >= fm.horizontalAdvance(longest) + 6
    for col, name in enumerate(FIXED):
        assert header.sectionSize(col) >= header.fontMetrics().horizontalAdvance(name) + 8, name


def test_panel_titles_and_captions_end_in_an_ellipsis_when_cut(qtbot):
    """A long R2SM caption in a narrow panel reads "… WRONG T…" with the whole text as tooltip."""
    from masklens.gui.canvas.image_canvas import Panel

    p = Panel("amodal: “the entire yellow star, even the occluded part”")
    qtbot.addWidget(p)
    p.resize(200, 200)
    p.show()
    long = "IoU 0.933 vs amodal · 1.000 vs modal · WRONG TYPE (answered with the modal mask)"
    p.caption.setText(long)
    qtbot.waitUntil(lambda: p.caption.toolTip() == long, timeout=2000)  # painted cut: whole text on hover
    assert p.caption.text() == long
    p.caption.setText("IoU 1.000")
    p.caption.repaint()
    assert p.caption.toolTip() == ""  # fits again: no stale tooltip
    p.title.setToolTip("set by the caller")
    p.title.repaint()
    assert p.title.toolTip() == "set by the caller"


def test_panels_take_the_grid_that_shows_them_largest(qtbot):
    """Four panels: one row in a wide, low view; 2 x 2 in a narrow, tall one (re-arranged on resize)."""
    from masklens.gui.canvas.sample_view import SampleViewWidget

    v = SampleViewWidget()
    qtbot.addWidget(v)
    v.resize(1600, 300)
    v.show()
    v._ensure(4, 4)  # the panels a 4-panel benchmark view asks for, at most 4 columns

    def columns() -> int:
        return 1 + max(v.grid.getItemPosition(v.grid.indexOf(p))[1] for p in v.panels)

    assert columns() == 4
    panels = list(v.panels)
    v.resize(560, 820)
    qtbot.waitUntil(lambda: columns() == 2, timeout=2000)
    assert v.panels == panels  # the same panels, moved: nothing to redraw

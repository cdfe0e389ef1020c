"""The window under a dark Fusion palette: every dialog and dock takes its colours from the
palette, and where a widget sets a colour of its own it sets both the text and the background
(a light box with the palette's light text would be unreadable). File › Export report… titles
the report as `masklens report` does, from the benchmark's own description."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QDialog, QWidget
from test_gui_defects import canvas, focus, open_demo

pytest.importorskip("masklens.core.kinds.demo")

def _own_colours(widget: QWidget) -> tuple[bool, bool]:
    """(sets a text colour, sets a background) in its own style sheet."""
    sheet = widget.styleSheet()
    return (bool(re.search(r"(^|[;{\s])color\s*:", sheet)), bool(re.search(r"background(-color)?\s*:", sheet)))


def _offenders(root: QWidget) -> list[str]:
    out = []
    for w in [root, *root.findChildren(QWidget)]:
        text, background = _own_colours(w)
        if background and not text:  # a fixed background under the palette's (light) text
            out.append(f"{type(w).__name__} {w.objectName()!r}: {w.styleSheet()[:60]}")
        elif text and not background and w.palette().color(QPalette.ColorRole.Window).lightnessF() < 0.5:
            colour = re.search(r"color\s*:\s*([#\w]+)", w.styleSheet())
            if colour and QColor(colour.group(1)).lightnessF() < 0.3:  # dark text on the dark window
                out.append(f"{type(w).__name__} {w.objectName()!r}: {w.styleSheet()[:60]}")
    return out


def test_window_and_dialogs_follow_a_dark_palette(window, qtbot, dark, no_internal_errors):
    w = window
    open_demo(w, qtbot, "cafe")
    assert w.palette().color(QPalette.ColorRole.Window).name() == dark.color(QPalette.ColorRole.Window).name()
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(w, Qt.Key.Key_F1)  # the shortcut sheet
    qtbot.keyClick(w, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: len([d for d in w.findChildren(QDialog) if d.isVisible()]) >= 2, timeout=5000)
    dialogs = [d for d in w.findChildren(QDialog) if d.isVisible()]
    for d in dialogs:  # each dialog and every widget in it draws with the dark palette
        assert d.palette().color(QPalette.ColorRole.Window).name() == dark.color(QPalette.ColorRole.Window).name(), d
        assert d.palette().color(QPalette.ColorRole.Base).name() == dark.color(QPalette.ColorRole.Base).name(), d
    offenders = _offenders(w)
    for d in dialogs:
        offenders += _offenders(d)
    assert not offenders, offenders
    for d in dialogs:
        d.close()


def test_export_report_is_titled_from_the_benchmark_as_the_command_line_titles_it(window, qtbot, no_internal_errors):
    from masklens.gui.dialogs.report_dialog import ReportDialog

    w = window
    open_demo(w, qtbot, "cafe")
    focus(w, qtbot, canvas(w))
    qtbot.keyClick(w, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    rep = next(d for d in w.findChildren(ReportDialog))
    assert rep.title.text() == f"CAFE report — {w.state.benchmark.title}"
    assert w.state.benchmark.title == "masklens demo CAFE set (procedurally generated shapes)"
    rep.close()
    assert QApplication.instance() is not None


def _lightness(image, x: int, y: int) -> float:
    return QColor(image.pixel(x, y)).lightnessF()


def test_a_metric_bars_threshold_tick_shows_on_a_dark_card(qtbot, dark):
    """The t / τ tick of a card's bar was drawn black: on a dark card it vanished wherever the
    bar is not filled."""
    from masklens.gui.cards.widgets import Bar, Tone

    bar = Bar(0.2, Tone.NEUTRAL, tick=0.8)
    qtbot.addWidget(bar)
    bar.resize(200, 12)
    bar.show()
    image = bar.grab().toImage()
    x = int(0.8 * (bar.width() - 1))
    assert max(_lightness(image, x + dx, bar.height() // 2) for dx in (-1, 0, 1)) > 0.6


def test_a_selected_gallery_tile_reads_on_a_dark_palette(window, qtbot, dark, no_internal_errors):
    """A selected tile was filled with a lightened highlight under the palette's text colour:
    light text on light blue with a dark palette. It takes the palette's selection colours."""
    from test_gallery import show_gallery

    w = window
    open_demo(w, qtbot, "cafe")
    grid = show_gallery(w, qtbot)
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, pos=grid.tile_rect(0).center())
    qtbot.waitUntil(lambda: 0 in grid.selected_rows(), timeout=3000)
    grid.viewport().repaint()
    image = grid.viewport().grab().toImage()
    from masklens.gui.gallery.grid import THUMB_H

    rect = grid.tile_rect(0)
    y0 = rect.top() + 6 + THUMB_H + 3  # the caption line, under the thumbnail (grid._paint_tile)
    values = [_lightness(image, x, y) for x in range(rect.left() + 8, rect.right() - 8)
              for y in range(y0, rect.bottom() - 4)]
    from collections import Counter

    background = Counter(round(v, 2) for v in values).most_common(1)[0][0]  # the fill around the text
    assert max(abs(v - background) for v in values) > 0.4  # the caption stands out of its fill

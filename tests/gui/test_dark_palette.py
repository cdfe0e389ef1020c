"""Under a dark palette every part stays readable: the message bar's text keeps its own dark
colour on its light background (it took the palette's light text colour), and the drawing tools'
icons are drawn in the palette's text colour."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication


def pixels_near(image, colour: QColor, within: int = 40) -> int:
    """Pixels of ``image`` (every second column) within ``within`` of ``colour`` (sum of the
    channel differences, alpha left out), counted on its bytes."""
    argb = image.convertToFormat(QImage.Format.Format_ARGB32)
    h, w = argb.height(), argb.width()
    rows = np.frombuffer(argb.constBits(), np.uint8, count=argb.sizeInBytes()).reshape(h, argb.bytesPerLine())
    bgra = rows[:, : w * 4].reshape(h, w, 4)[:, ::2].astype(np.int32)
    distance = (abs(bgra[..., 2] - colour.red()) + abs(bgra[..., 1] - colour.green())
                + abs(bgra[..., 0] - colour.blue()))
    return int((distance < within).sum())


def test_the_message_bar_and_tool_icons_read_under_a_dark_palette(dark, qtbot, no_internal_errors):
    from masklens.gui.settings import Settings
    from masklens.gui.window.main_window import MainWindow

    w = MainWindow(Settings(), persist=False)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitUntil(lambda: w._docks_sized, timeout=5000)
    w.message_bar.show_message("a warning that must be read", "warning")
    qtbot.waitUntil(w.message_bar.isVisible, timeout=3000)
    image = w.message_bar.label.grab().toImage()
    assert pixels_near(image, QColor("#5a4a00"), 90) > 20  # dark text on the light bar
    assert pixels_near(image, QColor("#e6e6e6"), 30) == 0  # not the palette's light text
    icon = w.visual_tool.tool_actions["pan"].icon().pixmap(32, 32).toImage()
    assert pixels_near(icon, QColor("#e6e6e6"), 60) > 5  # light strokes: seen on the dark toolbar
    assert QApplication.palette().color(QPalette.ColorRole.Window) == QColor("#2b2b2b")

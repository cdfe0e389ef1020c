"""Under a dark palette every part stays readable: the message bar's text keeps its own dark
colour on its light background (it took the palette's light text colour), and the drawing tools'
icons are drawn in the palette's text colour."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

DARK = {QPalette.ColorRole.Window: "#2b2b2b", QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1e1e1e", QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#353535", QPalette.ColorRole.ButtonText: "#e6e6e6"}


@pytest.fixture
def dark(qapp):
    before = QPalette(qapp.palette())
    palette = QPalette(before)
    for role, colour in DARK.items():
        palette.setColor(role, QColor(colour))
    qapp.setPalette(palette)
    yield
    qapp.setPalette(before)


def pixels_near(image, colour: QColor, within: int = 40) -> int:
    n = 0
    for y in range(0, image.height(), 1):
        for x in range(0, image.width(), 2):
            c = image.pixelColor(x, y)
            if abs(c.red() - colour.red()) + abs(c.green() - colour.green()) + abs(c.blue() - colour.blue()) < within:
                n += 1
    return n


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

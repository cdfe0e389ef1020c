"""The sample list's cell painter keeps elided texts and text colours between paints: a cell
elided to one width never shows for another width or for the whole text, and the colours follow
the cell's state and a changed palette (real QPainter on a QImage, the window's own painter)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem

from masklens.gui.browser.cell_painter import CellPainter

SEL, ACT = QStyle.StateFlag.State_Selected.value, QStyle.StateFlag.State_Active.value


def _painter() -> tuple[QImage, QPainter]:
    img = QImage(400, 40, QImage.Format.Format_RGB32)
    return img, QPainter(img)


def test_elided_texts_are_kept_per_width_and_never_stand_for_the_whole_text(toy_window):
    delegate = toy_window.browser.table.itemDelegate()
    assert isinstance(delegate, CellPainter)
    img, p = _painter()
    try:
        text = "a_rather_long_sample_identifier_0123456789"
        whole, w_whole, _ = delegate._laid_out(text, False, p)
        assert whole.text() == text
        narrow, w_narrow, _ = delegate._laid_out(text, False, p, 60)
        wider, w_wider, _ = delegate._laid_out(text, False, p, 140)
        assert narrow.text() != text and narrow.text().endswith("…") and w_narrow <= 60
        assert wider.text() != narrow.text() and w_narrow < w_wider <= 140
        assert delegate._laid_out(text, False, p)[0].text() == text  # the whole text is still whole
        assert delegate._laid_out(text, False, p, 60)[0].text() == narrow.text()
        italic, _, _ = delegate._laid_out(text, True, p, 60)  # the grey row's italic: its own entry
        assert italic is not narrow
    finally:
        p.end()


def test_text_colours_follow_the_state_and_the_palette(toy_window):
    delegate = toy_window.browser.table.itemDelegate()
    option = QStyleOptionViewItem()
    pal = QPalette(option.palette)
    pal.setColor(QPalette.ColorGroup.Active, QPalette.ColorRole.Text, QColor("#102030"))
    pal.setColor(QPalette.ColorGroup.Active, QPalette.ColorRole.HighlightedText, QColor("#f0e0d0"))
    option.palette = pal
    assert delegate._pen(option, ACT, False) == QColor("#102030")
    assert delegate._pen(option, ACT | SEL, False) == QColor("#f0e0d0")
    assert delegate._pen(option, ACT | SEL, True) == QColor("#f0e0d0")  # selected wins over grey
    assert delegate._pen(option, ACT, True) == QColor("#7a7a7a")  # outside the filter: grey
    pal2 = QPalette(pal)
    pal2.setColor(QPalette.ColorGroup.Active, QPalette.ColorRole.Text, QColor("#405060"))
    option.palette = pal2  # another palette (a theme change): read anew
    assert delegate._pen(option, ACT, False) == QColor("#405060")

"""A combo box as wide as its selected item's text (within a cap), the full text in its tooltip."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox

#: the widest a fitted combo grows (pixels); a longer text is cut and read in the tooltip
FIT_MAX = 420


def text_room(combo: QComboBox) -> int:
    """The width (pixels) the combo's style gives its text (the edit field's rectangle)."""
    opt = QStyleOptionComboBox()
    combo.initStyleOption(opt)
    return combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                        QStyle.SubControl.SC_ComboBoxEditField, combo).width()


def width_for(combo: QComboBox, text: str) -> int:
    """The combo's width that shows ``text`` whole (frame, arrow and margins of its style added)."""
    opt = QStyleOptionComboBox()
    combo.initStyleOption(opt)
    fm = combo.fontMetrics()
    contents = QSize(fm.horizontalAdvance(text) + 2, fm.height())
    return combo.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, opt, contents, combo).width()


def fit_to_current(combo: QComboBox, note: str = "") -> None:
    """Make ``combo`` at least as wide as its current text needs (at most :data:`FIT_MAX`), and
    put that text, then ``note``, in its tooltip."""
    text = combo.currentText()
    combo.setMinimumWidth(min(width_for(combo, text), FIT_MAX) if text else 0)
    combo.setToolTip("\n".join(t for t in (text, note) if t))


def keep_fitted(combo: QComboBox, note: str = "") -> None:
    """:func:`fit_to_current` now and whenever the selection changes."""
    combo.currentIndexChanged.connect(lambda _i: fit_to_current(combo, note))
    fit_to_current(combo, note)

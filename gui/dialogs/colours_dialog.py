"""View › Colours…: pick the overlay colours (ground truth, predictions, TP/FP/FN); saved in settings."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QColorDialog,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QPushButton,
    QWidget,
)

from masklens.gui.settings import DEFAULT_COLOURS

LABELS = {"gt": "ground truth", "gt2": "other ground truth (outline)", "pred": "prediction",
          "pred2": "second prediction", "tp": "TP (error view)", "fp": "FP (error view)",
          "fn": "FN (error view)"}


class ColoursDialog(QDialog):
    def __init__(self, colours: dict[str, str], apply: Callable[[str, str], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Overlay colours")
        self.colours, self.apply = colours, apply
        form = QFormLayout(self)
        self.buttons: dict[str, QPushButton] = {}
        for key, label in LABELS.items():
            b = QPushButton()
            b.clicked.connect(lambda _=False, k=key: self._pick(k))
            self.buttons[key] = b
            form.addRow(label, b)
            self._show(key)
        reset = QPushButton("Okabe–Ito defaults")
        reset.clicked.connect(self.reset)
        form.addRow(reset)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.accept)
        form.addRow(box)

    def _show(self, key: str) -> None:
        c = self.colours.get(key, DEFAULT_COLOURS[key])
        self.buttons[key].setText(c)
        self.buttons[key].setStyleSheet(f"background:{c}; color:{'black' if QColor(c).lightnessF() > .5 else 'white'}")

    def _pick(self, key: str) -> None:
        c = QColorDialog.getColor(QColor(self.colours.get(key, DEFAULT_COLOURS[key])), self)
        if c.isValid():
            self.apply(key, c.name())
            self._show(key)

    def reset(self) -> None:
        for key, value in DEFAULT_COLOURS.items():
            self.apply(key, value)
            if key in self.buttons:
                self._show(key)

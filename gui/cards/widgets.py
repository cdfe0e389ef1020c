"""Building blocks of the readout cards: verdict badges, metric rows with a small bar, flag chips,
tables and a hover-aware frame.

Colour carries pass/fail with the Okabe–Ito palette (colour-blind safe), and every verdict also
carries a shape and a word (✔ pass, ✖ fail, ◐ partial, ● neutral), so nothing depends on colour alone.
"""

from __future__ import annotations

import math
from enum import Enum

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QWidget,
)


class Tone(Enum):
    """Pass/fail of a verdict or a value: colour (Okabe–Ito) and a glyph that says the same."""

    PASS = ("#009E73", "✔")  # bluish green
    FAIL = ("#D55E00", "✖")  # vermillion
    PARTIAL = ("#E69F00", "◐")  # orange
    NEUTRAL = ("#0072B2", "●")  # blue: a value without a pass/fail reading
    NONE = ("#8C8C8C", "–")  # grey: not available

    @property
    def colour(self) -> str:
        return self.value[0]

    @property
    def glyph(self) -> str:
        return self.value[1]


def fmt(value: object, digits: int = 3) -> str:
    """A number as the cards show it ("–" for None/NaN, integers plain)."""
    if value is None or isinstance(value, float) and math.isnan(value):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_pair(a: float, b: float, digits: int = 2) -> tuple[str, str]:
    """Two numbers compared in a reason ("s 0.75 ≥ t 0.50"): enough decimals that unequal values
    never print equal (0.499 vs 0.50 reads "0.499 < 0.500", not "0.50 < 0.50")."""
    for d in range(digits, 7):
        sa, sb = f"{a:.{d}f}", f"{b:.{d}f}"
        if (sa == sb) == (a == b):
            return sa, sb
    return repr(a), repr(b)


class Badge(QLabel):
    """A verdict in the benchmark's words on a coloured pill, with its glyph: "✔ TA-TP"."""

    def __init__(self, text: str, tone: Tone, tooltip: str = "", parent: QWidget | None = None) -> None:
        super().__init__(f"{tone.glyph} {text}", parent)
        self.verdict, self.tone = text, tone
        ink = "white" if tone in (Tone.FAIL, Tone.NEUTRAL, Tone.PASS, Tone.NONE) else "black"
        self.setStyleSheet(f"background-color: {tone.colour}; color: {ink}; font-weight: bold;"
                           " border-radius: 4px; padding: 1px 6px;")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        if tooltip:
            self.setToolTip(tooltip)


class Bar(QWidget):
    """A small horizontal bar for a value in [lo, hi] (a signed range draws from 0), with an
    optional threshold tick; values beyond the range are clipped and marked with an arrow."""

    def __init__(self, value: float | None, tone: Tone, lo: float = 0.0, hi: float = 1.0,
                 tick: float | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.value, self.tone, self.lo, self.hi, self.tick = value, tone, lo, hi, tick
        self.setFixedHeight(10)
        self.setMinimumWidth(40)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(80, 10)

    def _x(self, v: float, width: float) -> float:
        return (min(max(v, self.lo), self.hi) - self.lo) / (self.hi - self.lo) * width

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        w, h = float(self.width() - 1), float(self.height() - 1)
        p.setPen(QPen(QColor("#8C8C8C")))
        p.setBrush(QColor(0, 0, 0, 0))
        p.drawRect(QRectF(0, 0, w, h))
        if self.value is not None and not math.isnan(self.value):
            zero = self._x(0.0, w) if self.lo < 0 < self.hi else 0.0
            x = self._x(self.value, w)
            p.fillRect(QRectF(min(zero, x), 1, abs(x - zero), h - 1), QColor(self.tone.colour))
            if self.value > self.hi:  # clipped: mark it
                p.setPen(QPen(QColor("black")))
                p.drawText(QRectF(w - 10, -2, 10, h + 2), Qt.AlignmentFlag.AlignRight, "▸")
        if self.tick is not None:
            p.setPen(QPen(QColor("black"), 2))
            x = self._x(self.tick, w)
            p.drawLine(int(x), 0, int(x), int(h))
        p.end()


class HoverFrame(QFrame):
    """A frame that says when the mouse enters or leaves it (cards highlight an instance)."""

    entered = Signal()
    left = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setAttribute(Qt.WidgetAttribute.WA_Hover, True)
        self.hovered = False

    def _set(self, on: bool) -> None:
        if on != self.hovered:
            self.hovered = on
            self.setStyleSheet("HoverFrame { background-color: rgba(240, 228, 66, 70); }" if on else "")
            (self.entered if on else self.left).emit()

    def enterEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._set(True)
        super().enterEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._set(True)
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._set(False)
        super().leaveEvent(event)


class MetricGrid(QGridLayout):
    """Rows of ``symbol | value | bar`` with the metric's definition as every cell's tooltip."""

    def __init__(self) -> None:
        super().__init__()
        self.setContentsMargins(0, 0, 0, 0)
        self.setHorizontalSpacing(6)
        self.setVerticalSpacing(2)
        self.setColumnStretch(2, 1)

    def add(self, symbol: str, text: str, tooltip: str, bar: Bar | None = None,
            tone: Tone = Tone.NEUTRAL) -> QLabel:
        row = self.rowCount()
        name = QLabel(symbol)
        value = QLabel(text)
        value.setStyleSheet(f"font-family: monospace; color: {tone.colour if tone is not Tone.NEUTRAL else 'palette(text)'};")
        value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        cells: list[QWidget] = [name, value] + ([bar] if bar is not None else [])
        for col, w in enumerate(cells):
            w.setToolTip(tooltip)
            self.addWidget(w, row, col)
        return value


def chip(text: str, tone: Tone, tooltip: str) -> QLabel:
    """A flag (e.g. SoftSwap) with its glyph and an outline in the tone's colour."""
    label = QLabel(f"{tone.glyph} {text}")
    label.setStyleSheet(f"border: 1px solid {tone.colour}; color: {tone.colour}; border-radius: 3px;"
                        " padding: 0px 4px; font-weight: bold;")
    label.setToolTip(tooltip)
    label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
    return label


def row_of(*widgets: QWidget, stretch: bool = True) -> QWidget:
    """Widgets side by side (left-aligned)."""
    box = QWidget()
    lay = QHBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(4)
    for w in widgets:
        lay.addWidget(w)
    if stretch:
        lay.addStretch(1)
    return box


def wrapped(text: str, tooltip: str = "", style: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if style:
        label.setStyleSheet(style)
    if tooltip:
        label.setToolTip(tooltip)
    return label

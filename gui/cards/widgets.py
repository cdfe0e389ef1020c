"""Building blocks of the readout cards: verdict badges, metric rows with a small bar, flag chips,
tables and a hover-aware frame.

Colour carries pass/fail with the Okabe–Ito palette (colour-blind safe), and every verdict also
carries a shape and a word (✔ pass, ✖ fail, ◐ partial, ● neutral), so nothing depends on colour alone.
"""

from __future__ import annotations

import math
from enum import Enum

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QWidget,
)

# No per-widget style sheets: a card is rebuilt on every sample switch, and style-sheet polishing
# of its dozens of widgets cost more than building them. Fonts and palettes are set directly.
# On a slider step the card keeps its widgets: each shows its new values (``show_*`` below).


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


class Pill(QLabel):
    """A verdict or flag drawn as a rounded pill: filled in the tone's colour (a badge) or outlined
    (a chip), always with the tone's glyph before the text."""

    def __init__(self, text: str, tone: Tone, tooltip: str = "", *, filled: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(f"{tone.glyph} {text}", parent)
        self.verdict, self.tone, self.filled = text, tone, filled
        font = QFont(self.font())
        font.setBold(True)
        self.setFont(font)
        self.setContentsMargins(6, 1, 6, 1)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        if tooltip:
            self.setToolTip(tooltip)

    def show_verdict(self, text: str, tone: Tone, tooltip: str = "") -> None:
        """Show another verdict on the same pill (a card updated in place)."""
        shown = f"{tone.glyph} {text}"
        if (text, tone) != (self.verdict, self.tone) or self.text() != shown:
            self.verdict, self.tone = text, tone
            self.setText(shown)  # repaints, and re-sizes when the text's width changes
        if self.toolTip() != tooltip:
            self.setToolTip(tooltip)

    def ink(self) -> QColor:
        if not self.filled:
            return QColor(self.tone.colour)
        return QColor("black" if self.tone is Tone.PARTIAL else "white")

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        colour = QColor(self.tone.colour)
        p.setPen(QPen(colour, 1))
        p.setBrush(colour if self.filled else Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(r, 4, 4)
        p.setPen(self.ink())
        p.drawText(self.contentsRect(), Qt.AlignmentFlag.AlignCenter, self.text())
        p.end()


class Badge(Pill):
    """A verdict in the benchmark's words on a filled pill, with its glyph: "✔ TA-TP"."""


class Bar(QWidget):
    """A small horizontal bar for a value in [lo, hi] (a signed range draws from 0), with an
    optional threshold tick; values beyond the range are clipped and marked with an arrow."""

    def __init__(self, value: float | None, tone: Tone, lo: float = 0.0, hi: float = 1.0,
                 tick: float | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.value, self.tone, self.lo, self.hi, self.tick = value, tone, lo, hi, tick
        self.setFixedHeight(10)
        self.setMinimumWidth(24)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(80, 10)

    def show_value(self, value: float | None, tone: Tone, lo: float = 0.0, hi: float = 1.0,
                   tick: float | None = None) -> None:
        """Draw other values on the same bar (repainted only when something changed)."""
        new = (value, tone, lo, hi, tick)
        if new != (self.value, self.tone, self.lo, self.hi, self.tick):
            self.value, self.tone, self.lo, self.hi, self.tick = new
            self.update()

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
                p.setPen(QPen(self.palette().color(QPalette.ColorRole.WindowText)))
                p.drawText(QRectF(w - 10, -2, 10, h + 2), Qt.AlignmentFlag.AlignRight, "▸")
        if self.tick is not None:  # the palette's text colour: seen on a light or a dark window
            p.setPen(QPen(self.palette().color(QPalette.ColorRole.WindowText), 2))
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
        self.target: tuple[str, int] | None = None  # (prompt id, instance) it highlights, if any
        self.prompt: str | None = None  # a frame of several instances: the prompt they are of

    def _set(self, on: bool) -> None:
        if on != self.hovered:
            self.hovered = on
            if on:  # a light yellow (Okabe–Ito) wash says which verdict the canvas shows
                pal = self.palette()
                pal.setColor(QPalette.ColorRole.Window, QColor(240, 228, 66, 90))
                self.setPalette(pal)
            else:
                self.setPalette(QPalette())
            self.setAutoFillBackground(on)
            (self.entered if on else self.left).emit()

    def enterEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._set(True)
        super().enterEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._set(True)
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:  # noqa: N802 - Qt override
        if not self.hasFocus():
            self._set(False)
        super().leaveEvent(event)

    def focusInEvent(self, event) -> None:  # noqa: N802 - Qt override: Tab reaches it like a hover
        self._set(True)
        super().focusInEvent(event)

    def focusOutEvent(self, event) -> None:  # noqa: N802 - Qt override
        if not self.underMouse():
            self._set(False)
        super().focusOutEvent(event)


class MetricGrid(QGridLayout):
    """Rows of ``symbol | value | bar`` with the metric's definition as every cell's tooltip."""

    def __init__(self) -> None:
        super().__init__()
        self.setContentsMargins(0, 0, 0, 0)
        self.setHorizontalSpacing(4)
        self.setVerticalSpacing(2)
        self.setColumnStretch(2, 1)

    def add(self, symbol: str, text: str, tooltip: str, bar: Bar | None = None,
            tone: Tone = Tone.NEUTRAL) -> MetricRow:
        """A row ``symbol | value | bar`` and, under its value and bar, a grey line for what the
        value text carries after two spaces (e.g. "(its s 0.30 < t, not drawn)"): in the value
        column it would widen that column until the bars are squeezed to nothing."""
        row = self.rowCount()
        name = QLabel(symbol)
        value = QLabel()
        value.setFont(mono())
        plain = value.palette()
        if tone is not Tone.NEUTRAL:
            tint(value, tone.colour)
        value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        note = QLabel()
        note.setFont(mono())
        note.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        tint(note, "#707070")
        cells: list[QWidget] = [name, value] + ([bar] if bar is not None else [])
        for col, w in enumerate(cells):
            w.setToolTip(tooltip)
            self.addWidget(w, row, col)
        note.setToolTip(tooltip)
        self.addWidget(note, row + 1, 0, 1, 3)
        out = MetricRow(name, value, bar, tone, plain, note)
        out.show_text(text)
        return out


class MetricRow:
    """The widgets of one metric row, updated in place by :meth:`show`."""

    def __init__(self, name: QLabel, value: QLabel, bar: Bar | None, tone: Tone, plain: QPalette,
                 note: QLabel) -> None:
        self.name, self.value, self.bar, self.tone, self._plain = name, value, bar, tone, plain
        self.note, self.text = note, ""

    def show_text(self, text: str) -> None:
        """The value in its column; what follows two spaces on the grey line below (hidden if none)."""
        if text == self.text:
            return
        self.text = text
        number, _, rest = text.partition("  ")
        self.value.setText(number)
        self.note.setText(rest.strip())
        self.note.setVisible(bool(rest.strip()))

    def show(self, symbol: str, text: str, tooltip: str, tone: Tone) -> None:
        if self.name.text() != symbol:
            self.name.setText(symbol)
        self.show_text(text)
        if tone is not self.tone:
            self.tone = tone
            if tone is Tone.NEUTRAL:
                self.value.setPalette(self._plain)
            else:
                tint(self.value, tone.colour)
        if self.value.toolTip() != tooltip:
            for w in (self.name, self.value, self.bar, self.note):
                if w is not None:
                    w.setToolTip(tooltip)


def chip(text: str, tone: Tone, tooltip: str) -> Pill:
    """A flag (e.g. SoftSwap) with its glyph on a pill outlined in the tone's colour."""
    return Pill(text, tone, tooltip, filled=False)


def mono() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def tint(label: QLabel, colour: str) -> None:
    pal = label.palette()
    pal.setColor(QPalette.ColorRole.WindowText, QColor(colour))
    label.setPalette(pal)


def set_label(label: QLabel, text: str, tooltip: str) -> None:
    """A label's new text and tooltip (untouched when equal: no re-layout)."""
    if label.text() != text:
        label.setText(text)
    if label.toolTip() != tooltip:
        label.setToolTip(tooltip)


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


def wrapped(text: str, tooltip: str = "", *, bold: bool = False, monospace: bool = False,
            muted: bool = False, colour: str | None = None) -> QLabel:
    """A word-wrapped, selectable label."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if monospace or bold:
        font = mono() if monospace else QFont(label.font())
        font.setBold(bold)
        label.setFont(font)
    if muted or colour:
        pal = label.palette()
        ink = QColor(colour) if colour else pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
        pal.setColor(QPalette.ColorRole.WindowText, ink)
        label.setPalette(pal)
    if tooltip:
        label.setToolTip(tooltip)
    return label

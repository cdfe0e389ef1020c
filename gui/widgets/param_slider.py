"""A scoring parameter's slider whose value is always the number it shows: a step of 1, 2 or 5
× 10ⁿ (α over 0.5–10 steps by 0.05, so α = 3 is reachable by keyboard), every value — a mouse
drag's included — snapped to that grid and to the label's decimals, so a drag to "0.35" is exactly
0.35, as ``--score-threshold 0.35`` is on the command line. The value label is a framed field
(it looks editable; type a value and press Enter)."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from superqt import QLabeledDoubleSlider

from masklens.gui.widgets import slider_keys


def nice_step(span: float, steps: int = 100) -> float:
    """The largest 1, 2 or 5 × 10ⁿ not above ``span / steps`` (0.01 for 0–1, 0.05 for 0.5–10)."""
    if span <= 0:
        return 1.0
    raw = span / steps
    base = 10.0 ** math.floor(math.log10(raw))
    return max(m * base for m in (1, 2, 5) if m * base <= raw * (1 + 1e-9))


def decimals_of(step: float) -> int:
    """Decimals that show every multiple of ``step`` exactly (2 for 0.05, 0 for 5)."""
    return max(0, -math.floor(math.log10(step) + 1e-9))


class ParamSlider(QLabeledDoubleSlider):
    """A horizontal labelled float slider on the grid ``minimum + k·step``."""

    def __init__(self, minimum: float, maximum: float, value: float) -> None:
        super().__init__(Qt.Orientation.Horizontal)
        self.grid_min, self.step = float(minimum), nice_step(maximum - minimum)
        self.places = decimals_of(self.step)
        self.setRange(minimum, maximum)
        self.setDecimals(self.places)
        self.setSingleStep(self.step)  # type: ignore[arg-type]  # superqt types the step int; a double slider's is a float
        self._slider.setPageStep(self.step * 10)
        self.setValue(self.snap(value))
        self.valueChanged.connect(self._snap_now)
        slider_keys.install(self._slider)  # arrows, Page Up/Down, Home/End move it
        label = self._label
        label.setStyleSheet("")  # superqt draws it frameless and transparent: it did not look editable
        label.setFrame(True)
        label.setToolTip("type a value and press Enter")
        label.setMinimumWidth(label.fontMetrics().horizontalAdvance("0" * (len(f"{maximum:.{self.places}f}") + 2)) + 8)

    def snap(self, value: float) -> float:
        """``value`` on the slider's grid, rounded to the digits it shows, within the range."""
        k = round((float(value) - self.grid_min) / self.step)
        v = round(self.grid_min + k * self.step, self.places)
        return min(max(v, round(self.minimum(), self.places)), round(self.maximum(), self.places))

    def _snap_now(self, value: float) -> None:
        snapped = self.snap(value)
        if snapped != value:
            self.setValue(snapped)  # emits valueChanged again, with the value shown

    def shown_value(self) -> float:
        """The value, exactly as the label shows it."""
        return self.snap(self.value())

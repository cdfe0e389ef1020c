"""The view toolbar: layer toggles, opacities, prediction set, fit / 1:1."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QLabel, QSlider, QToolBar, QWidget

from masklens.gui.canvas.sample_view import LayerToggles


class ViewToolbar(QToolBar):
    """Emits ``togglesChanged`` when a layer toggle or opacity moves; ``activeSetChanged(name)``."""

    togglesChanged = Signal()
    activeSetChanged = Signal(str)
    fitRequested = Signal()
    oneToOneRequested = Signal()

    def __init__(self, toggles: LayerToggles, parent: QWidget | None = None) -> None:
        super().__init__("View", parent)
        self.setObjectName("view-toolbar")
        self.toggles = toggles
        self.actions_by_name: dict[str, QAction] = {}
        for name, label, key, tip in (
            ("gt", "Ground truth", "G", "show the ground truth"),
            ("pred", "Prediction", "R", "show predicted instances with s ≥ t"),
            ("error", "TP/FP/FN", "E", "pixel error view: TP green, FP vermillion, FN sky blue"),
            ("outlines", "Outlines", "O", "draw mask outlines"),
            ("scores", "Scores", "S", "label instances with their scores"),
        ):
            act = QAction(label, self, checkable=True)
            act.setChecked(getattr(toggles, name))
            act.setShortcut(key)
            act.setToolTip(f"{tip} ({key})")
            act.toggled.connect(lambda on, n=name: self._set(n, on))
            self.addAction(act)
            self.actions_by_name[name] = act
        self.addSeparator()
        self.gt_opacity = self._opacity("GT α", toggles.gt_opacity, "gt_opacity")
        self.pred_opacity = self._opacity("Pred α", toggles.pred_opacity, "pred_opacity")
        self.addSeparator()
        self.addWidget(QLabel(" Predictions "))
        self.sets = QComboBox()
        self.sets.setMinimumWidth(160)
        self.sets.setToolTip("prediction set drawn on the canvas and scored in the browser")
        self.sets.currentTextChanged.connect(self._set_picked)
        self.addWidget(self.sets)
        self.addSeparator()
        self.fit_action = QAction("Fit", self, shortcut=QKeySequence("F"), toolTip="fit the image to the panel (F)")
        self.fit_action.triggered.connect(self.fitRequested.emit)  # a signal is not a callable slot
        self.one_action = QAction("1:1", self, shortcut=QKeySequence("1"),
                                  toolTip="one image pixel per screen pixel (1)")
        self.one_action.triggered.connect(self.oneToOneRequested.emit)
        self.addAction(self.fit_action)
        self.addAction(self.one_action)

    def _set_picked(self, name: str) -> None:
        if name:  # empty while the combo is cleared
            self.activeSetChanged.emit(name)

    def single_key_actions(self) -> list[QAction]:
        """The actions bound to a bare letter or digit (G R E O S F 1)."""
        return [*self.actions_by_name.values(), self.fit_action, self.one_action]

    def scope_keys(self, *widgets: QWidget) -> None:
        """Make the one-key shortcuts act only while the focus is inside one of ``widgets`` (the
        canvas area, the sample list) — never while a prompt, note or filter is being typed."""
        for act in self.single_key_actions():
            act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            for w in widgets:
                w.addAction(act)

    def _opacity(self, label: str, value: float, attr: str) -> QSlider:
        self.addWidget(QLabel(f" {label} "))
        s = QSlider(Qt.Orientation.Horizontal)
        s.setRange(0, 100)
        s.setValue(int(round(value * 100)))
        s.setFixedWidth(80)
        s.valueChanged.connect(lambda v: self._set(attr, v / 100.0))
        self.addWidget(s)
        return s

    def _set(self, name: str, value: object) -> None:
        setattr(self.toggles, name, value)
        self.togglesChanged.emit()

    def set_sets(self, names: list[str], active: str | None) -> None:
        self.sets.blockSignals(True)
        self.sets.clear()
        self.sets.addItems(names)
        if active:
            self.sets.setCurrentText(active)
        self.sets.blockSignals(False)

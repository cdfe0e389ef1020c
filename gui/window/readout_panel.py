"""The readout panel: one slider per scoring parameter (t, τ, α …), then the benchmark's card for
the current sample (:mod:`masklens.gui.cards`: verdict and reason first), each typed prompt's card
beside the original prompt's, and the full record as a tree under a collapsed "Details"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from masklens.core.scoring.contract import ParamSpec
from masklens.gui.browser.sample_table import _fmt, metric_tooltip
from masklens.gui.cards.deck import CardDeck
from masklens.gui.widgets.param_slider import ParamSlider


class ParamSliders(QGroupBox):
    """One labelled slider per ParamSpec; emits ``paramsChanged`` (debounced) with all values."""

    paramsChanged = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Scoring parameters", parent)
        self.form = QFormLayout(self)
        self.sliders: dict[str, ParamSlider] = {}
        self._timer = QTimer(self, singleShot=True, interval=40)
        self._timer.timeout.connect(lambda: self.paramsChanged.emit(self.values()))

    def set_specs(self, specs: tuple[ParamSpec, ...], values: Mapping[str, float]) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.sliders = {}
        for spec in specs:
            s = ParamSlider(spec.minimum, spec.maximum, float(values.get(spec.name, spec.default)))
            s.setToolTip(f"{spec.flag}: {spec.help} (default {spec.default:g})")
            s.valueChanged.connect(lambda _v: self._timer.start())
            self.form.addRow(spec.symbol or spec.name, s)
            self.sliders[spec.name] = s
        self.setVisible(bool(specs))

    def values(self) -> dict[str, float]:
        return {k: s.shown_value() for k, s in self.sliders.items()}

    def set_value(self, name: str, value: float, *, immediate: bool = True) -> None:
        """Move a slider (as a user would); ``immediate`` skips the debounce."""
        self.sliders[name].setValue(self.sliders[name].snap(value))
        if immediate:
            self._timer.stop()
            self.paramsChanged.emit(self.values())


def _rows(sections: list[tuple[str, Any]], help_: dict[str, str],
          tips: dict[tuple[str, Any], str]) -> list[tuple[int, str, str, str]]:
    """The tree as rows (parent row or −1 for a section, key, value text, tooltip), depth first;
    ``tips`` memoises the tooltips of ``help_`` by path."""
    out: list[tuple[int, str, str, str]] = []

    def fill(parent: int, value: Any, path: str) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                tip = tips.get((path, k))
                if tip is None:
                    tip = tips[(path, k)] = (metric_tooltip(f"{path}{k}", help_)
                                             or metric_tooltip(str(k), help_) or "")
                out.append((parent, str(k), "" if isinstance(v, (Mapping, list)) else _fmt(v), tip))
                if isinstance(v, (Mapping, list)):
                    fill(len(out) - 1, v, f"{path}{k}.")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                out.append((parent, f"[{i}]", "" if isinstance(v, (Mapping, list)) else _fmt(v), ""))
                if isinstance(v, (Mapping, list)):
                    fill(len(out) - 1, v, path)

    for title, record in sections:
        out.append((-1, title, "" if isinstance(record, Mapping) else _fmt(record), ""))
        if isinstance(record, (Mapping, list)):
            fill(len(out) - 1, record, "")
    return out


class ReadoutPanel(QWidget):
    """Sliders on top, the readout cards below, the metric tree under a collapsed "Details"."""

    def __init__(self, parent: QWidget | None = None, *,
                 original_for: Callable[[int], Any] | None = None) -> None:
        """``original_for(index)``: the original record of a sample whose card shows a corrected
        one (None: there is none)."""
        super().__init__(parent)
        self.sliders = ParamSliders(self)
        self.deck = CardDeck(original_for=original_for)
        self._tree = QTreeWidget()
        self._tree.setHeaderLabels(["metric", "value"])
        self._tree.setColumnWidth(0, 200)
        self._tree.setAlternatingRowColors(True)
        self.details = QToolButton()
        self.details.setText("Details: the full record")
        self.details.setToolTip("Every field of the scorer's records (benchmark and typed prompts) as a tree")
        self.details.setCheckable(True)
        self.details.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details.setArrowType(Qt.ArrowType.RightArrow)
        self.details.setAutoRaise(True)
        self.details.toggled.connect(self._show_details)
        self._tree.setVisible(False)
        self._layout = lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.sliders)
        lay.addWidget(self.deck, 3)
        lay.addWidget(self.details)
        lay.addWidget(self._tree, 2)
        self.help: dict[str, str] = {}
        #: the sections shown last, not yet in the tree (filled when the tree is shown or read)
        self._pending: list[tuple[str, Any]] | None = None
        self._items: list[QTreeWidgetItem] = []  # the tree's items in row order
        self._shape: list[tuple[int, str, str]] | None = None
        self._tips: tuple[dict[str, str], dict[tuple[str, Any], str]] = (self.help, {})

    def add_summary(self, title: str, widget: QWidget) -> list[QWidget]:
        """A titled section above "Details" (e.g. the corrected ground truth's benchmark summary),
        hidden until shown: its title label and ``widget``."""
        label = QLabel(title)
        label.setStyleSheet("font-weight: 600")
        label.setWordWrap(True)  # a long title never widens the dock
        lay = self._layout
        at = lay.indexOf(self.details)
        lay.insertWidget(at, label)
        lay.insertWidget(at + 1, widget, 1)
        for w in (label, widget):
            w.setVisible(False)
        return [label, widget]

    def bind(self, state: Any, views: Callable[[], list[Any]]) -> None:
        """Show the cards of ``state`` (an AppState; they follow its signals); hovering a card's
        verdict highlights its instance on the canvases of ``views()``."""
        self.deck.bind(state, views)

    @property
    def tree(self) -> QTreeWidget:
        """The "Details" tree, holding the sections shown last (filled now if it was collapsed)."""
        self._fill_tree()
        return self._tree

    def _show_details(self, on: bool) -> None:
        if on:
            self._fill_tree()
        self._tree.setVisible(on)
        self.details.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)

    def show_readouts(self, sections: list[tuple[str, Any]]) -> None:
        """Sections of (title, record); records are nested dicts shown as a tree. A tree of the
        same shape (a slider step) keeps its items and only changes texts. While "Details" is
        collapsed the tree is filled only when it is shown or read (a sample switch or a slider
        step then costs nothing for it)."""
        self._pending = sections
        if self.details.isChecked():
            self._fill_tree()
        self.deck.refresh()

    def _fill_tree(self) -> None:
        sections, self._pending = self._pending, None
        if sections is None:
            return
        if self._tips[0] is not self.help:  # another benchmark's definitions
            self._tips = (self.help, {})
        rows = _rows(sections, self.help, self._tips[1])
        shape = [(parent, key, tip) for parent, key, _v, tip in rows]
        if shape == self._shape and len(self._items) == len(rows):
            for item, (_p, _k, value, _tip) in zip(self._items, rows, strict=True):
                if item.text(1) != value:
                    item.setText(1, value)
        else:
            self._build_tree(rows)
            self._shape = shape

    def _build_tree(self, rows: list[tuple[int, str, str, str]]) -> None:
        self._tree.clear()
        items: list[QTreeWidgetItem] = []
        for parent, key, value, tip in rows:
            item = QTreeWidgetItem(self._tree if parent < 0 else items[parent], [key, value])
            if parent < 0:
                f = item.font(0)
                f.setBold(True)
                item.setFont(0, f)
            if tip:
                item.setToolTip(0, tip)
                item.setToolTip(1, tip)
            items.append(item)
        self._items = items
        self._tree.expandAll()

    def value_of(self, section: str, *path: str) -> str | None:
        """Displayed text of a metric (tests and accessibility): section title, then keys."""
        tree = self.tree
        for i in range(tree.topLevelItemCount()):
            item: QTreeWidgetItem | None = tree.topLevelItem(i)
            if item is None or item.text(0) != section:
                continue
            for key in path:
                parent = item
                children = (parent.child(j) for j in range(parent.childCount()))
                item = next((c for c in children if c is not None and c.text(0) == key), None)
                if item is None:
                    return None
            return item.text(1)
        return None

"""The typed-prompt layers of the current sample: one checkable row per (prompt, model) result;
checked results are compared side by side in the Compare tab."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from masklens.core.schema import Sample
from masklens.gui.state import LiveResult
from masklens.gui.views import PanelSpec


class LiveList(QWidget):
    #: a result's box was (un)ticked: (result id, shown); the state records it (AppState.set_live_shown)
    shownChanged = Signal(int, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.itemChanged.connect(self._item_changed)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.list)
        self.results: list[LiveResult] = []

    def set_results(self, results: list[LiveResult]) -> None:
        self.results = list(results)
        self.list.blockSignals(True)
        self.list.clear()
        for r in self.results:
            iou = r.generic.get("iou")
            text = f"#{r.id} {r.label}  IoU {iou:.3f}" if isinstance(iou, float) else f"#{r.id} {r.label}"
            item = QListWidgetItem(text)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if r.shown else Qt.CheckState.Unchecked)
            item.setData(Qt.ItemDataRole.UserRole, r.id)
            self.list.addItem(item)
        self.list.blockSignals(False)

    def _item_changed(self, item: QListWidgetItem) -> None:
        self.shownChanged.emit(int(item.data(Qt.ItemDataRole.UserRole)), item.checkState() == Qt.CheckState.Checked)

    def panel_specs(self, sample: Sample) -> list[PanelSpec]:
        """One panel per checked result (newest six), on its image, against its implied ground truth."""
        shown = [r for r in self.results if r.shown and r.sample_id == sample.id][-6:]
        return [PanelSpec(title=f"#{r.id} {r.label}", image=r.prompt.image, prompt_id=f"live:{r.id}",
                          gts=[r.prompt.gt] if r.prompt.gt else []) for r in shown]

"""The sample table's column header, deaf to the selection.

A list row is selected whole: a header that follows the selection would highlight every
section and repaint itself (every section asks the model for its text) on every sample switch.

It also never reads the selection.
A :class:`QHeaderView` drawing its sections asks, for every visible column, whether the whole
column is selected (``QItemSelectionModel.isColumnSelected``: the proxy's ``index()`` and
``flags()`` once per row, in Python). With every row selected (Ctrl+A in the gallery) that is
rows × visible columns calls a paint: 18,000 for 3,000 samples, 600,000 for 100,000. The list's
headers show no selection (rows are selected, never columns), so they get a selection model of
their own that stays empty: sorting by a header click is unchanged.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QRegion
from PySide6.QtWidgets import QHeaderView, QTableView, QWidget


class ListHeader(QHeaderView):
    """A horizontal header with clickable sections and no selection highlight."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setSectionsClickable(True)
        self.setHighlightSections(False)

    def visualRegionForSelection(self, selection: Any) -> QRegion:  # noqa: N802 - Qt override
        """Nothing of the header changes with the selection (no highlight): nothing to repaint."""
        return QRegion()


def detach_header_selection(view: QTableView) -> None:
    """Give ``view``'s column header an empty selection model (call after ``setSelectionModel``)."""
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setSelectionModel(QItemSelectionModel(view.model(), header))

"""The sample table's column header, deaf to the selection.

A list row is selected whole: a header that follows the selection would highlight every
section and repaint itself (every section asks the model for its text) on every sample switch.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QRegion
from PySide6.QtWidgets import QHeaderView, QWidget


class ListHeader(QHeaderView):
    """A horizontal header with clickable sections and no selection highlight."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setSectionsClickable(True)
        self.setHighlightSections(False)

    def visualRegionForSelection(self, selection: Any) -> QRegion:  # noqa: N802 - Qt override
        """Nothing of the header changes with the selection (no highlight): nothing to repaint."""
        return QRegion()

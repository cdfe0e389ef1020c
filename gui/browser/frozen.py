"""The sample table's id columns kept in view while its metric columns scroll sideways.

A second table view lies over the left edge of the sample table and shows only its first
columns (``#`` and ``sample``): the same model, the same selection, the same row heights and
vertical scrolling, the same cell painter; a click on one of its rows selects that sample and a
click on its header sorts the list, as the table's own would. It never takes the keyboard focus
(keys go to the table behind it).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QAbstractItemView, QFrame, QHeaderView, QTableView

from masklens.gui.browser.header import ListHeader, detach_header_selection
from masklens.gui.browser.table_paint import OneCallPaint


class FrozenColumns(OneCallPaint, QTableView):
    """The first ``count`` columns of ``table``, drawn over it and kept there."""

    def __init__(self, table: QTableView, count: int = 2) -> None:
        super().__init__(table)
        self.table, self.count = table, count
        self._viewport = table.viewport()
        self.setModel(table.model())
        self.setSelectionModel(table.selectionModel())
        self.setItemDelegate(table.itemDelegate())
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollMode(table.verticalScrollMode())
        self.setAutoScroll(False)  # the table scrolls to the current row (a turn later from the gallery)
        self.setAlternatingRowColors(table.alternatingRowColors())
        self.setWordWrap(False)
        self.setTabKeyNavigation(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(table.verticalHeader().defaultSectionSize())
        self.setHorizontalHeader(ListHeader(self))  # as the table's: a switch does not repaint it
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setSortIndicatorShown(True)
        header.setSectionsClickable(True)
        header.setTextElideMode(Qt.TextElideMode.ElideRight)
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        header.sectionClicked.connect(self._sort)
        detach_header_selection(self)  # as the table's: the selection is never read a paint
        main = table.horizontalHeader()
        main.sectionResized.connect(lambda *_: self._layout())
        main.sortIndicatorChanged.connect(self._show_sort)
        main.geometriesChanged.connect(self._layout)
        self.verticalScrollBar().valueChanged.connect(table.verticalScrollBar().setValue)
        table.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)
        model = table.model()
        for signal in (model.modelReset, model.layoutChanged, model.columnsInserted, model.columnsRemoved):
            signal.connect(self._layout)
        table.installEventFilter(self)
        self._viewport.installEventFilter(self)  # it resizes after the table (scroll bars placed)
        table.viewport().stackUnder(self)
        self._layout()
        self.show()

    def dataChanged(self, top_left: QModelIndex | QPersistentModelIndex,  # noqa: N802 - Qt slot
                    bottom_right: QModelIndex | QPersistentModelIndex,
                    roles: Sequence[int] = ()) -> None:
        """New values in the metric columns only (a slider step): nothing shown here changed."""
        if top_left.column() >= self.count:
            return
        super().dataChanged(top_left, bottom_right, list(roles))

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        """A click here is a click in the list: the list takes the keyboard focus (arrows, keys)."""
        self.table.setFocus(Qt.FocusReason.MouseFocusReason)
        super().mousePressEvent(event)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        watched = (self.table, self._viewport)  # also called for our own scroll bars
        if (obj is watched[0] or obj is watched[1]) and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self._layout()
        return False

    def width_shown(self) -> int:
        """How wide the kept columns are (pixels)."""
        return sum(self.table.columnWidth(c) for c in range(min(self.count, self.table.model().columnCount())))

    def _layout(self) -> None:
        """The table's first columns only, as wide as the table's, over its left edge (what is
        already so is left alone: every filter and sort comes here)."""
        columns = self.model().columnCount()
        for c in range(columns):
            hide = c >= self.count
            if self.isColumnHidden(c) != hide:
                self.setColumnHidden(c, hide)
            if not hide and self.columnWidth(c) != self.table.columnWidth(c):
                self.setColumnWidth(c, self.table.columnWidth(c))
        t, f = self.table, self.table.frameWidth()
        rect = QRect(t.verticalHeader().width() + f, f, self.width_shown(),
                     t.viewport().height() + t.horizontalHeader().height())
        if self.geometry() != rect:
            self.setGeometry(rect)
        header, height = self.horizontalHeader(), t.horizontalHeader().height()
        if header.minimumHeight() != height or header.maximumHeight() != height:
            header.setFixedHeight(height)
        self.verticalScrollBar().setValue(t.verticalScrollBar().value())

    def _sort(self, column: int) -> None:
        """A click on a kept column's header: as one on the table's (again: the other order)."""
        main = self.table.horizontalHeader()
        again = main.sortIndicatorSection() == column and main.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
        self.table.sortByColumn(column, Qt.SortOrder.DescendingOrder if again else Qt.SortOrder.AscendingOrder)

    def _show_sort(self, column: int, order: Qt.SortOrder) -> None:
        self.horizontalHeader().setSortIndicator(column if column < self.count else -1, order)

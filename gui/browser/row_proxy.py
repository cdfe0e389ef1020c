"""The sample browser's filter and sort: a proxy over precomputed row lists.

A ``QSortFilterProxyModel`` calls Python once per row to filter and once per comparison to
sort — about a second at 100,000 samples, on the GUI thread, on every slider move. Here the
visible rows are an array computed by :func:`plan_rows` (a pure function over a
:class:`RowValues`, so a worker can compute it from new readouts) and installed in one step; Qt
then asks Python only about the rows it paints. The rows and their inverse stay numpy arrays
end to end: SA-Co/Gold's 168,202 rows as Python lists cost a list of int objects made on the
worker and freed on the GUI thread at every slider step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np
from PySide6.QtCore import QAbstractProxyModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from masklens.gui.browser.bulk import BulkColumns, order_rows, sort_key
from masklens.gui.browser.filters import Filter, Row


class RowValues(Protocol):
    """What a plan needs of the table: cell values and filter rows by source row."""

    def value(self, row: int, col: int) -> Any: ...
    def row_of(self, i: int) -> Row: ...
    def rowCount(self) -> int: ...  # noqa: N802


class CellTable(RowValues, Protocol):
    """The proxy's source (a QAbstractItemModel, the sample table): also what a cell shows."""

    def cell(self, row: int, col: int, role: int) -> Any: ...


@dataclass
class RowPlan:
    """Visible source rows in display order, the inverse map (source row → position or -1),
    both integer arrays, and the column they are sorted by (-1: benchmark order)."""

    rows: np.ndarray
    pos: np.ndarray
    sort_column: int = -1

    @classmethod
    def empty(cls) -> RowPlan:
        """No rows."""
        return cls(np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp))


def matches(table: RowValues, row: int, filt: Filter, search: str) -> bool:
    """Whether source ``row`` passes the search text (id, group, prompts) and the filter."""
    if search:
        hay = f"{table.value(row, 1)} {table.value(row, 2)} {table.value(row, 3)}".lower()
        if search not in hay:
            return False
    return filt(table.row_of(row))


def plan_rows(table: RowValues, filt: Filter, search: str, pinned: int | None,
              sort_column: int, descending: bool, n: int | None = None) -> RowPlan:
    """The rows to show: those that match (and ``pinned`` whatever it is), sorted by a column.
    A table with whole columns (:class:`~masklens.gui.browser.bulk.BulkColumns`) is filtered
    and sorted column by column; another one row by row."""
    n = table.rowCount() if n is None else n
    bulk = table if isinstance(table, BulkColumns) and n == table.rowCount() else None
    if type(filt) is Filter and not search:
        rows = np.arange(n, dtype=np.intp)
    elif bulk is not None:
        judged = filt.select(bulk.key_column, n)
        if judged is None:  # a filter that judges one row at a time
            judged = [filt(bulk.row_of(r)) for r in range(n)]
        keep = np.fromiter(map(bool, judged), dtype=bool, count=n)
        if search:
            keep &= np.fromiter((search in h for h in bulk.haystacks()), dtype=bool, count=n)
        if pinned is not None and 0 <= pinned < n:
            keep[pinned] = True
        rows = np.flatnonzero(keep)
    else:
        rows = np.array([r for r in range(n) if r == pinned or matches(table, r, filt, search)], dtype=np.intp)
    if sort_column >= 0:
        if bulk is not None:
            rows = order_rows(rows, bulk.sort_column(sort_column), descending, bulk._bulk)
        else:
            value = table.value
            rows = np.array(sorted(rows.tolist(), key=lambda r: sort_key(value(r, sort_column)),
                                   reverse=descending), dtype=np.intp)  # fmt: skip
    return RowPlan(rows, positions(rows, n), sort_column)


def positions(rows: np.ndarray, n: int) -> np.ndarray:
    """Source row → its place in ``rows`` (-1: not listed), for ``n`` source rows."""
    pos = np.full(n, -1, dtype=np.intp)
    pos[rows] = np.arange(rows.size, dtype=np.intp)
    return pos


_FLAGS = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren


def column_of(model: Any, name: str | None) -> int:
    """The column of ``model`` whose header reads ``name`` (-1: none)."""
    if model is None or name is None:
        return -1
    for col in range(model.columnCount()):
        if model.headerData(col, Qt.Orientation.Horizontal) == name:
            return col
    return -1


class SampleFilterProxy(QAbstractProxyModel):
    """Search text over id/group/prompts plus one :class:`Filter`, a sort column, and a pinned
    row shown whatever the filter; emits ``refiltered`` after the rows change."""

    refiltered = Signal()
    #: the sort column moved (its column left the table: -1) without the user clicking a header
    sortMoved = Signal(int, Qt.SortOrder)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.filter: Filter = Filter()
        self.search = ""
        self.pinned: int | None = None  # a source row shown whatever the filter (the current sample)
        self._sort_column = -1
        self._sort_name: str | None = None  # the sorted column's name: it survives new columns
        self._order = Qt.SortOrder.AscendingOrder
        self._plan = RowPlan.empty()
        self._next: RowPlan | None = None  # a plan computed elsewhere, for the next source reset
        self._stamp = 0  # counts the plans installed and the source's changes
        self._sorted: tuple[int, Any, int] | None = None  # (column, order, stamp) of the last sort
        self._cell: Any = None  # the source's cell(row, col, role)

    # ------------------------------------------------------------ source
    def setSourceModel(self, model: Any) -> None:  # noqa: N802 - Qt override
        """``model``: a QAbstractItemModel that is a :class:`CellTable` (the sample table)."""
        super().setSourceModel(model)
        self._cell = model.cell
        model.modelAboutToBeReset.connect(self.beginResetModel)
        model.modelReset.connect(self._source_reset)
        model.dataChanged.connect(self._source_data_changed)
        model.headerDataChanged.connect(self.headerDataChanged)
        self._plan = self._compute()

    def _table(self) -> CellTable:
        """The source model as the :class:`CellTable` :meth:`setSourceModel` was given."""
        # Qt hands the source back typed as a plain QAbstractItemModel; it is the CellTable set above
        return cast(CellTable, self.sourceModel())

    def _source_reset(self) -> None:
        self._stamp += 1
        plan, self._next = self._next, None
        moved = self._follow_sort_name()
        if plan is None or len(plan.pos) != self.sourceModel().rowCount() \
                or plan.sort_column != self._sort_column:
            plan = self._compute()
        self._plan = plan
        self.endResetModel()
        if moved:
            self.sortMoved.emit(self._sort_column, self._order)
        self.refiltered.emit()

    def _follow_sort_name(self) -> bool:
        """After new columns: sort by the same-named column, or in benchmark order when it is
        gone (never by whatever column now has the old number). True when the number changed."""
        if self._sort_column < 0:
            return False
        column = column_of(self.sourceModel(), self._sort_name)
        if column < 0:
            self._sort_name = None
        if column == self._sort_column:
            return False
        self._sort_column = column
        return True

    def _source_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: Any = ()) -> None:
        """One source row: its place in the list (nothing when it is not listed); more: every
        listed row (the views repaint what they show of it)."""
        self._stamp += 1
        if not self._plan.rows.size:
            return
        lo, hi = top_left.row(), bottom_right.row()
        if lo == hi:
            p = int(self._plan.pos[lo]) if 0 <= lo < len(self._plan.pos) else -1
            if p >= 0:
                self.dataChanged.emit(self.index(p, top_left.column()), self.index(p, bottom_right.column()))
            return
        self.dataChanged.emit(self.index(0, top_left.column()),
                              self.index(len(self._plan.rows) - 1, bottom_right.column()))

    # ------------------------------------------------------------ rows
    def _compute(self) -> RowPlan:
        model = self.sourceModel()
        if model is None:
            return RowPlan.empty()
        return plan_rows(self._table(), self.filter, self.search, self.pinned, self._sort_column,
                         self._order == Qt.SortOrder.DescendingOrder)

    def plan_args(self) -> tuple[Filter, str, int | None, int, bool]:
        """(filter, search, pinned, sort column, descending): what :func:`plan_rows` needs."""
        return (self.filter, self.search, self.pinned, self._sort_column,
                self._order == Qt.SortOrder.DescendingOrder)

    def expect(self, plan: RowPlan) -> None:
        """Use ``plan`` (computed off the GUI thread) at the source model's next reset."""
        self._next = plan

    def apply(self, plan: RowPlan) -> None:
        """Show ``plan``'s rows; selections and the current row follow their samples."""
        self._stamp += 1
        if np.array_equal(plan.rows, self._plan.rows):  # same rows: no layout change for the views to redo
            self._plan = plan
            self.refiltered.emit()
            return
        self.layoutAboutToBeChanged.emit()
        old_rows = self._plan.rows
        persistent = self.persistentIndexList()
        self._plan = plan
        new = []
        for idx in persistent:
            r = idx.row()
            p = int(plan.pos[old_rows[r]]) if 0 <= r < len(old_rows) and old_rows[r] < len(plan.pos) else -1
            new.append(self.index(p, idx.column()) if p >= 0 else QModelIndex())
        self.changePersistentIndexList(persistent, new)
        self.layoutChanged.emit()
        self.refiltered.emit()

    def refilter(self) -> None:
        """Re-run the filter and sort over every row (on this thread)."""
        self.apply(self._compute())

    def set_filter(self, f: Filter) -> None:
        self.filter = f
        self.refilter()

    def set_search(self, text: str) -> None:
        self.search = text.strip().lower()
        self.refilter()

    def matches(self, row: int) -> bool:
        """Whether source ``row`` passes the search and the filter (the pin aside)."""
        return matches(self._table(), row, self.filter, self.search)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column``; asked again for the same rows, values and order (QTableView's
        sortByColumn asks twice), the rows already are."""
        model = self.sourceModel()
        if model is None or not 0 <= column < model.columnCount():
            column = -1
        if (column, order, self._stamp) == self._sorted:
            return
        self._sort_column, self._order = column, order
        self._sort_name = None if column < 0 else str(model.headerData(column, Qt.Orientation.Horizontal))
        if model is not None:
            self.refilter()
            self._sorted = (column, order, self._stamp)

    def sort_name(self) -> str | None:
        """The name of the column the rows are sorted by (None: benchmark order)."""
        return self._sort_name

    def sortColumn(self) -> int:  # noqa: N802 - the QSortFilterProxyModel name
        return self._sort_column

    def sortOrder(self) -> Qt.SortOrder:  # noqa: N802
        return self._order

    def visible_rows(self) -> np.ndarray:
        """The source rows listed, in display order (an integer array: read it, do not change it)."""
        return self._plan.rows

    # ------------------------------------------------------------ Qt proxy API
    def index(self, row: int, column: int,
              parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        model = self.sourceModel()
        if parent.isValid() or model is None or not 0 <= row < len(self._plan.rows) \
                or not 0 <= column < model.columnCount():
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index: Any = None) -> Any:  # noqa: D401 - QObject.parent() without an index
        if index is None:
            return super().parent()
        return QModelIndex()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self._plan.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        model = self.sourceModel()
        return 0 if parent.isValid() or model is None else model.columnCount()

    def mapToSource(self, index: QModelIndex | QPersistentModelIndex) -> QModelIndex:  # noqa: N802
        if not index.isValid() or index.row() >= len(self._plan.rows):
            return QModelIndex()
        return self.sourceModel().index(int(self._plan.rows[index.row()]), index.column())

    def mapFromSource(self, index: QModelIndex | QPersistentModelIndex) -> QModelIndex:  # noqa: N802
        if not index.isValid() or index.row() >= len(self._plan.pos):
            return QModelIndex()
        p = int(self._plan.pos[index.row()])
        return self.index(p, index.column()) if p >= 0 else QModelIndex()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The source's cell, asked directly (one Python call per painted role, not three)."""
        rows, r = self._plan.rows, index.row()
        if not 0 <= r < len(rows):
            return None
        return self._cell(int(rows[r]), index.column(), role)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        model = self.sourceModel()
        return None if model is None else model.headerData(section, orientation, role)

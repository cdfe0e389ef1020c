"""The sample browser: a table model of samples × per-sample metrics, a filter proxy, and the
widget with a search box, the filter presets and a free filter expression."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from masklens.core.errors import MasklensError
from masklens.core.schema import Sample
from masklens.gui.browser.bulk import sampled_rows
from masklens.gui.browser.cell_painter import CellPainter
from masklens.gui.browser.filters import Expression, Filter, both, column_labels, presets_for
from masklens.gui.browser.focus_ring import FocusRing
from masklens.gui.browser.frozen import FrozenColumns
from masklens.gui.browser.header import ListHeader, detach_header_selection
from masklens.gui.browser.row_proxy import SampleFilterProxy, plan_rows
from masklens.gui.browser.sample_table import (
    COLUMN_MAX,
    FIXED,
    OUTSIDE_TIP,
    Prepared,
    RowSnapshot,
    SampleTableModel,
    _fmt,
    verdict_labels,
)
from masklens.gui.browser.table_view import SampleTableView


class SampleBrowser(QWidget):
    """Search box, filter presets, free filter expression and the sample table."""

    sampleActivated = Signal(int)  # source row
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._current_row: int | None = None  # the source row of the current sample
        self._keep_current = False  # a filter change in progress keeps the current row
        self.model = SampleTableModel(self)
        self.proxy = SampleFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.search = QLineEdit(placeholderText="search id, group, prompt…")
        self.search.textChanged.connect(self._search_changed)
        self.presets = QComboBox()
        self.presets.currentIndexChanged.connect(self._preset_chosen)
        self.expression = QLineEdit(placeholderText=placeholder([]))
        self.expression.returnPressed.connect(self._expression_entered)
        self.expression.textChanged.connect(self._expression_edited)
        self.count = QLabel("")
        self.table = SampleTableView()  # scrolls a turn after a move from the gallery
        self.table.setHorizontalHeader(ListHeader(self.table))  # a switch does not repaint it
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.proxy.sort(-1)  # benchmark order until a header is clicked
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # "os_max_iou" → "os_max_…", not "os_…_iou": a column's name reads from its start
        self.table.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setAlternatingRowColors(True)
        self.table.setTabKeyNavigation(False)  # Tab leaves the list; the arrows move inside it
        self.table.setWordWrap(False)
        kept = FIXED.index("sample") + 1  # "#" and the id stay in view, drawn by the frozen columns
        self.table.setItemDelegate(CellPainter(self.model, self.proxy, self.table, covered=kept))  # one call a cell
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        detach_header_selection(self.table)  # Ctrl+A: no per-row query a header paint
        self.frozen = FrozenColumns(self.table, kept)
        self.frozen.setItemDelegate(CellPainter(self.model, self.proxy, self.frozen))
        self.focus_ring = FocusRing(self.table)  # where the one-key shortcuts go (no style sheet)
        self._filters: list[Filter] = []
        self._typed: Expression | None = None  # the applied typed expression, ANDed with the preset
        self._kind: str | None = None
        top = QHBoxLayout()
        top.addWidget(self.presets, 1)
        top.addWidget(self.count)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.search)
        lay.addLayout(top)
        lay.addWidget(self.expression)
        lay.addWidget(self.table, 1)
        self.proxy.layoutChanged.connect(self.update_count)
        self.proxy.rowsInserted.connect(self.update_count)
        self.proxy.rowsRemoved.connect(self.update_count)
        self.proxy.modelReset.connect(self.update_count)
        self.proxy.refiltered.connect(self._mark_pinned)
        self.proxy.sortMoved.connect(self._show_sort)

    # ------------------------------------------------------------ content
    def set_benchmark(self, kind: str | None, samples: list[Sample], help_: dict[str, str]) -> None:
        """Another benchmark: its own columns, no search text or typed filter of the previous
        one, and a sort by a metric column dropped (an id, group or prompt sort stays)."""
        self._kind = kind
        self.proxy.pinned, self.model.outside_row = None, None
        self._typed = None
        for edit in (self.search, self.expression):
            edit.blockSignals(True)
            edit.clear()
            edit.blockSignals(False)
        self.expression.setStyleSheet("")
        self.expression.setToolTip("")
        self.proxy.search = ""
        self.model.labels = column_labels(kind)
        self.model.set_samples(samples, help_)  # the proxy follows the sort by name (metric: gone)
        self._refresh_presets()
        self._widths()

    def set_readouts(self, readouts: Sequence[dict[str, Any]] | None, prepared: Prepared | None = None,
                     columns_key: Any = None) -> None:
        """New readouts (a slider moved, another prediction set). ``prepared``: their flattened
        records and the rows to show, computed off the GUI thread (:meth:`plan_for`); without it
        the rows are planned here. ``columns_key``: what the metric columns depend on (the same
        as last time: the columns stay, see :meth:`SampleTableModel.set_readouts`). The sample
        being looked at stays, marked when it no longer matches, until the user moves."""
        before = list(self.model.columns)
        current = self._current_row
        filtering = type(self.proxy.filter) is not Filter or bool(self.proxy.search)
        if filtering and current is not None and 0 <= current < len(readouts or []):
            self.proxy.pinned = current
        if prepared is not None:
            self.proxy.expect(prepared.plan)  # used if the model resets (new columns)
        shown = self._rows_on_screen()
        if prepared is None:
            self.model.set_readouts(readouts, key=columns_key, shown=shown)
        else:
            self.model.set_readouts(readouts, prepared.flat, prepared.columns, key=columns_key, shown=shown)
        if self.model.columns != before:
            self._refresh_presets()
            self._widths()
        elif prepared is not None:
            self._quietly(lambda: self.proxy.apply(prepared.plan))
        elif filtering or self.proxy.sortColumn() >= 0:  # "all samples" in benchmark order: nothing to redo
            self._quietly(self.proxy.refilter)
        self.update_count()

    def _rows_on_screen(self) -> list[int]:
        """The source rows on screen (none while hidden: the table paints when shown)."""
        table, n = self.table, self.proxy.rowCount()
        if not n or not table.isVisible():
            return []
        top, bottom = table.rowAt(0), table.rowAt(table.viewport().height() - 1)
        return self.proxy.visible_rows()[max(top, 0): n if bottom < 0 else bottom + 1].tolist()

    def planner(self, columns_key: Any = None) -> Callable[[list[dict[str, Any]], Callable[[], None]], Prepared]:
        """A function for a worker: ``(readouts, check)`` → :class:`Prepared` (their metric
        columns and the rows the current filter, search and sort show, with the sample being
        looked at pinned; records are flattened later, only those painted). What it reads of
        the table is copied now, on this thread; ``columns_key`` the same as the table's: the
        columns stay (a slider step)."""
        base = RowSnapshot(self.model, [])
        filt, search, pinned, _column, desc = self.proxy.plan_args()
        name, column_named = self.proxy.sort_name(), self.model.column_named
        same = columns_key is not None and columns_key == self.model._columns_key
        columns = list(self.model.columns) if same else None
        current = self._current_row
        if (type(filt) is not Filter or search) and current is not None:
            pinned = current

        def prepare(readouts: list[dict[str, Any]], check: Callable[[], None] = lambda: None) -> Prepared:
            snap = base.with_readouts(readouts, columns)
            check()
            column = column_named(name, snap.columns)  # the sorted column's place among these columns
            return Prepared({}, plan_rows(snap, filt, search, pinned, column, desc), snap.columns)

        return prepare

    def _widths(self) -> None:
        """Each column as wide as its header and its text in sampled rows (the first, the last
        and evenly spaced ones: ids and texts grow towards the end of large benchmarks), within
        bounds: ids, texts and headers read whole instead of eliding ("1/10000…", "np …")."""
        header, fm = self.table.horizontalHeader(), self.table.fontMetrics()
        hfm = header.fontMetrics()
        rows = sampled_rows(self.model.rowCount())
        value = self.model.value  # what data() shows, without a QModelIndex per cell
        for col in range(self.model.columnCount()):
            name = str(self.model.headerData(col, Qt.Orientation.Horizontal))
            texts = {_fmt(value(r, col)) for r in rows}
            content = max(map(fm.horizontalAdvance, texts), default=0) + 12
            width = hfm.horizontalAdvance(name) + 16
            if col < len(FIXED):
                cap = COLUMN_MAX.get(FIXED[col], 120)
                if FIXED[col] == "verdict":  # verdicts come later: room for their longest label now
                    labels = [fm.horizontalAdvance(t) + 12 for t in verdict_labels()]
                    cap = max([cap, *labels])
                    width = max([width, *labels])
                width = min(max(width, content), cap)
            else:
                width = min(max(width, content, 48), 130)
            header.resizeSection(col, width)

    def _show_sort(self, column: int, order: Qt.SortOrder) -> None:
        """The header's sort arrow where the rows are sorted now (no re-sort)."""
        header = self.table.horizontalHeader()
        header.blockSignals(True)
        header.setSortIndicator(column, order)
        header.blockSignals(False)
        self.frozen._show_sort(column, order)

    def _refresh_presets(self) -> None:
        current = self.presets.currentText()
        columns = self.model.filter_columns()
        self._filters = presets_for(self._kind, columns)
        self.presets.blockSignals(True)
        self.presets.clear()
        self.presets.addItems([f.label for f in self._filters])
        idx = self.presets.findText(current)
        self.presets.setCurrentIndex(max(idx, 0))
        self.presets.blockSignals(False)
        first = self.model.flat(0) if self.model.rowCount() else {}
        self.expression.setPlaceholderText(placeholder(self.model.columns, first, self.model.labels))
        if self._typed is not None and self._typed.bind(columns, self._aliases()):
            self._typed = None  # its columns are gone
            self.expression.clear()
        self._quietly(lambda: self.proxy.set_filter(both(self._filters[max(idx, 0)], self._typed)))

    def _aliases(self) -> dict[str, str]:
        return {label: key for key, label in self.model.labels.items()}

    def preset(self) -> Filter:
        """The preset chosen in the box."""
        i = self.presets.currentIndex()
        return self._filters[i] if 0 <= i < len(self._filters) else Filter()

    def _preset_chosen(self, i: int) -> None:
        if 0 <= i < len(self._filters):
            self._set_filter(both(self._filters[i], self._typed))

    def _set_filter(self, f: Filter) -> None:
        """A filter the user chose: exactly its matches are listed; the sample shown stays. The
        list's filter reads as the preset AND the typed expression (the count's tooltip)."""
        self.proxy.pinned = None
        self._quietly(lambda: self.proxy.set_filter(f))
        self.update_count()

    def set_expression(self, text: str) -> bool:
        """Apply a typed filter expression; an unreadable one is reported and not applied: the
        list keeps the filter it had, and the field says so (red, with the reason)."""
        try:
            f = Expression(text)
        except MasklensError as exc:
            return self._not_applied(str(exc))
        missing = f.bind(self.model.filter_columns(), self._aliases())
        if missing:
            return self._not_applied(f"no column named {', '.join(missing)} (see the table's headers)")
        self.expression.setStyleSheet("")
        self.expression.setToolTip(f"applied together with the preset: {both(self.preset(), f).label}")
        if self.expression.text().strip() != text.strip():
            self.expression.blockSignals(True)
            self.expression.setText(text)
            self.expression.blockSignals(False)
        self._typed = f
        self._set_filter(both(self.preset(), f))
        return True

    def _not_applied(self, why: str) -> bool:
        kept = self.proxy.filter.label or "all samples"
        self.expression.setStyleSheet("QLineEdit { border: 2px solid #D55E00; }")
        self.expression.setToolTip(f"not applied: {why}; the list still shows: {kept}")
        self.message.emit(f"filter not applied: {why} — still showing: {kept}")
        return False

    def _expression_edited(self, text: str) -> None:
        if not text.strip():  # cleared: back to the preset
            self._expression_entered()

    def _expression_entered(self) -> None:
        text = self.expression.text().strip()
        if text:
            self.set_expression(text)
        else:
            self.expression.setStyleSheet("")
            self.expression.setToolTip("")
            self._typed = None
            self._preset_chosen(self.presets.currentIndex())

    def _search_changed(self, text: str) -> None:
        self.proxy.pinned = None
        self._quietly(lambda: self.proxy.set_search(text))

    def update_count(self, *_: Any) -> None:
        """The "shown / all" count and what the list shows (after the rows or verdicts changed)."""
        shown = self.proxy.rowCount() - (1 if self.current_outside() else 0)
        self.count.setText(f"{shown} / {self.model.rowCount()}")
        shown_by = self.proxy.filter.label or "all samples"
        self.count.setToolTip(OUTSIDE_TIP if self.current_outside()
                              else f"samples matching the filter / all; filter: {shown_by}")

    def current_outside(self) -> bool:
        """True when the current sample is shown although the filter does not match it."""
        return self.model.outside_row is not None

    def _mark_pinned(self) -> None:
        """After a re-filter: mark the pinned current sample when it no longer matches."""
        pin = self.proxy.pinned
        outside = pin if pin is not None and pin < self.model.rowCount() and not self.proxy.matches(pin) else None
        if outside != self.model.outside_row:
            old, self.model.outside_row = self.model.outside_row, outside
            for r in (old, outside):
                if r is not None and r < self.model.rowCount():
                    self.model.dataChanged.emit(self.model.index(r, 0),
                                                self.model.index(r, self.model.columnCount() - 1))
        self.update_count()

    def _quietly(self, change: Any) -> None:
        """Run ``change`` (a re-filter) without letting the table's selection pick another sample:
        the sample shown changes only when the user moves."""
        self._keep_current = True
        try:
            change()
            # the table's current row is the sample shown, or none when the filter hides it
            cur = self._current_row
            idx = (self.proxy.mapFromSource(self.model.index(cur, 0))
                   if cur is not None and 0 <= cur < self.model.rowCount() else QModelIndex())
            if not idx.isValid():
                self.table.selectionModel().clear()
            elif self.table.currentIndex().row() != idx.row():
                self.table.selectRow(idx.row())
        finally:
            self._keep_current = False

    def _unpin(self, keep: int | None = None) -> None:
        """The user moved (to ``keep``) or chose another filter: a pinned sample outside the
        filter leaves the table (one re-filter, only then)."""
        pinned = self.proxy.pinned
        if pinned is None or pinned == keep:
            return
        self.proxy.pinned = None
        if self.model.outside_row == pinned:
            self._quietly(self.proxy.refilter)
        self._mark_pinned()

    # ------------------------------------------------------------ navigation
    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and not self._keep_current:
            row = self.proxy.mapToSource(current).row()
            self._current_row = row
            self._unpin(keep=row)
            self.sampleActivated.emit(row)

    def select_source_row(self, row: int) -> None:
        self._current_row = row
        self._unpin(keep=row)
        idx = self.proxy.mapFromSource(self.model.index(row, 0))
        if idx.isValid() and self.table.currentIndex().row() != idx.row():
            self.table.selectRow(idx.row())
            self.table.scrollTo(idx)

    def step(self, delta: int) -> bool:
        """Move to the next/previous visible row (i.e. the next match of the current filter)."""
        n = self.proxy.rowCount()
        if not n:
            return False
        cur = self.table.currentIndex()
        row = (cur.row() + delta) if cur.isValid() else (0 if delta > 0 else n - 1)
        if not 0 <= row < n:
            return False
        self.table.selectRow(row)
        self.table.scrollTo(self.proxy.index(row, 0))
        return True

    def next_match_after(self, source_row: int) -> int | None:
        """The next visible source row after ``source_row`` (view order when it is visible,
        benchmark order otherwise); None when there is none."""
        cur = self.proxy.mapFromSource(self.model.index(source_row, 0))
        rows = self.proxy.visible_rows()
        if cur.isValid():
            return int(rows[cur.row() + 1]) if cur.row() + 1 < len(rows) else None
        later = rows[rows > source_row]
        return int(later.min()) if later.size else None


def placeholder(columns: list[str], values: dict[str, Any] | None = None,
                labels: dict[str, str] | None = None) -> str:
    """The filter field's hint, from the open benchmark's own columns: its first metric with a
    fractional value in ``values`` (a row's readout), else "sample ~ …" (no readouts yet)."""
    values, labels = values or {}, labels or {}
    numeric = [c for c in columns if isinstance(values.get(c), float)]
    if not numeric:
        return "filter, e.g. sample ~ 12 (Enter); 'and' joins clauses"
    return f"filter, e.g. {labels.get(numeric[0], numeric[0])} < 0.5 (Enter); 'and' joins clauses"

"""The sample browser: a table model of samples × per-sample metrics, a filter proxy, and the
widget with a search box, the filter presets and a free filter expression."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from masklens.core.errors import MasklensError
from masklens.core.schema import Sample
from masklens.gui.disposal import release_later
from masklens.gui.filters import Expression, Filter, Row, flatten, presets_for
from masklens.gui.row_proxy import RowPlan, SampleFilterProxy, plan_rows

__all__ = ["SampleBrowser", "SampleFilterProxy", "SampleTableModel", "plan_rows"]

FIXED = ("#", "sample", "group", "prompts", "verdict")
MAX_METRIC_COLUMNS = 60
#: the widest a fixed column starts (pixels); the user may widen it
COLUMN_MAX = {"#": 44, "sample": 130, "group": 70, "prompts": 120, "verdict": 100}


def verdict_labels() -> list[str]:
    """The reviewer's verdict labels (none when the review module is absent)."""
    try:
        from masklens.core.review import VERDICT_TYPES
    except ImportError:
        return []
    return [vt.label for vt in VERDICT_TYPES.values()]
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
_SKIP = {"id", "sample_id", "sample"}
OUTSIDE_TIP = "outside the current filter: kept while you look at it; it goes when you move on"


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def metric_columns(readouts: list[dict[str, Any]]) -> list[str]:
    """The metric columns of readouts: their flattened keys (first 200 records), short values only."""
    cols: dict[str, None] = {}
    for r in readouts[:200]:
        for k, v in flatten(r).items():
            if k not in _SKIP and "instances[" not in k and not (isinstance(v, str) and len(v) > 40):
                cols.setdefault(k)
    return list(cols)[:MAX_METRIC_COLUMNS]


@dataclass
class Prepared:
    """New readouts made ready off the GUI thread: flattened records by row, and the row plan."""

    flat: dict[int, dict[str, Any]]
    plan: RowPlan
    columns: list[str]


class SampleTableModel(QAbstractTableModel):
    """Rows are samples; metric columns come from the flattened readout records."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.samples: list[Sample] = []
        self.readouts: list[dict[str, Any]] = []
        self._flat: dict[int, dict[str, Any]] = {}  # flattened lazily: only rows that are looked at
        self.columns: list[str] = []
        self.verdicts: dict[str, str] = {}
        self.help: dict[str, str] = {}
        self._prompt_text: dict[int, str] = {}
        self.outside_row: int | None = None  # the current sample, kept although the filter drops it
        #: a verdict key ("gt_wrong") → the words shown ("Ground truth wrong"); set by the review part
        self.verdict_label: Callable[[str], str] = lambda key: key

    def set_samples(self, samples: list[Sample], help_: dict[str, str] | None = None) -> None:
        self.beginResetModel()
        self.samples, self.readouts, self._flat, self.columns = samples, [], {}, []
        self.help = dict(help_ or {})
        self._prompt_text = {}
        self.endResetModel()

    def set_readouts(self, readouts: list[dict[str, Any]] | None,
                     flat: dict[int, dict[str, Any]] | None = None, columns: list[str] | None = None) -> None:
        """New readouts: same columns → dataChanged only (cheap); new columns → reset.
        ``flat`` / ``columns``: their flattened records and metric columns when already computed
        (by a worker). The previous ones are let go off this thread (100,000 dicts)."""
        readouts = readouts if isinstance(readouts, list) else list(readouts or [])
        columns = metric_columns(readouts) if columns is None else columns
        release_later(self.readouts, self._flat)
        if columns == self.columns and len(readouts) == len(self.readouts):
            self.readouts, self._flat = readouts, flat if flat is not None else {}
            if self.readouts and self.columns:
                self.dataChanged.emit(self.index(0, len(FIXED)),
                                      self.index(len(readouts) - 1, self.columnCount() - 1))
            return
        self.beginResetModel()
        self.readouts, self._flat, self.columns = readouts, flat if flat is not None else {}, columns
        self.endResetModel()

    def flat(self, row: int) -> dict[str, Any]:
        """The flattened readout of a row (computed on first use after each change)."""
        if row >= len(self.readouts):
            return {}
        got = self._flat.get(row)
        if got is None:
            got = self._flat[row] = flatten(self.readouts[row])
        return got

    def set_verdicts(self, verdicts: dict[str, str]) -> None:
        if verdicts == self.verdicts:
            return
        self.verdicts = verdicts
        if self.samples:
            col = FIXED.index("verdict")
            self.dataChanged.emit(self.index(0, col), self.index(len(self.samples) - 1, col))

    def filter_columns(self) -> list[str]:
        """Keys a filter expression may use: sample, group, verdict and the metric columns."""
        return ["sample", "group", "verdict", *self.columns]

    def row_of(self, i: int) -> Row:
        s = self.samples[i]
        verdict = self.verdicts.get(s.id)
        values = {"sample": s.id, "group": s.group, "verdict": verdict or "",
                  **self.flat(i)}
        return Row(s, values, verdict)

    def value(self, row: int, col: int) -> Any:
        s = self.samples[row]
        if col == 0:
            return row + 1
        if col == 1:
            return s.id
        if col == 2:
            return s.group or ""
        if col == 3:
            if row not in self._prompt_text:
                self._prompt_text[row] = " | ".join(p.text for p in s.prompts)
            return self._prompt_text[row]
        if col == 4:
            keys = self.verdicts.get(s.id, "")
            return ", ".join(self.verdict_label(k) for k in keys.split(", ")) if keys else ""
        return self.flat(row).get(self.columns[col - len(FIXED)])

    # ------------------------------------------------------------ Qt model API
    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.samples)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(FIXED) + len(self.columns)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return _fmt(self.value(index.row(), index.column()))
        if role == SORT_ROLE:
            v = self.value(index.row(), index.column())
            if isinstance(v, bool):
                return float(v)
            return v if isinstance(v, (int, float)) else (float("-inf") if v is None else str(v))
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() >= len(FIXED):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if index.row() == self.outside_row:
            if role == Qt.ItemDataRole.FontRole:
                font = QFont()
                font.setItalic(True)
                return font
            if role == Qt.ItemDataRole.ForegroundRole:
                return QColor("#7a7a7a")
            if role == Qt.ItemDataRole.ToolTipRole:
                return OUTSIDE_TIP
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal:
            return None
        name = FIXED[section] if section < len(FIXED) else self.columns[section - len(FIXED)]
        if role == Qt.ItemDataRole.DisplayRole:
            return name
        if role == Qt.ItemDataRole.ToolTipRole:
            return metric_tooltip(name, self.help)
        return None


class RowSnapshot:
    """The table's rows with other readouts, without Qt: what a worker plans rows from (the
    model's own value / row_of logic, over a copy of what it reads)."""

    value = SampleTableModel.value
    row_of = SampleTableModel.row_of

    def __init__(self, model: SampleTableModel, readouts: list[dict[str, Any]]) -> None:
        self.samples, self.readouts = model.samples, readouts
        self.verdicts, self.verdict_label = dict(model.verdicts), model.verdict_label
        self.columns = metric_columns(readouts)
        self._prompt_text = dict(model._prompt_text)
        self.flat_rows: dict[int, dict[str, Any]] = {}

    def with_readouts(self, readouts: list[dict[str, Any]]) -> RowSnapshot:
        other = RowSnapshot.__new__(RowSnapshot)
        other.__dict__.update(self.__dict__)
        other.readouts, other.columns, other.flat_rows = readouts, metric_columns(readouts), {}
        return other

    def flat(self, row: int) -> dict[str, Any]:
        got = self.flat_rows.get(row)
        if got is None:
            got = self.flat_rows[row] = flatten(self.readouts[row]) if row < len(self.readouts) else {}
        return got

    def rowCount(self) -> int:  # noqa: N802 - the model's name
        return len(self.samples)


def metric_tooltip(name: str, help_: dict[str, str]) -> str | None:
    """The definition of a (possibly dotted/indexed) metric key from a kind's metric_help."""
    if name in help_:
        return f"{name}: {help_[name]}"
    leaf = name.replace("]", "").replace("[", ".").split(".")
    for part in reversed(leaf):
        if part in help_:
            return f"{name}: {help_[part]}"
    return None


class SampleBrowser(QWidget):
    """Search box, filter presets, free filter expression and the sample table."""

    sampleActivated = Signal(int)  # source row
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = SampleTableModel(self)
        self.proxy = SampleFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.search = QLineEdit(placeholderText="search id, group, prompt…")
        self.search.textChanged.connect(self._search_changed)
        self.presets = QComboBox()
        self.presets.currentIndexChanged.connect(self._preset_chosen)
        self.expression = QLineEdit(placeholderText="filter, e.g. IoU_fact < 0.5 (Enter)")
        self.expression.returnPressed.connect(self._expression_entered)
        self.expression.textChanged.connect(lambda t: t.strip() or self._expression_entered())
        self.count = QLabel("")
        self.table = QTableView()
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
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self._filters: list[Filter] = []
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
        self.proxy.layoutChanged.connect(self._update_count)
        self.proxy.rowsInserted.connect(self._update_count)
        self.proxy.rowsRemoved.connect(self._update_count)
        self.proxy.modelReset.connect(self._update_count)
        self.proxy.refiltered.connect(self._mark_pinned)

    # ------------------------------------------------------------ content
    def set_benchmark(self, kind: str | None, samples: list[Sample], help_: dict[str, str]) -> None:
        self._kind = kind
        self.proxy.pinned, self.model.outside_row = None, None
        self.model.set_samples(samples, help_)
        self._refresh_presets()
        self._widths()

    def set_readouts(self, readouts: list[dict[str, Any]] | None, prepared: Prepared | None = None) -> None:
        """New readouts (a slider moved, another prediction set). ``prepared``: their flattened
        records and the rows to show, computed off the GUI thread (:meth:`plan_for`); without it
        the rows are planned here. The sample being looked at stays, marked when it no longer
        matches, until the user moves."""
        before = list(self.model.columns)
        current = getattr(self, "_current_row", None)
        filtering = type(self.proxy.filter) is not Filter or bool(self.proxy.search)
        if filtering and current is not None and 0 <= current < len(readouts or []):
            self.proxy.pinned = current
        if prepared is not None:
            self.proxy.expect(prepared.plan)  # used if the model resets (new columns)
        if prepared is None:
            self.model.set_readouts(readouts)
        else:
            self.model.set_readouts(readouts, prepared.flat, prepared.columns)
        if self.model.columns != before:
            self._refresh_presets()
            self._widths()
        elif prepared is not None:
            self._quietly(lambda: self.proxy.apply(prepared.plan))
        elif filtering or self.proxy.sortColumn() >= 0:  # "all samples" in benchmark order: nothing to redo
            self._quietly(self.proxy.refilter)
        self._update_count()

    def planner(self) -> Callable[[list[dict[str, Any]], Callable[[], None]], Prepared]:
        """A function for a worker: ``(readouts, check)`` → :class:`Prepared` (their flattened
        records and the rows the current filter, search and sort show, with the sample being
        looked at pinned); what it reads of the table is copied now, on this thread."""
        base = RowSnapshot(self.model, [])
        filt, search, pinned, column, desc = self.proxy.plan_args()
        current = getattr(self, "_current_row", None)
        if (type(filt) is not Filter or search) and current is not None:
            pinned = current

        def prepare(readouts: list[dict[str, Any]], check: Callable[[], None] = lambda: None) -> Prepared:
            snap = base.with_readouts(readouts)
            for i, r in enumerate(readouts):
                snap.flat_rows[i] = flatten(r)
                if i % 4096 == 0:
                    check()
            return Prepared(snap.flat_rows, plan_rows(snap, filt, search, pinned, column, desc), snap.columns)

        return prepare

    def _widths(self) -> None:
        """Each column as wide as its header and (fixed columns) its first rows' text, within
        bounds: ids and headers read whole instead of eliding ("1/10000…", "gro…")."""
        header, fm = self.table.horizontalHeader(), self.table.fontMetrics()
        hfm = header.fontMetrics()
        rows = range(min(self.model.rowCount(), 200))
        for col in range(self.model.columnCount()):
            name = str(self.model.headerData(col, Qt.Orientation.Horizontal))
            width = hfm.horizontalAdvance(name) + 16
            if col < len(FIXED):
                texts = [self.model.data(self.model.index(r, col)) or "" for r in rows]
                if FIXED[col] == "verdict":  # verdicts come later: room for their labels now
                    texts += verdict_labels()
                width = max(width, max((fm.horizontalAdvance(str(t)) for t in texts), default=0) + 12)
                width = min(width, COLUMN_MAX.get(FIXED[col], 120))
            else:
                width = min(max(width, 48), 130)
            header.resizeSection(col, width)

    def _refresh_presets(self) -> None:
        current = self.presets.currentText()
        self._filters = presets_for(self._kind, self.model.filter_columns())
        self.presets.blockSignals(True)
        self.presets.clear()
        self.presets.addItems([f.label for f in self._filters])
        idx = self.presets.findText(current)
        self.presets.setCurrentIndex(max(idx, 0))
        self.presets.blockSignals(False)
        self._quietly(lambda: self.proxy.set_filter(self._filters[max(idx, 0)]))

    def _preset_chosen(self, i: int) -> None:
        if 0 <= i < len(self._filters):
            self.expression.clear()
            self._set_filter(self._filters[i])

    def _set_filter(self, f: Filter) -> None:
        """A filter the user chose: exactly its matches are listed; the sample shown stays."""
        self.proxy.pinned = None
        self._quietly(lambda: self.proxy.set_filter(f))
        self._update_count()

    def set_expression(self, text: str) -> bool:
        """Apply a typed filter expression; an unreadable one is reported and not applied: the
        list keeps the filter it had, and the field says so (red, with the reason)."""
        try:
            f = Expression(text)
        except MasklensError as exc:
            return self._not_applied(str(exc))
        missing = f.bind(self.model.filter_columns())
        if missing:
            return self._not_applied(f"no column named {', '.join(missing)} (see the table's headers)")
        self.expression.setStyleSheet("")
        self.expression.setToolTip("")
        if self.expression.text().strip() != text.strip():
            self.expression.blockSignals(True)
            self.expression.setText(text)
            self.expression.blockSignals(False)
        self._set_filter(f)
        return True

    def _not_applied(self, why: str) -> bool:
        kept = self.proxy.filter.label or "all samples"
        self.expression.setStyleSheet("QLineEdit { border: 2px solid #D55E00; }")
        self.expression.setToolTip(f"not applied: {why}; the list still shows: {kept}")
        self.message.emit(f"filter not applied: {why} — still showing: {kept}")
        return False

    def _expression_entered(self) -> None:
        text = self.expression.text().strip()
        if text:
            self.set_expression(text)
        else:
            self.expression.setStyleSheet("")
            self.expression.setToolTip("")
            self._preset_chosen(self.presets.currentIndex())

    def _search_changed(self, text: str) -> None:
        self.proxy.pinned = None
        self._quietly(lambda: self.proxy.set_search(text))

    def _update_count(self, *_: Any) -> None:
        shown = self.proxy.rowCount() - (1 if self.current_outside() else 0)
        self.count.setText(f"{shown} / {self.model.rowCount()}")
        self.count.setToolTip(OUTSIDE_TIP if self.current_outside() else "samples matching the filter / all")

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
        self._update_count()

    def _quietly(self, change: Any) -> None:
        """Run ``change`` (a re-filter) without letting the table's selection pick another sample:
        the sample shown changes only when the user moves."""
        self._keep_current = True
        try:
            change()
            # the table's current row is the sample shown, or none when the filter hides it
            cur = getattr(self, "_current_row", None)
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
        if current.isValid() and not getattr(self, "_keep_current", False):
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
            return rows[cur.row() + 1] if cur.row() + 1 < len(rows) else None
        later = [r for r in rows if r > source_row]
        return min(later) if later else None

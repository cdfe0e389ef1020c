"""The sample browser's table: samples × per-sample metrics (a Qt table model), the flattened
rows it shows and the column helpers the readout panel shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from masklens.core.schema import Sample
from masklens.core.scoring.records import Records
from masklens.gui.browser.bulk import BulkColumns
from masklens.gui.browser.filters import Row, flatten
from masklens.gui.browser.lookup import KeyReader, RowValues
from masklens.gui.browser.row_proxy import RowPlan
from masklens.gui.window.disposal import release_later

#: ``verdict``: the reviewer's own verdicts (the Review dock's name); ``others``: the other
#: reviewers' ("ben: Fine"), apart, so that "unreviewed" and N mean the same samples
FIXED = ("#", "sample", "group", "prompts", "verdict", "others")
MAX_METRIC_COLUMNS = 60
#: the widest a fixed column starts (pixels); the user may widen it
COLUMN_MAX = {"#": 44, "sample": 130, "group": 70, "prompts": 120, "verdict": 100, "others": 120}
#: what the verdict columns' headers say when pointed at
FIXED_TIPS = {"verdict": "your verdicts on the sample (the reviewer named in the Review dock)",
              "others": "the other reviewers' verdicts on the sample (reviewer: verdict)"}


def verdict_labels() -> list[str]:
    """The reviewer's verdict labels (none when the review module is absent)."""
    try:
        from masklens.core.review.verdict_types import VERDICT_TYPES
    except ImportError:
        return []
    return [vt.label for vt in VERDICT_TYPES.values()]
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
_DISPLAY, _ALIGN = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
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


def same_record(a: Any, b: Any) -> bool:
    """Whether two records are equal (False when they cannot say, e.g. arrays inside)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _same(a: Any, b: Any) -> bool:
    """Whether two cell values read the same (NaN as NaN; 1 and True told apart)."""
    return a is b or (type(a) is type(b) and (a == b or a != a and b != b))


def metric_columns(readouts: Sequence[dict[str, Any]]) -> list[str]:
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


class SampleTableModel(BulkColumns, QAbstractTableModel):
    """Rows are samples; metric columns come from the flattened readout records."""

    FIXED_COLUMNS = len(FIXED)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._bulk = {}
        self.samples: list[Sample] = []
        self.readouts: Sequence[dict[str, Any]] = []
        self._flat: dict[int, dict[str, Any]] = {}  # flattened lazily: only rows that are looked at
        self.columns: list[str] = []
        self.verdicts: dict[str, str] = {}  # sample id → this reviewer's verdict keys
        self.others: dict[str, str] = {}  # sample id → the other reviewers' ("ben: fine; eve: gt_wrong")
        self.help: dict[str, str] = {}
        self._prompt_text: dict[int, str] = {}
        #: a readout key → the header it is shown under (names told apart, e.g. CAFE's TA_FN)
        self.labels: dict[str, str] = {}
        self._columns_key: Any = None  # what the current columns were read for (set_readouts)
        self._reader = KeyReader()  # metric values straight from the records
        self.outside_row: int | None = None  # the current sample, kept although the filter drops it
        #: a verdict key ("gt_wrong") → the words shown ("Ground truth wrong"): set_verdict_labels
        self.verdict_words: dict[str, str] = {}

    def set_samples(self, samples: list[Sample], help_: dict[str, str] | None = None) -> None:
        self.beginResetModel()
        self.samples, self.readouts, self._flat, self.columns = samples, [], {}, []
        self._columns_key = None
        self.help = dict(help_ or {})
        self._prompt_text = {}
        self.forget(samples=True)
        self.endResetModel()

    def set_readouts(self, readouts: Sequence[dict[str, Any]] | None,
                     flat: dict[int, dict[str, Any]] | None = None, columns: list[str] | None = None,
                     key: Any = None, shown: Sequence[int] | None = None) -> None:
        """New readouts: same columns → dataChanged only (cheap); new columns → reset.
        ``flat`` / ``columns``: their flattened records and metric columns when already computed
        (by a worker). ``key``: what the columns depend on (benchmark and prediction set): the
        same key as last time keeps the columns (a slider step) instead of reading them again.
        The previous readouts are let go off this thread (100,000 dicts). ``shown``: the source
        rows on screen; with the same columns, only those of their cells whose values changed
        are announced (a slider step repaints what moved, not the whole list)."""
        readouts = readouts if isinstance(readouts, list | Records) else list(readouts or [])
        if columns is None:
            same = key is not None and key == self._columns_key and len(readouts) == len(self.readouts)
            columns = self.columns if same else metric_columns(readouts)
        self._columns_key = key
        same = columns == self.columns and len(readouts) == len(self.readouts)
        n = len(self.readouts)
        before = {r: self.readouts[r] for r in shown if 0 <= r < n} if same and shown is not None else None
        self.forget()
        release_later(self.readouts, self._flat)
        if same:
            self.readouts, self._flat = readouts, flat if flat is not None else {}
            if not (self.readouts and self.columns):
                return
            if before is None:
                self.dataChanged.emit(self.index(0, len(FIXED)),
                                      self.index(len(readouts) - 1, self.columnCount() - 1))
                return
            get, keys = self._reader.get, self.columns
            for row, old in before.items():
                new = self.readouts[row]
                if new is old or same_record(new, old):  # the whole record (one C comparison)
                    continue
                moved = [c for c, k in enumerate(keys) if not _same(get(old, k), get(new, k))]
                if moved:
                    self.dataChanged.emit(self.index(row, len(FIXED) + moved[0]),
                                          self.index(row, len(FIXED) + moved[-1]))
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

    def verdict_label(self, key: str) -> str:
        """The words shown for a verdict key (the key itself when none were given)."""
        return self.verdict_words.get(key, key)

    def set_verdict_labels(self, words: dict[str, str]) -> None:
        """Verdict key → the words the verdict column shows."""
        self.verdict_words = dict(words)

    def set_verdicts(self, verdicts: dict[str, str], others: dict[str, str] | None = None) -> None:
        """Sample id → this reviewer's verdict keys, and (``others``, when given) → the other
        reviewers' (:func:`masklens.core.review.verdicts.whose_verdicts`)."""
        others = self.others if others is None else others
        if verdicts == self.verdicts and others == self.others:
            return
        self.verdicts, self.others = verdicts, others
        self.forget()
        if self.samples:
            first, last = FIXED.index("verdict"), FIXED.index("others")
            self.dataChanged.emit(self.index(0, first), self.index(len(self.samples) - 1, last))

    def others_text(self, sample_id: str) -> str:
        """The other reviewers' verdicts on a sample in words: ``ben: Fine; eve: Ground truth wrong``."""
        text = self.others.get(sample_id, "")
        if not text:
            return ""
        parts = []
        for part in text.split("; "):
            who, _, keys = part.partition(": ")
            parts.append(f"{who}: " + ", ".join(self.verdict_label(k) for k in keys.split(", ")))
        return "; ".join(parts)

    def filter_columns(self) -> list[str]:
        """Keys a filter expression may use: sample, group, verdict, others and the metric columns."""
        return ["sample", "group", "verdict", "others", *self.columns]

    def column_named(self, name: str | None, columns: list[str] | None = None) -> int:
        """The column (in ``columns``, by default the table's) whose header reads ``name``; -1."""
        if name is None:
            return -1
        if name in FIXED:
            return FIXED.index(name)
        cols = self.columns if columns is None else columns
        for i, key in enumerate(cols):
            if self.labels.get(key, key) == name:
                return len(FIXED) + i
        return -1

    def row_of(self, i: int) -> Row:
        s = self.samples[i]
        verdict = self.verdicts.get(s.id)
        fixed = {"sample": s.id, "group": s.group, "verdict": verdict or "", "others": self.others.get(s.id, "")}
        return Row(s, self._values(i, fixed), verdict)

    def _values(self, i: int, fixed: dict[str, Any]) -> Any:
        """Row ``i``'s filter values: its keys are read from its record on demand."""
        return RowValues(fixed, self.readouts[i] if i < len(self.readouts) else None, self._reader,
                         self._flat.get(i))

    def _metric(self, row: int, key: str) -> Any:
        """Row ``row``'s value of metric ``key``, read without flattening the whole record."""
        flat = self._flat.get(row)
        if flat is not None:
            return flat.get(key)
        return self._reader.get(self.readouts[row], key) if row < len(self.readouts) else None

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
        if col == 5:
            return self.others_text(s.id)
        k = col - len(FIXED)
        return self._metric(row, self.columns[k]) if k < len(self.columns) else None

    # ------------------------------------------------------------ Qt model API
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.samples)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(FIXED) + len(self.columns)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return self.cell(index.row(), index.column(), role) if index.isValid() else None

    def cell(self, row: int, col: int, role: int) -> Any:
        """What :meth:`data` answers for (row, col), without a QModelIndex (the proxy asks)."""
        if role == _DISPLAY:
            return _fmt(self.value(row, col))
        if role == SORT_ROLE:
            v = self.value(row, col)
            if isinstance(v, bool):
                return float(v)
            return v if isinstance(v, (int, float)) else (float("-inf") if v is None else str(v))
        if role == _ALIGN:
            return _RIGHT if col >= len(FIXED) else None
        if row == self.outside_row:
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
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < self.columnCount():
            return None
        name = FIXED[section] if section < len(FIXED) else self.columns[section - len(FIXED)]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.labels.get(name, name)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = FIXED_TIPS.get(name) if section < len(FIXED) else metric_tooltip(name, self.help)
            shown = self.labels.get(name, name)
            return f"{shown} (key {name}) — {tip}" if shown != name and tip else tip
        return None


class RowSnapshot(BulkColumns):
    """The table's rows with other readouts, without Qt: what a worker plans rows from (the
    model's own value / row_of / column logic, over a copy of what it reads)."""

    FIXED_COLUMNS = len(FIXED)
    value = SampleTableModel.value
    row_of = SampleTableModel.row_of
    _values = SampleTableModel._values
    _metric = SampleTableModel._metric
    verdict_label = SampleTableModel.verdict_label
    others_text = SampleTableModel.others_text

    def __init__(self, model: SampleTableModel, readouts: list[dict[str, Any]]) -> None:
        self.samples, self.readouts = model.samples, readouts
        self.verdicts, self.verdict_words = dict(model.verdicts), dict(model.verdict_words)
        self.others = dict(model.others)
        self.columns = metric_columns(readouts)
        self._prompt_text = dict(model._prompt_text)
        self._flat: dict[int, dict[str, Any]] = {}
        self._reader = KeyReader()
        # what does not change with readouts (ids, their sort keys, search texts) is shared
        self._bulk = {k: v for k, v in model._bulk.items() if k[0] == "fixed"}

    def with_readouts(self, readouts: list[dict[str, Any]], columns: list[str] | None = None) -> RowSnapshot:
        """The same table with ``readouts`` (``columns``: their metric columns when known)."""
        other = RowSnapshot.__new__(RowSnapshot)
        other.__dict__.update(self.__dict__)
        other.readouts, other._flat = readouts, {}
        other.columns = metric_columns(readouts) if columns is None else columns
        other._bulk = dict(self._bulk)
        other.forget()
        return other

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

"""Per-entry SA-Co/Gold records at any score threshold without matching again.

Everything an entry's record holds at threshold t (accepted count, oracle annotator, IL
class, TP/FP/FN, local F1, each instance's accepted flag and best IoU) depends on t only
through the entry's row in its :class:`~masklens.core.kinds.common.cgf1.tables.EntryTable` (how
many score levels pass). :class:`EntryRecords` therefore builds a record once per (entry,
row) reached — vectorised over rows for the numbers — and re-scoring at a new t is a
lookup: one ``rows_at`` over the stacked levels, handed out as a
:class:`~masklens.core.scoring.records.Records` over the memoised records of those rows: a record is
built (once per row, in a batch when all are read) and copied when a caller first reads it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, overload

import numpy as np

from masklens.core.kinds.common.cgf1.tables import INDEX_50, INDEX_75, EntryStack, local_f1_bulk
from masklens.core.kinds.pcs.stage1 import PcsOverlaps
from masklens.core.schema import Sample
from masklens.core.scoring.records import MemoRows, Records

_IL = ("TN", "FP", "FN", "TP")  # index: 2 * has_gt + has_accepted

#: the records' integer fields from the columns (accepted, instances, oracle, TP@0.5, TP@0.75)
_NUMBERS: dict[str, Any] = {
    "n_accepted": lambda ndt, ngt, best, tp50, tp75: ndt,
    "n_gt": lambda ndt, ngt, best, tp50, tp75: ngt,
    "annotator": lambda ndt, ngt, best, tp50, tp75: best,
    "TP@0.5": lambda ndt, ngt, best, tp50, tp75: tp50,
    "TP@0.75": lambda ndt, ngt, best, tp50, tp75: tp75,
    "FP@0.5": lambda ndt, ngt, best, tp50, tp75: ndt - tp50,
    "FN@0.5": lambda ndt, ngt, best, tp50, tp75: ngt - tp50,
}


class EntryFields(Sequence[Mapping[str, Any]]):
    """Each entry's leading, threshold-free record fields (the entry and its predictions'
    count and best score), built when read: the window reads only the entries it shows."""

    def __init__(self, samples: Sequence[Sample], overlaps: Sequence[PcsOverlaps]) -> None:
        self._samples, self._overlaps = samples, overlaps

    def __len__(self) -> int:
        return len(self._samples)

    @overload
    def __getitem__(self, e: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, e: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, e: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(e, slice):
            return [self[i] for i in range(*e.indices(len(self)))]
        sample, o = self._samples[e], self._overlaps[e]
        prompt = sample.prompts[0]
        return {"id": sample.id, "image_id": prompt.source_id, "text": prompt.text,
                "exhaustive": o.exhaustive, "missing": o.missing, "n_pred": len(o.scores),
                "max_score": max(o.scores, default=0.0)}  # fmt: skip

    def column(self, key: str, entries: list[int]) -> list[Any] | None:
        """Field ``key`` of each of ``entries`` (None: not one of these fields)."""
        samples, overlaps = self._samples, self._overlaps
        if key == "id":
            return [samples[e].id for e in entries]
        if key == "image_id":
            return [samples[e].prompts[0].source_id for e in entries]
        if key == "text":
            return [samples[e].prompts[0].text for e in entries]
        if key in ("exhaustive", "missing"):
            return [getattr(overlaps[e], key) for e in entries]
        if key == "n_pred":
            return [len(overlaps[e].scores) for e in entries]
        if key == "max_score":
            return [max(overlaps[e].scores, default=0.0) for e in entries]
        return None


class EntryRecords:
    """Records of every stacked entry (same fields and values as
    :func:`~masklens.core.kinds.common.cgf1.metrics.entry_readout` plus the instances), per flat row."""

    def __init__(
        self,
        stack: EntryStack,
        static: Sequence[Mapping[str, Any]],
        scores: Sequence[Sequence[float]],
        best_ious: Sequence[Sequence[Sequence[float]]],
    ) -> None:
        """``static[e]``: the record's leading, threshold-free fields; ``scores[e]``: the
        entry's prediction scores (file order); ``best_ious[e][a]``: each prediction's best
        IoU with annotator ``a``'s instances."""
        self.stack = stack
        self._static, self._scores, self._ious = static, scores, best_ious
        best, tp, ngt = stack.oracle_rows()
        ndt = stack.ndt
        il = 2 * (ngt > 0) + (ndt > 0)
        f1 = local_f1_bulk(tp, ndt[:, None], ngt[:, None]).mean(axis=1)  # row means, as per entry
        #: lowest accepted level per row (NaN on row 0: nothing accepted)
        lows = np.full(ndt.size, np.nan)
        if stack.level_values.size:
            sizes = np.diff(np.r_[stack.offsets, ndt.size]) - 1  # levels per entry
            order = np.lexsort((stack.level_values, stack.level_owner))  # ascending per entry
            owner, values = stack.level_owner[order], stack.level_values[order]
            rank = np.arange(values.size) - (np.cumsum(sizes) - sizes)[owner]
            # row offset + k accepts the k highest levels: its lowest is the level of rank L - k
            lows[stack.offsets[owner] + sizes[owner] - rank] = values
        #: per flat row, threshold-free (numpy columns: Python objects only for rows built)
        self._cols = (ndt, ngt, best, il, tp[:, INDEX_50], tp[:, INDEX_75], f1, stack.row_entries(), lows)
        self._memo = np.empty(ndt.size, dtype=object)  # a row's record once built
        self._built = np.zeros(ndt.size, dtype=bool)

    def _build(self, rows: np.ndarray) -> None:
        """Build the records of ``rows`` (distinct; each once)."""
        static, scores, best_ious = self._static, self._scores, self._ious
        built: list[dict[str, Any]] = []
        cols = [c[rows].tolist() for c in self._cols]
        for ndt, ngt, best, il, tp50, tp75, f1, e, low in zip(*cols, strict=True):
            built.append({
                **static[e],
                "n_accepted": ndt, "n_gt": ngt, "annotator": best, "IL": _IL[il],
                "TP@0.5": tp50, "TP@0.75": tp75, "FP@0.5": ndt - tp50, "FN@0.5": ngt - tp50,
                "local_F1": None if il == 0 else f1,
                "instances": [{"score": s, "iou": v, "accepted": low == low and s >= low}
                              for s, v in zip(scores[e], best_ious[e][best], strict=True)],
            })  # fmt: skip
        records = np.empty(len(built), dtype=object)
        records[:] = built
        self._memo[rows] = records
        self._built[rows] = True

    def column(self, rows: np.ndarray, key: str) -> list[Any] | None:
        """The records' top-level ``key`` at flat ``rows`` from the columns, as :meth:`_build`
        would write it, without building a record (None for ``instances``: only records hold it)."""
        if rows.size == 0:
            return []
        ndt, ngt, best, il, tp50, tp75, f1, entries, _ = self._cols
        if key in _NUMBERS:
            return _NUMBERS[key](ndt[rows], ngt[rows], best[rows], tp50[rows], tp75[rows]).tolist()
        if key == "IL":
            return [_IL[i] for i in il[rows].tolist()]
        if key == "local_F1":
            return [None if i == 0 else v for i, v in zip(il[rows].tolist(), f1[rows].tolist(), strict=True)]
        static = self._static
        if isinstance(static, EntryFields):
            return static.column(key, entries[rows].tolist())
        if static and key in static[0]:
            return [static[e].get(key) for e in entries[rows].tolist()]
        return None

    def sort_column(self, rows: np.ndarray, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        """How the records' numeric ``key`` at flat ``rows`` sorts, as arrays: (1 where the
        value is a number, 0 where it is None; the value, 0.0 where None). None for a key that
        is not one of the numbers kept as columns."""
        ndt, ngt, best, il, tp50, tp75, f1, _, _ = self._cols
        if key in _NUMBERS:
            value = _NUMBERS[key](ndt[rows], ngt[rows], best[rows], tp50[rows], tp75[rows]).astype(float)
            return np.ones(value.size, dtype=np.int8), value
        if key == "local_F1":
            defined = il[rows] != 0
            return defined.astype(np.int8), np.where(defined, f1[rows], 0.0)
        return None

    def at(self, t: float) -> Records:
        """Every entry's record at score threshold ``t``: a fresh top-level dict each when
        read (:class:`~masklens.core.scoring.records.Records`, as CAFE's records), whose ``instances``
        list is shared with later calls that reach the same row — read it, do not change it
        in place."""
        rows = self.stack.rows_at(t)
        return Records(MemoRows(self._memo, self._built, rows, self._build, self.column, self.sort_column))

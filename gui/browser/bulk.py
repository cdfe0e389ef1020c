"""Whole columns of the sample table, read once per readouts: what filters and sorts use.

Filtering or sorting 20,000 rows one row at a time costs a few Python calls per row and per
key (~1 s on the GUI thread). :class:`BulkColumns` reads a key for every row in one pass
(list comprehensions over the records, each key's path found once) and keeps it until the
readouts or verdicts change; filters judge whole columns (:meth:`Filter.select`) and sorts
order by precomputed keys. Sample ids, groups and prompt texts do not change with readouts:
their columns (and natural-order sort keys) are kept for the benchmark.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, overload

import numpy as np

from masklens.core.scoring.records import Records
from masklens.gui.browser.lookup import KeyReader

_DIGITS = re.compile(r"(\d+)")
_NUMBER = (int, float)


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """"img2" before "img10": runs of digits compare as numbers, the rest as lower-case text."""
    return tuple((0, int(part)) if i % 2 else (1, part.lower())
                 for i, part in enumerate(_DIGITS.split(text)) if part or i == 0)


def sort_key(value: Any) -> tuple[int, Any]:
    """Missing values first, then numbers, then text in natural order (1, 2, 10, not 1, 10, 2;
    booleans as numbers)."""
    if isinstance(value, bool):
        value = float(value)
    if value is None:
        return (0, 0.0)
    return (1, value) if isinstance(value, _NUMBER) else (2, natural_key(str(value)))


def sort_keys(values: Sequence[Any]) -> Sequence[Any]:
    """Sort keys for a column: the values themselves when all are numbers (the common case);
    numbers and missing values as :class:`NumericKeys`; else one :func:`sort_key` each."""
    if all(type(v) is float or type(v) is int for v in values):
        return values
    numeric = NumericKeys.of(values)
    return numeric if numeric is not None else [sort_key(v) for v in values]


_NUMBER_OR_NONE = frozenset((float, int, bool, type(None)))


def orders_as_float(value: np.ndarray) -> bool:
    """Whether the numbers of ``value`` order as the values they stand for: no NaN (which orders
    with nothing) and no integer past a float's precision (2**53, where neighbours merge)."""
    return not np.isnan(value).any() and not (value.size and np.abs(value).max() >= 2.0**53)


class NumericKeys(Sequence[tuple[int, float]]):
    """The :func:`sort_key` of a column of numbers and missing values (a metric that is None
    where it is undefined, such as a local F1), held as two arrays: ``rank`` (0 missing,
    1 number) and ``value``. Built in two passes over the column instead of a tuple per row
    (a sort of SA-Co/Gold's 168,202 entries: ~25 ms instead of ~120)."""

    __slots__ = ("rank", "value")

    def __init__(self, rank: np.ndarray, value: np.ndarray) -> None:
        self.rank, self.value = rank, value

    @classmethod
    def of(cls, values: Sequence[Any]) -> NumericKeys | None:
        """The keys of ``values``; None unless every one is a number or None and each number
        orders as its float does (no NaN, no integer past a float's precision)."""
        if not values or not all(type(v) in _NUMBER_OR_NONE for v in values):
            return None
        n = len(values)
        rank = np.fromiter((v is not None for v in values), dtype=np.int8, count=n)
        value = np.fromiter((0.0 if v is None else v for v in values), dtype=float, count=n)
        if not orders_as_float(value):
            return None
        return cls(rank, value)

    def __len__(self) -> int:
        return int(self.value.size)

    @overload
    def __getitem__(self, index: int) -> tuple[int, float]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[int, float]]: ...

    def __getitem__(self, index: int | slice) -> tuple[int, float] | list[tuple[int, float]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return (int(self.rank[index]), float(self.value[index]))


def order_rows(rows: np.ndarray, keys: Sequence[Any], descending: bool,
               kept: dict[Any, Any] | None = None) -> np.ndarray:
    """``rows`` (an integer array) sorted by ``keys[row]`` (a column of :func:`sort_keys`),
    equal keys in their order (as ``list.sort``, also reversed), in one stable numpy sort over
    the keys' ranks (a sort of 20,000 rows: ~2 ms instead of ~20). The ranks are made once
    per column (in ``kept``, a table's column store: until its keys change); keys with NaN
    sort as Python sorts them."""
    ranked = _ranked(keys, kept)
    if ranked is None or not rows.size:
        return np.array(sorted(rows.tolist(), key=keys.__getitem__, reverse=descending), dtype=np.intp)
    rank, value = ranked
    r, v = rank[rows], value[rows]
    if r.size and r.min() == r.max():
        key = v  # one rank: the values alone
    elif r.min() >= 0 and r.max() <= 1 and not v[r == 0].any():
        key = np.where(r == 1, v, -np.inf)  # missing (0, 0.0) before every number (finite)
    else:
        order = np.lexsort((-v, -r) if descending else (v, r))  # lexsort is stable
        return rows[order]
    return rows[np.argsort(-key if descending else key, kind="stable")]


def _ranked(keys: Sequence[Any], kept: dict[Any, Any] | None) -> tuple[np.ndarray, np.ndarray] | None:
    if isinstance(keys, range) or not keys:
        return None
    if kept is not None:
        hit = kept.get(("ranked", id(keys)))
        if hit is not None and hit[0] is keys:
            return hit[1]
    ranked = _numeric_keys(keys)
    if kept is not None:
        kept[("ranked", id(keys))] = (keys, ranked)
    return ranked


def _numeric_keys(keys: Sequence[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """(rank, value) arrays ordering as the keys: numbers, or (0 = missing / 1 = number, value)
    pairs, as they are; other keys (text) by their places in Python's sort of them; None when
    a key is NaN (Python's order for those) or an integer past a float's precision."""
    if isinstance(keys, NumericKeys):
        return keys.rank, keys.value
    n = len(keys)
    try:
        if isinstance(keys[0], tuple):
            rank = np.fromiter((k[0] for k in keys), dtype=np.int8, count=n)
            if rank.max() <= 1:
                value = np.fromiter((k[1] for k in keys), dtype=float, count=n)
            elif any(k[0] == 1 and k[1] != k[1] for k in keys):
                return None
            else:  # text among them: each key's place among the distinct keys (ties share one)
                order = sorted(range(n), key=keys.__getitem__)
                value = np.empty(n)
                place, last = -1, object()
                for i in order:
                    if keys[i] != last:
                        place, last = place + 1, keys[i]
                    value[i] = place
                rank = np.zeros(n, dtype=np.int8)
        else:
            value = np.asarray(keys, dtype=float)
            rank = np.ones(value.size, dtype=np.int8)
    except (TypeError, ValueError):
        return None
    if value.ndim != 1 or not orders_as_float(value):
        return None
    return rank, value


def read_column(reader: KeyReader, records: Sequence[Mapping[str, Any]], key: str) -> list[Any]:
    """Every record's value of flattened ``key`` (``flatten(record).get(key)``)."""
    get = reader.get
    if "." not in key and "[" not in key:  # a top-level value: one dict lookup a row
        out = [r.get(key) for r in records]
        if not any(v is not None and not isinstance(v, (int, float, str, bool)) for v in out):
            return out
    return [get(r, key) for r in records]


class BulkColumns:
    """Column reads for a table of ``samples`` × ``readouts`` (with ``verdicts``,
    ``verdict_label``, ``columns``, a ``_reader`` and ``_bulk``, the columns kept: {} at first);
    call :meth:`forget` when they change."""

    samples: list[Any]
    readouts: Sequence[Mapping[str, Any]]
    verdicts: dict[str, str]
    others: dict[str, str]
    columns: list[str]
    _reader: KeyReader
    _bulk: dict[Any, Any]
    FIXED_COLUMNS = 0  # how many columns come before the metric ones (the table says)

    def forget(self, *, samples: bool = False) -> None:
        """Drop the kept columns (new readouts or verdicts; ``samples``: a new benchmark)."""
        self._bulk = {} if samples else {k: v for k, v in self._bulk.items() if k[0] == "fixed"}

    def _kept(self, key: Any, make: Any) -> Any:
        bulk = self._bulk
        got = bulk.get(key)
        if got is None:
            got = bulk[key] = make()
        return got

    def records(self) -> Sequence[Mapping[str, Any]]:
        """The readouts as a plain list, to read (a :class:`Records` gives its current values
        without copying them: copying 20,000 on the first filter after a re-score took ~0.3 s)."""
        def plain() -> Sequence[Mapping[str, Any]]:
            if isinstance(self.readouts, list):
                return self.readouts
            if isinstance(self.readouts, Records):
                return self.readouts.view()
            return list(self.readouts)

        return self._kept(("readouts",), plain)

    def key_column(self, key: str) -> list[Any]:
        """Every row's value of a filter key: sample, group, verdict or a flattened readout key."""
        n = len(self.samples)
        if len(self.readouts) == n:
            values = self._kept(("key", key), lambda: self._readout_column(key))
        else:
            values = [None] * n
        if key in ("sample", "group", "verdict", "others"):  # the record's own key wins, as in row_of
            fixed = self._fixed_column(key)
            values = [f if v is None else v for v, f in zip(values, fixed, strict=True)]
        return values

    def _readout_column(self, key: str) -> list[Any]:
        """Every record's flattened ``key``: a top-level key straight from the kind's columns
        where it has them (no record built: SA-Co/Gold at a new t), else read off the records."""
        readouts = self.readouts
        if isinstance(readouts, Records) and "." not in key and "[" not in key:
            values = readouts.column(key)
            if values is not None:
                return values
        return read_column(self._reader, self.records(), key)

    def _fixed_column(self, key: str) -> list[Any]:
        if key == "verdict":
            return self._kept(("verdict",), lambda: [self.verdicts.get(s.id) or "" for s in self.samples])
        if key == "others":
            return self._kept(("others",), lambda: [self.others.get(s.id) or "" for s in self.samples])
        attr = "id" if key == "sample" else "group"
        return self._kept(("fixed", key), lambda: [getattr(s, attr) for s in self.samples])

    def haystacks(self) -> list[str]:
        """Each row's id, group and prompts in lower case: what the search box looks in."""
        return self._kept(("fixed", "hay"), lambda: [
            f"{s.id} {s.group or ''} {' | '.join(p.text for p in s.prompts)}".lower() for s in self.samples])

    def sort_column(self, col: int) -> Sequence[Any]:
        """Sort keys of every row for table column ``col``."""
        fixed = self.FIXED_COLUMNS
        if col == 0:
            return range(len(self.samples))
        if col == 1:
            return self._kept(("fixed", "id-keys"), lambda: sort_keys([s.id for s in self.samples]))
        if col == 2:
            return self._kept(("fixed", "group-keys"), lambda: sort_keys([s.group or "" for s in self.samples]))
        if col < fixed:
            value = self.value  # type: ignore[attr-defined]  # the table's
            return self._kept(("sort", col), lambda: sort_keys([value(r, col) for r in range(len(self.samples))]))
        key = self.columns[col - fixed] if col - fixed < len(self.columns) else None
        if key is None:
            return range(len(self.samples))
        return self._kept(("sort", key), lambda: self._readout_sort_keys(key))

    def _readout_sort_keys(self, key: str) -> Sequence[Any]:
        """Sort keys of a metric column: straight from the kind's numeric columns where it has
        them (no value list built: SA-Co/Gold at a new t), else from the column's values."""
        readouts = self.readouts
        if isinstance(readouts, Records) and len(readouts) == len(self.samples) and "." not in key:
            arrays = readouts.sort_column(key)
            if arrays is not None:
                rank, value = arrays
                if orders_as_float(value):
                    return NumericKeys(rank, value)
        return sort_keys(self.key_column(key))


def sampled_rows(n: int, k: int = 100) -> list[int]:
    """At most ~3 k of the row numbers ``0 … n - 1``: the first k, the last k and k evenly spaced."""
    if n <= 3 * k:
        return list(range(n))
    return sorted({*range(k), *range(n - k, n), *range(0, n, n // k)})

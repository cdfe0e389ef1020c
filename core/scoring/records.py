"""The per-sample records of one scoring result, copied only when they are read.

A kind that memoises its records (SA-Co/PCS per table row, CAFE per pair and class state)
used to hand every re-score a fresh copy of all of them: 100,000 ``dict`` copies at every
move of a slider, most never read. :class:`Records` holds the memoised records and copies
one the first time it is read, so re-scoring costs what its lookup costs, and the copy is
paid by whoever reads (once per record and result).

What callers may rely on (as with the plain list it replaces):

* each record is a ``dict`` this result owns: reading index ``i`` again gives the same dict,
  so a change to it stays there, and never reaches the kind's memo or another result;
* nested values (SA-Co's ``instances`` list) are shared with other results: read them, do not
  change them in place (as before);
* it is a read-only :class:`~collections.abc.Sequence` (``len``, indexing, slices — a plain
  list —, iteration — the first copies every record not read yet —, ``in``); it compares
  equal to a list of equal records; ``list(records)`` is a plain list of the owned dicts; it
  pickles (as the owned dicts); it is not JSON: a serialiser takes ``list(records)``
  (``ScoreResult.to_json`` does).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast, overload

import numpy as np

from masklens.core.runtime.gc_pause import gc_paused

Record = dict[str, Any]


class Records(Sequence[Record]):
    """A read-only sequence of records; the first read of each index copies its template."""

    __slots__ = ("_lock", "_own", "_templates", "_unowned")

    def __init__(self, templates: Sequence[Record] = (), owned: bool = False) -> None:
        """``templates``: the records (the kind's memo: never handed out, never changed here);
        ``owned``: they are already fresh dicts for this result alone (handed out as they are)."""
        self._templates = templates
        self._lock = threading.Lock()
        if owned:
            self._own: list[Record | None] | None = list(templates)
            self._templates = self._own  # type: ignore[assignment]  # not the caller's list
            self._unowned = 0
        else:
            self._own = None  # [None] * len once something is read
            self._unowned = len(templates)

    @classmethod
    def of(cls, records: Sequence[Mapping[str, Any]] | Records) -> Records:
        """``records`` as a :class:`Records`: itself, or a list of fresh dicts taken as owned
        (a kind's records are dicts; their types are its TypedDicts)."""
        if isinstance(records, Records):
            return records
        return cls(cast("Sequence[Record]", records), owned=True)

    # ------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._templates)

    @overload
    def __getitem__(self, index: int) -> Record: ...

    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...

    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        own = self._own if self._own is not None else self._start()
        rec = own[index]  # IndexError / TypeError as a list's
        return rec if rec is not None else self._copy(own, index)

    def _copy(self, own: list[Record | None], index: int) -> Record:
        with self._lock:  # two threads reading one index first get the same dict
            rec = own[index]
            if rec is None:
                rec = own[index] = self._templates[index].copy()
                self._unowned -= 1
        return rec

    def _start(self) -> list[Record | None]:
        with self._lock:
            if self._own is None:
                self._own = [None] * len(self._templates)
            return self._own

    def __iter__(self) -> Iterator[Record]:
        """Every record, in order; the first iteration copies all those not yet read in one
        pass (as one re-score used to), later ones cost what a list's does."""
        if self._unowned or self._own is None:
            self._own_all()
        return iter(self._own)  # type: ignore[arg-type]

    def _own_all(self) -> None:
        own = self._own if self._own is not None else self._start()
        with self._lock, gc_paused():  # many acyclic dicts (see masklens.core.runtime.gc_pause)
            missing = own.count(None)
            if missing == len(own):
                own[:] = map(dict.copy, self._templates)
            elif missing:
                own[:] = [r if r is not None else t.copy()
                          for r, t in zip(own, self._templates, strict=True)]
            self._unowned = 0

    def column(self, key: str) -> list[Any] | None:
        """Every record's top-level ``key`` (``record.get(key)``) without building or copying
        a record, where the kind's memo can say it from its own columns (SA-Co/Gold's numbers
        at a new t); records already read give their own value. None: only the records can say."""
        templates = self._templates
        if not isinstance(templates, MemoRows):
            return None
        values = templates.column(key)
        if values is None:
            return None
        own = self._own
        if own is not None and self._unowned < len(own):  # records read (perhaps changed): theirs
            values = [v if r is None else r.get(key) for r, v in zip(own, values, strict=True)]
        return values

    def sort_column(self, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        """How every record's top-level numeric ``key`` sorts, as two arrays from the kind's
        columns: (1 for a number, 0 for None; the value, 0.0 for None). None where the kind
        keeps no such column, or a record has been read (a caller may have changed it)."""
        templates = self._templates
        if not isinstance(templates, MemoRows) or self._own is not None and self._unowned < len(self._own):
            return None
        return templates.sort_column(key)

    def view(self) -> Sequence[Record]:
        """Every record's current value without copying any, to read only (a filter reading
        whole columns): iterating the records copies each one not read yet (~0.3 s at 20,000)."""
        return self._current()

    def _current(self) -> list[Record]:
        """Every record's current value without copying any (for comparing and printing)."""
        own = self._own
        if own is None:
            return list(self._templates)
        if not self._unowned:
            return own  # type: ignore[return-value]
        return [r if r is not None else t for r, t in zip(own, self._templates, strict=True)]

    # ------------------------------------------------------------ list-like behaviour
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Records):
            return self._current() == other._current()
        if isinstance(other, list):
            return self._current() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable records, as a list

    def __add__(self, other: Sequence[Record]) -> list[Record]:
        if not isinstance(other, list | Records):
            return NotImplemented
        return [*self, *other]

    def __radd__(self, other: Sequence[Record]) -> list[Record]:
        if not isinstance(other, list):
            return NotImplemented
        return [*other, *self]

    def __repr__(self) -> str:
        return repr(self._current())

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (list(self), True))

    def replaced(self, index: int, record: Record) -> Records:
        """A new sequence of these records with ``record`` at ``index`` (as ``list(self)`` with
        one item replaced, the records already read shared with this one, without copying the
        others now)."""
        own: list[Record | None] = list(self._own) if self._own is not None else [None] * len(self)
        own[index] = record
        # owned records are their own templates: the copy's list, never this one's (an owned
        # list holds every record, no None: mypy cannot tell)
        templates = cast("list[Record]", own) if self._templates is self._own else self._templates
        other = type(self)(templates)
        other._own, other._unowned = own, own.count(None)
        return other

    def release(self) -> list[Any]:
        """Empty this sequence and return the list that held its records (to free them
        elsewhere, a slice at a time: ``masklens.gui.window.disposal``; an iterator may still hold
        that list). Only for the sequence's last holder."""
        with self._lock:
            held = self._own if self._own is not None else []
            self._own, self._templates, self._unowned = [], (), 0
        return held


#: reading the records of a :class:`MemoRows` one by one in order builds the missing ones
#: a block of this many at a time (one batch: a scan costs a few batches, not one per record)
BLOCK = 256


class MemoRows(Sequence[Record]):
    """The templates of a :class:`Records` from a kind's memo: ``memo[keys[i]]``, built on
    first use. ``built[k]`` says whether ``memo[k]`` is; ``build(new)`` builds the memo's
    records at the (distinct) keys ``new`` and marks them built. Reading them all builds the
    missing ones in one batch; reading one next to the one read before (a scan, either way)
    builds those of its :data:`BLOCK`, reading one elsewhere (a sorted list's rows on screen,
    scattered over the records) builds that one alone. Never handed out to callers."""

    __slots__ = ("_build", "_built", "_column", "_keys", "_last", "_memo", "_sort_column")

    def __init__(self, memo: np.ndarray, built: np.ndarray, keys: np.ndarray,
                 build: Callable[[np.ndarray], None],
                 column: Callable[[np.ndarray, str], list[Any] | None] | None = None,
                 sort_column: Callable[[np.ndarray, str], tuple[np.ndarray, np.ndarray] | None] | None = None,
                 ) -> None:  # fmt: skip
        """``column(keys, name)``: the records' top-level ``name`` at the memo's ``keys``
        without building them (None where it cannot say); ``sort_column(keys, name)``: how a
        numeric one sorts, as arrays (:meth:`Records.sort_column`)."""
        self._memo, self._built, self._keys, self._build = memo, built, keys, build
        self._column, self._sort_column = column, sort_column
        self._last = -2  # the index read last (a read next to it builds its block)

    def column(self, name: str) -> list[Any] | None:
        """Every record's top-level ``name`` from the kind's columns (None: not known there)."""
        return None if self._column is None else self._column(self._keys, name)

    def sort_column(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """How every record's numeric ``name`` sorts, from the kind's columns (None: not known)."""
        return None if self._sort_column is None else self._sort_column(self._keys, name)

    def __len__(self) -> int:
        return len(self._keys)

    @overload
    def __getitem__(self, index: int) -> Record: ...

    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...

    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        if isinstance(index, slice):
            return self._gather(self._keys[index])
        key = self._keys[index]  # IndexError as a list's
        at = index % len(self._keys)
        if not self._built[key]:
            if abs(at - self._last) == 1:
                start = at // BLOCK * BLOCK
                self._ensure(self._keys[start : start + BLOCK])
            else:
                self._build(np.array([key]))
        self._last = at
        return self._memo[key]

    def __iter__(self) -> Iterator[Record]:
        return iter(self._gather(self._keys))

    def _gather(self, keys: np.ndarray) -> list[Record]:
        self._ensure(keys)
        return self._memo[keys].tolist()

    def _ensure(self, keys: np.ndarray) -> None:
        new = keys[~self._built[keys]]
        if new.size:
            self._build(np.unique(new))

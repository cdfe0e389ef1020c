"""A scorer's overlaps list, with a memo of the tables a kind derives from the whole list."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

#: a kind's per-sample overlaps type (what ``BenchmarkKind.sample_overlaps`` returns)
OverlapsT = TypeVar("OverlapsT")
T = TypeVar("T")


class Overlaps(Sequence[OverlapsT], Generic[OverlapsT]):
    """The threshold-free overlaps of a :class:`~masklens.core.scoring.contract.Scorer`'s
    samples (one per sample, in sample order) and a memo of values a kind derives from the
    whole list (CAFE's stacks, PCS's tables, R2SM's AP, OVS's confusion scores), so that
    re-scoring at new parameters does not derive them again.

    Thread-safe: a value is built once, under the list's lock, however many threads ask for
    it; replacing an entry (``overlaps[i] = …``, a slice, :meth:`extend`) empties the memo.
    Read-only otherwise; a slice reads as a plain list (without memo)."""

    __slots__ = ("_items", "_lock", "_memo")

    def __init__(self, items: Iterable[OverlapsT] = ()) -> None:
        self._items: list[OverlapsT] = list(items)
        self._memo: dict[Hashable, Any] = {}
        self._lock = threading.RLock()  # a builder may read another memoised value

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> OverlapsT: ...
    @overload
    def __getitem__(self, index: slice) -> list[OverlapsT]: ...
    def __getitem__(self, index: int | slice) -> OverlapsT | list[OverlapsT]:
        return self._items[index]

    def __iter__(self) -> Iterator[OverlapsT]:
        return iter(self._items)

    @overload
    def __setitem__(self, index: int, value: OverlapsT) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[OverlapsT]) -> None: ...
    def __setitem__(self, index: int | slice, value: Any) -> None:
        with self._lock:
            self._items[index] = value
            self._memo.clear()

    def extend(self, values: Iterable[OverlapsT]) -> None:
        with self._lock:
            self._items.extend(values)
            self._memo.clear()

    def __reduce__(self) -> tuple[type[Overlaps[OverlapsT]], tuple[list[OverlapsT]]]:
        """A copy or a pickle holds the entries and a memo of its own (empty)."""
        return (type(self), (list(self._items),))

    def __repr__(self) -> str:
        return f"Overlaps({len(self._items)} samples, {len(self._memo)} derived)"

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value memoised under ``key``, built by ``build()`` the first time it is asked
        for since the list last changed. ``key`` names what is derived (e.g. ``"cafe.stacks"``)."""
        with self._lock:
            try:
                return self._memo[key]
            except KeyError:
                value = self._memo[key] = build()
                return value


def derived(overlaps: Sequence[Any], key: Hashable, build: Callable[[], T]) -> T:
    """``build()`` memoised on ``overlaps`` when it is an :class:`Overlaps` (a scorer's list);
    built afresh for any other sequence (a subset, a caller's own list)."""
    if isinstance(overlaps, Overlaps):
        return overlaps.derived(key, build)
    return build()

"""Values derived from a whole overlaps list, remembered per list (for a kind's summaries)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import is_
from typing import Any, TypeVar

T = TypeVar("T")


class OverlapsCache:
    """Something derived from a whole overlaps list (stacks, AP, confusion scores), remembered
    for the last ``size`` lists seen. Lists match by the identity of their elements (overlaps
    never change; a replaced sample is a new object, so it rebuilds), so re-scoring at new
    parameters does not derive it again. For :meth:`BenchmarkKind.summarize` and friends."""

    def __init__(self, size: int = 4, *, identity_eq: bool = False) -> None:
        """``identity_eq``: the overlaps compare equal only when identical (object's own
        ``__eq__``, e.g. a dataclass with ``eq=False``), so list equality — a C loop that
        takes ``is`` first — is the identity check (much faster on 100k entries)."""
        self._size = size
        self._identity_eq = identity_eq
        self._entries: list[tuple[list[Any], Any]] = []

    def _same(self, seen: list[Any], overlaps: Sequence[Any]) -> bool:
        if len(seen) != len(overlaps):
            return False
        if self._identity_eq and isinstance(overlaps, list):
            return seen == overlaps
        return all(map(is_, overlaps, seen))

    def get(self, overlaps: Sequence[Any], build: Callable[[], T]) -> T:
        for i, (seen, value) in enumerate(self._entries):
            if self._same(seen, overlaps):
                self._entries.insert(0, self._entries.pop(i))
                return value
        value = build()
        self._entries = [(list(overlaps), value), *self._entries[: self._size - 1]]
        return value

"""One flattened key read straight from a nested readout record, without flattening it.

The browser names a cell by its flattened key (``negative.class``, ``queries[1].IoU``,
``thresholds.0.5.err``; see :func:`~masklens.gui.browser.filters.flatten`). Filtering or sorting
every row by one or two keys used to flatten every record (~30 µs each, again after every
slider step); a :class:`KeyReader` finds each key's path once (dict keys may hold dots) and
then walks it per record, giving what the record's flattening would hold under that key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from masklens.gui.browser.filters import flatten

_INDEX = re.compile(r"\[(\d+)\]")
_SCALAR = (int, float, str, bool)
#: flatten() keeps the first 8 items of a list and 4 levels of nesting
MAX_ITEMS, MAX_DEPTH = 8, 4

Path = tuple[Any, ...]


def find_path(record: Mapping[str, Any], key: str) -> Path | None:
    """The path (dict keys and list indices) under which ``record`` holds the scalar that its
    flattening calls ``key``; None when it holds none."""
    path: list[Any] = []
    node: Any = record
    rest = key
    while True:
        if isinstance(node, Mapping):
            best = None
            for k in node:
                ks = str(k)
                if (rest == ks or rest.startswith(ks + ".") or rest.startswith(ks + "[")) \
                        and (best is None or len(ks) > len(str(best))):
                    best = k
            if best is None:
                return None
            path.append(best)
            node, rest = node[best], rest[len(str(best)):]
        elif isinstance(node, (list, tuple)):
            m = _INDEX.match(rest)
            if not m or int(m[1]) >= min(len(node), MAX_ITEMS):
                return None
            path.append(int(m[1]))
            node, rest = node[int(m[1])], rest[m.end():]
        else:
            return None
        if not rest:
            return tuple(path) if (node is None or isinstance(node, _SCALAR)) and len(path) <= MAX_DEPTH + 1 else None
        if rest.startswith("."):
            if not isinstance(node, Mapping):
                return None
            rest = rest[1:]
        elif not rest.startswith("["):
            return None


class KeyReader:
    """Reads flattened keys from records; each key's path is found once and reused."""

    def __init__(self) -> None:
        self._paths: dict[str, Path] = {}

    def get(self, record: Mapping[str, Any], key: str) -> Any:
        """``flatten(record).get(key)``, without flattening."""
        path = self._paths.get(key)
        if path is not None:
            node: Any = record
            try:
                for step in path:
                    node = node[step]
            except (KeyError, IndexError, TypeError):
                pass
            else:
                if node is None or isinstance(node, _SCALAR):
                    return node
        found = find_path(record, key)  # this record is shaped otherwise (or the first one)
        if found is None:
            return None
        self._paths[key] = found
        node = record
        for step in found:
            node = node[step]
        return node


class RowValues(Mapping[str, Any]):
    """A row's filter values: the fixed ones (sample, group, verdict) and the record's keys,
    read on demand; iterating flattens the record (what :class:`AnyItem` needs)."""

    __slots__ = ("_fixed", "_flat", "_reader", "_record")

    def __init__(self, fixed: dict[str, Any], record: Mapping[str, Any] | None, reader: KeyReader,
                 flat: dict[str, Any] | None = None) -> None:
        self._fixed, self._record, self._reader, self._flat = fixed, record, reader, flat

    def get(self, key: str, default: Any = None) -> Any:
        if self._flat is not None:
            got = self._flat.get(key)
        else:
            got = self._reader.get(self._record, key) if self._record is not None else None
        if got is None:  # the record's own key wins, as in {**fixed, **flatten(record)}
            got = self._fixed.get(key)
        return default if got is None else got

    def __getitem__(self, key: str) -> Any:
        got = self.get(key, _MISSING)
        if got is _MISSING:
            raise KeyError(key)
        return got

    def _all(self) -> dict[str, Any]:
        if self._flat is None:
            self._flat = flatten(self._record) if self._record is not None else {}
        return {**self._fixed, **self._flat}

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


_MISSING = object()

"""Image encodings in memory, for the model backends.

- :class:`EncodingCache` — a thread-safe LRU of image encodings (e.g. SAM 3
  ``vision_embeds``) bounded by *bytes*, not by entry count.
- :func:`image_key` — a content hash of an image array (shape, dtype and pixels); it also
  keys the on-disk prediction cache (:mod:`masklens.core.cache.predictions`).
- :func:`nbytes_of` — the bytes an encoding holds (arrays, tensors, nested containers).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


# ---------------------------------------------------------------- image keys
def image_key(array: np.ndarray) -> str:
    """Content hash of an image array: equal pixels (and shape, dtype) give equal keys."""
    arr = np.ascontiguousarray(array)
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{arr.dtype.str}{arr.shape}".encode())
    h.update(arr.data.cast("B"))  # the array's own buffer
    return h.hexdigest()


# ---------------------------------------------------------------- in memory
@dataclass(frozen=True)
class CacheStats:
    """Counters of an :class:`EncodingCache`."""

    hits: int
    misses: int
    bytes: int
    entries: int
    evictions: int
    max_bytes: int


class EncodingCache:
    """In-memory LRU of image encodings, bounded by the sum of their sizes in bytes.

    Thread-safe. An entry larger than ``max_bytes`` is returned but not kept.
    :meth:`get_or_compute` computes a missing key once even when several threads
    ask for it at the same time.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._hits = 0
        self._misses = 0
        self._evictions = 0
        self._lock = threading.RLock()
        self._inflight: dict[str, threading.Lock] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def get(self, key: str) -> Any | None:
        """The value for ``key`` (marking it most recently used), or None; counts a hit/miss."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self._misses += 1
                return None
            self._items.move_to_end(key)
            self._hits += 1
            return item[0]

    def put(self, key: str, value: Any, nbytes: int) -> None:
        """Store ``value`` of size ``nbytes``, evicting least recently used entries to fit."""
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError("nbytes must be >= 0")
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if nbytes > self.max_bytes:
                return
            while self._items and self._bytes + nbytes > self.max_bytes:
                _, (_, size) = self._items.popitem(last=False)
                self._bytes -= size
                self._evictions += 1
            self._items[key] = (value, nbytes)
            self._bytes += nbytes

    def get_or_compute(
        self, key: str, compute: Callable[[], T], nbytes_of: Callable[[T], int]
    ) -> T:
        """The cached value for ``key``, or ``compute()`` stored with size ``nbytes_of(value)``."""
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
                self._hits += 1
                return item[0]
            self._misses += 1
            key_lock = self._inflight.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:  # another thread may have computed it meanwhile
                item = self._items.get(key)
                if item is not None:
                    self._items.move_to_end(key)
                    return item[0]
            try:
                value = compute()
                self.put(key, value, nbytes_of(value))
            finally:
                with self._lock:
                    self._inflight.pop(key, None)
        return value

    def discard(self, key: str) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]

    def clear(self) -> None:
        """Drop every entry (counters are kept)."""
        with self._lock:
            self._items.clear()
            self._bytes = 0

    @property
    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                hits=self._hits,
                misses=self._misses,
                bytes=self._bytes,
                entries=len(self._items),
                evictions=self._evictions,
                max_bytes=self.max_bytes,
            )


def nbytes_of(value: Any, *, distinct: bool = False) -> int:
    """Best-effort size in bytes of an encoding: arrays, tensors, and containers of them.

    With ``distinct=True`` an array/tensor object met more than once (e.g. shared
    between fields of a model output) is counted once.
    """
    seen: set[int] = set()

    def walk(v: Any) -> int:
        if v is None:
            return 0
        is_array = isinstance(v, np.ndarray)
        is_tensor = not is_array and hasattr(v, "element_size") and hasattr(v, "nelement")
        if is_array or is_tensor:
            if distinct:
                if id(v) in seen:
                    return 0
                seen.add(id(v))
            return int(v.nbytes) if is_array else int(v.element_size() * v.nelement())
        if isinstance(v, Mapping):
            return sum(walk(x) for x in v.values())
        if isinstance(v, (list, tuple)):
            return sum(walk(x) for x in v)
        if hasattr(v, "to_tuple"):  # transformers ModelOutput
            return sum(walk(x) for x in v.to_tuple())
        return 0

    return walk(value)


__all__ = ["CacheStats", "EncodingCache", "image_key", "nbytes_of"]

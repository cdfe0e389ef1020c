"""ModelManager: keeps segmenters loaded, creates them lazily, and unloads others on a switch
when they would not fit in GPU memory together.

Used by the GUI (model selector, live prompts) and by `masklens predict`. A
segmenter is identified by its backend name and options (weights, device,
thresholds …). Weights load lazily inside the segmenter on its first call; the
manager learns each model's GPU footprint after it has run (parameters, buffers
and cached encodings on the GPU) and remembers it for later switches.

The switch rule, when model B becomes active while others are resident on the GPU:

- B runs on the CPU: nothing is unloaded (``max_loaded`` bounds the count if set);
- B's footprint is known (from an earlier load) and fits in free GPU memory (and in
  ``gpu_budget_bytes`` if set) with ``headroom``: the others stay;
- otherwise the least recently used others are unloaded until it fits; when B's
  footprint is unknown, every other GPU-resident model is unloaded.

:meth:`ModelManager.call` additionally retries once after unloading all others
when a call runs out of GPU memory.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from masklens.core.cache.model_cache import EncodingCache
from masklens.core.models.base import Segmenter
from masklens.core.models.registry import create_segmenter

T = TypeVar("T")
ModelKey = tuple[str, str]


def _model_key(name: str, options: dict[str, Any]) -> ModelKey:
    return name, json.dumps(options, sort_keys=True, default=str)


def _tensor_bytes_on_gpu(t: Any) -> int:
    dev = getattr(t, "device", None)
    if dev is None or getattr(dev, "type", "cpu") == "cpu":
        return 0
    return int(t.element_size() * t.nelement())


def estimate_gpu_bytes(segmenter: Segmenter, *, max_depth: int = 3) -> int:
    """Bytes a segmenter holds on an accelerator: ``memory_bytes()`` if it defines one, else the
    parameters and buffers of torch modules and the cached encodings found among its attributes."""
    fn = getattr(segmenter, "memory_bytes", None)
    if callable(fn):
        return int(fn())
    if "torch" not in sys.modules:  # nothing can be on a GPU without torch imported
        return 0
    import torch

    seen: set[int] = set()

    def walk(obj: Any, depth: int) -> int:
        if id(obj) in seen or depth > max_depth:
            return 0
        seen.add(id(obj))
        if isinstance(obj, torch.nn.Module):
            return sum(_tensor_bytes_on_gpu(t) for t in (*obj.parameters(), *obj.buffers()))
        if isinstance(obj, torch.Tensor):
            return _tensor_bytes_on_gpu(obj)
        if isinstance(obj, EncodingCache):
            with obj._lock:
                values = [v for v, _ in obj._items.values()]
            return sum(walk(v, depth + 1) for v in values)
        if isinstance(obj, dict):
            return sum(walk(v, depth + 1) for v in obj.values())
        if isinstance(obj, (list, tuple)):
            return sum(walk(v, depth + 1) for v in obj)
        if hasattr(obj, "to_tuple"):  # transformers ModelOutput
            return sum(walk(v, depth + 1) for v in obj.to_tuple())
        attrs = getattr(obj, "__dict__", None)
        if attrs is None or depth == max_depth:
            return 0
        return sum(walk(v, depth + 1) for v in attrs.values())

    return walk(segmenter, 0)


def free_gpu_bytes() -> int | None:
    """Free memory of the current CUDA device, or None without CUDA (never imports torch)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None
    free, _total = torch.cuda.mem_get_info()
    return int(free)


def _release_gpu_cache() -> None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def _is_out_of_memory(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfMemoryError" or "CUDA out of memory" in str(exc)


@dataclass
class ModelSlot:
    """One managed segmenter."""

    name: str
    options: dict[str, Any]
    segmenter: Segmenter
    gpu_bytes: int = 0  # last measured footprint on the GPU

    @property
    def on_cpu(self) -> bool:
        return str(self.options.get("device") or "auto").startswith(("cpu", "mps"))


class ModelManager:
    """Keeps segmenters by (backend, options), most recently used last. Thread-safe."""

    def __init__(
        self,
        *,
        gpu_budget_bytes: int | None = None,
        headroom: float = 1.2,
        max_loaded: int | None = None,
        factory: Callable[..., Segmenter] = create_segmenter,
        footprint: Callable[[Segmenter], int] = estimate_gpu_bytes,
        free_memory: Callable[[], int | None] = free_gpu_bytes,
    ) -> None:
        self.gpu_budget_bytes = gpu_budget_bytes
        self.headroom = headroom
        self.max_loaded = max_loaded
        self._factory = factory
        self._footprint = footprint
        self._free_memory = free_memory
        self._slots: OrderedDict[ModelKey, ModelSlot] = OrderedDict()
        self._known: dict[ModelKey, int] = {}  # footprints learned from earlier loads
        self._active: ModelKey | None = None
        self._lock = threading.RLock()
        self.unloaded: list[str] = []  # names unloaded, in order (for status lines and tests)

    # ------------------------------------------------------------ access
    def get(self, name: str, **options: Any) -> Segmenter:
        """The segmenter for ``name`` with ``options``, created if needed, made active.

        Switching to another model first unloads models that would not fit with it.
        Unknown names and bad options raise :class:`~masklens.core.errors.ModelError`.
        """
        opts = {k: v for k, v in options.items() if v is not None}
        key = _model_key(name, opts)
        with self._lock:
            if key == self._active and key in self._slots:
                return self._slots[key].segmenter
            self._measure()
            slot = self._slots.get(key)
            if slot is None:
                slot = ModelSlot(name, opts, self._factory(name, **opts))
                self._slots[key] = slot
            self._slots.move_to_end(key)
            self._active = key
            self._make_room(key)
            return slot.segmenter

    def call(self, name: str, fn: Callable[[Segmenter], T], **options: Any) -> T:
        """``fn(segmenter)``; on a GPU out-of-memory error, unload every other model and retry once."""
        seg = self.get(name, **options)
        try:
            return fn(seg)
        except Exception as exc:
            if not _is_out_of_memory(exc):
                raise
            with self._lock:
                self._unload_others(self._active)  # out of GPU memory
            return fn(seg)

    @property
    def active(self) -> Segmenter | None:
        with self._lock:
            active = self._active
            return self._slots[active].segmenter if active is not None and active in self._slots else None

    def loaded(self) -> list[ModelSlot]:
        """Managed segmenters, least recently used first."""
        with self._lock:
            return list(self._slots.values())

    def known_footprint(self, name: str, **options: Any) -> int | None:
        opts = {k: v for k, v in options.items() if v is not None}
        return self._known.get(_model_key(name, opts))

    # ------------------------------------------------------------ unloading
    def unload(self, name: str | None = None) -> None:
        """Unload every managed model (or those of backend ``name``)."""
        with self._lock:
            self._measure()
            for key in [k for k, s in self._slots.items() if name is None or s.name == name]:
                self._drop(key)
            _release_gpu_cache()

    def _drop(self, key: ModelKey) -> None:
        slot = self._slots.pop(key)
        slot.segmenter.unload()
        self.unloaded.append(slot.name)
        if self._active == key:
            self._active = None

    def _measure(self) -> None:
        for key, slot in self._slots.items():
            slot.gpu_bytes = int(self._footprint(slot.segmenter))
            if slot.gpu_bytes:
                self._known[key] = max(self._known.get(key, 0), slot.gpu_bytes)

    def _unload_others(self, keep: ModelKey | None) -> None:
        for key in [k for k, s in self._slots.items() if k != keep and s.gpu_bytes > 0]:
            self._drop(key)
        _release_gpu_cache()

    def _make_room(self, key: ModelKey) -> None:
        new = self._slots[key]
        if self.max_loaded is not None:
            while len(self._slots) > self.max_loaded:
                self._drop(next(iter(self._slots)))
        if new.on_cpu:
            return
        others = [k for k, s in self._slots.items() if k != key and s.gpu_bytes > 0]
        if not others:
            return
        need = self._known.get(key)
        if need is None:
            self._unload_others(key)  # its footprint is unknown: make all the room
            return
        need = int(need * self.headroom) - self._slots[key].gpu_bytes  # already resident part
        for victim in others:  # least recently used first
            if self._fits(key, need):
                break
            self._drop(victim)
            _release_gpu_cache()

    def _fits(self, key: ModelKey, need: int) -> bool:
        free = self._free_memory()
        if free is not None and free < need:
            return False
        if self.gpu_budget_bytes is not None:
            resident = sum(s.gpu_bytes for k, s in self._slots.items() if k != key)
            if resident + need > self.gpu_budget_bytes:
                return False
        return True

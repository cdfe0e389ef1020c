"""Torch device side of the model backends: lazy torch import, device and dtype choice, the
inference context, GPU-synchronised timing and memory release.

Nothing here imports torch at module import time; every function that needs it imports it lazily.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from masklens.core.errors import ModelError

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16", "float16")


def import_torch() -> Any:
    """Import torch, or say how to get it. The first import runs with the cyclic garbage
    collector paused (:func:`heavy_imports`)."""
    import sys

    from masklens.core.runtime.extras import require

    torch = sys.modules.get("torch")
    if torch is not None:
        return torch
    with heavy_imports():
        return require("torch", "the model backends", model=True)


@contextlib.contextmanager
def heavy_imports() -> Iterator[None]:
    """The context for first imports of the model libraries and for loading weights: Python's
    cyclic garbage collector paused (:func:`masklens.core.runtime.gc_pause.gc_paused`), and what
    survives frozen after (:func:`masklens.core.runtime.gc_pause.freeze`).

    Importing torch, torchvision and a transformers model module makes hundreds of thousands of
    objects; with the collector on, each full collection the import triggers walks all of them
    while holding the GIL, and in the window's worker thread that froze the GUI thread for
    100–200 ms several times per first load (docs/models.md). Frozen, the modules and the model
    stay out of later full collections too (one over ~420,000 such objects took 215–260 ms here).
    The price: cyclic garbage made during the load is not collected (on the tiny Grounded SAM 2,
    12,884 small objects — functions, tuples, frames — and no tensor data)."""
    from masklens.core.runtime import gc_pause

    with gc_pause.collected_later():
        yield



def resolve_device(requested: str | None = "auto") -> str:
    """``auto`` -> cuda, then mps, then cpu; an explicit cuda/mps request fails clearly when absent."""
    torch = import_torch()
    req = (requested or "auto").strip().lower()
    base = req.split(":", 1)[0]
    if base not in DEVICES:
        raise ModelError(f"unknown device '{requested}'", hint=f"choose one of: {', '.join(DEVICES)}")
    mps_ok = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    if base == "auto":
        if torch.cuda.is_available():
            return "cuda"
        return "mps" if mps_ok else "cpu"
    if base == "cuda":
        if not torch.cuda.is_available():
            raise ModelError(
                f"device '{requested}' was requested but CUDA is not available on this machine "
                f"(torch {torch.__version__}, torch.cuda.is_available() is False)",
                hint="run with --device cpu (or auto); for a GPU, install a CUDA build of torch "
                "and check `nvidia-smi`",
            )
        if ":" in req:
            index = int(req.split(":", 1)[1]) if req.split(":", 1)[1].isdigit() else -1
            if not 0 <= index < torch.cuda.device_count():
                raise ModelError(
                    f"device '{requested}' does not exist ({torch.cuda.device_count()} CUDA device(s))",
                    hint="use --device cuda (the first GPU) or cuda:N with a valid N",
                )
        return req
    if base == "mps" and not mps_ok:
        raise ModelError(
            "device 'mps' was requested but Apple's Metal backend is not available here",
            hint="run with --device cpu (or auto)",
        )
    return req


def resolve_dtype(device: str, requested: str | None = "auto") -> str:
    """The compute dtype: ``auto`` is bfloat16 on CUDA with bf16 support, float16 on other CUDA, else float32."""
    req = (requested or "auto").strip().lower()
    if req not in DTYPES:
        raise ModelError(f"unknown dtype '{requested}'", hint=f"choose one of: {', '.join(DTYPES)}")
    if not device.startswith("cuda"):
        if req in ("bfloat16", "float16") and device == "cpu":
            raise ModelError(
                f"dtype '{req}' autocast is only used on a GPU; on the CPU models run in float32",
                hint="leave the dtype at auto or float32 when running on the CPU",
            )
        return "float32"
    if req != "auto":
        return req
    torch = import_torch()
    return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"


@dataclass
class Runtime:
    """Where and how a backend computes: device plus compute dtype (weights stay float32)."""

    device: str
    dtype: str

    @classmethod
    def create(cls, device: str | None = "auto", dtype: str | None = "auto") -> Runtime:
        dev = resolve_device(device)
        return cls(dev, resolve_dtype(dev, dtype))

    @contextlib.contextmanager
    def inference(self) -> Iterator[None]:
        """``torch.inference_mode`` plus bf16/fp16 autocast on a GPU."""
        torch = import_torch()
        with torch.inference_mode():
            if self.device.startswith("cuda") and self.dtype != "float32":
                with torch.autocast("cuda", dtype=getattr(torch, self.dtype)):
                    yield
            else:
                yield

    def to_device(self, batch: Any) -> Any:
        """Move every tensor of a processor output (dict-like) to the device."""
        torch = import_torch()
        if isinstance(batch, torch.Tensor):
            return batch.to(self.device)
        return {k: (v.to(self.device) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}


def tensor_nbytes(value: Any) -> int:
    """Bytes held by the tensors inside ``value`` (tensor, mapping, sequence, or model output),
    each tensor counted once: :func:`masklens.core.cache.model_cache.nbytes_of` with ``distinct=True``."""
    from masklens.core.cache.model_cache import nbytes_of

    return nbytes_of(value, distinct=True)


class Stopwatch:
    """Wall-clock milliseconds, synchronising CUDA so GPU latencies are real."""

    def __init__(self, device: str = "cpu") -> None:
        self.device = device
        self.start = time.perf_counter()

    def ms(self) -> float:
        if self.device.startswith("cuda"):
            import_torch().cuda.synchronize()
        return (time.perf_counter() - self.start) * 1000.0


def free_accelerator_memory(device: str) -> None:
    """Return cached GPU memory to the driver after weights are dropped."""
    import gc

    gc.collect()
    if device.startswith("cuda"):
        import_torch().cuda.empty_cache()

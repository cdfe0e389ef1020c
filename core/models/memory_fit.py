"""Will a checkpoint fit? Its in-memory size estimated from its files, checked before loading.

The estimate reads only safetensors headers (tensor shapes and dtypes, a few kB): floating-point
tensors count 4 bytes per element, since the backends keep weights in float32 whatever the file
stores (a bfloat16 checkpoint doubles in memory); other tensors count as stored. Pickled files
(``.bin``, ``.pt``) count their file size. Loading needs a margin on top (:data:`LOAD_MARGIN`):
transient copies while tensors are moved into the model, allocator slack.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterable
from pathlib import Path

from masklens.core.errors import ModelError
from masklens.core.runtime.memory import human_bytes

#: bytes per element of the safetensors dtypes
_ITEMSIZE = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1,
    "I64": 8, "U64": 8, "I32": 4, "U32": 4, "I16": 2, "U16": 2, "I8": 1, "U8": 1, "BOOL": 1,
}
_FLOATS = {"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"}
#: loading needs the weights plus this fraction (copies while tensors move, allocator slack)
LOAD_MARGIN = 0.15
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
_MAX_HEADER = 100 << 20


def safetensors_bytes(path: Path) -> int:
    """Bytes the tensors of one safetensors file take in memory with floats as float32 (read from
    its header); the file's size when the header cannot be read."""
    try:
        with path.open("rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            if length > _MAX_HEADER:
                raise ValueError("header too large")
            header = json.loads(fh.read(length))
        total = 0
        for name, entry in header.items():
            if name == "__metadata__" or not isinstance(entry, dict):
                continue
            numel = 1
            for dim in entry.get("shape", []):
                numel *= int(dim)
            dtype = str(entry.get("dtype"))
            total += numel * (max(_ITEMSIZE.get(dtype, 4), 4) if dtype in _FLOATS else _ITEMSIZE.get(dtype, 4))
        return total
    except (OSError, ValueError, struct.error, TypeError, AttributeError):
        return path.stat().st_size


def weight_files(path: Path) -> list[Path]:
    """The weight files of a checkpoint (a file, or a folder's safetensors, else its pickles)."""
    path = Path(path)
    if path.is_file():
        return [path]
    safetensors = sorted(path.glob("*.safetensors"))
    return safetensors or sorted(p for p in path.iterdir() if p.suffix in _WEIGHT_SUFFIXES and p.is_file())


def estimate_bytes(paths: Iterable[Path]) -> int:
    """In-memory size of the weights of the checkpoints at ``paths`` (files or folders)."""
    total = 0
    for path in paths:
        for file in weight_files(Path(path)):
            total += safetensors_bytes(file) if file.suffix == ".safetensors" else file.stat().st_size
    return total


def device_available(device: str) -> int | None:
    """Free memory on ``device``: the GPU's free memory on CUDA, available RAM on the CPU."""
    if device.startswith("cuda"):
        import sys

        torch = sys.modules.get("torch")
        if torch is None:
            return None
        try:
            index = int(device.split(":", 1)[1]) if ":" in device else torch.cuda.current_device()
            return int(torch.cuda.mem_get_info(index)[0])
        except Exception:  # noqa: BLE001 - a reading that fails checks nothing
            return None
    if device.startswith("mps"):
        return None  # unified memory, no reliable figure
    from masklens.core.runtime.memory import available_bytes

    return available_bytes()


def check_fits(
    paths: Iterable[Path],
    device: str,
    *,
    backend: str,
    available: Callable[[str], int | None] = device_available,
) -> int:
    """Raise a ModelError, before anything is loaded, when the checkpoints at ``paths`` need more
    memory on ``device`` than ``available(device)`` reports; returns the estimate (bytes).
    An unknown available figure checks nothing."""
    paths = [Path(p) for p in paths]
    weights = estimate_bytes(paths)
    needed = int(weights * (1 + LOAD_MARGIN))
    free = available(device)
    if free is not None and needed > free:
        where = "GPU memory" if device.startswith("cuda") else "memory"
        raise ModelError(
            f"{backend}: the weights need about {human_bytes(needed)} of {where} "
            f"({human_bytes(weights)} in float32 + {LOAD_MARGIN:.0%} to load) but only "
            f"{human_bytes(free)} is available on {device}",
            path=paths[0] if paths else None,
            hint="close other programs or unload other models (another model in the window holds "
            "memory too), or run on a machine with more memory",
        )
    return weights

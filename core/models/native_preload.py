"""Native libraries loaded ahead through ``ctypes``, which lets go of the GIL while the dynamic
loader maps and relocates them.

Importing an extension module holds the GIL through its ``dlopen``. Every backend's first load
imports ``torchvision`` and ``torch._dynamo`` (torch's own code), which import ``triton`` to see
whether it is installed, and loading ``triton._C.libtriton`` (a ~500 MB library) held the GIL 40–90 ms here:
the window's GUI thread froze that long in the middle of a model's load (docs/models.md). Loaded
first with ``ctypes.CDLL`` from the loading thread, the library is mapped while the GUI thread
runs; the import then finds it loaded (``dlopen`` of a loaded file returns it) and only runs its
module init. ``TorchSegmenter.ensure_loaded`` calls it before a backend's load (not the import of
torch at start-up, which does not import triton).
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import sys
from pathlib import Path

log = logging.getLogger(__name__)

#: (top-level package, folder inside it, file pattern, the extension module it is imported as)
NATIVE: tuple[tuple[str, str, str, str], ...] = (
    ("triton", "_C", "libtriton*.so", "triton._C.libtriton"),
)

_done: set[Path] = set()


def native_libraries() -> list[Path]:
    """The installed files of :data:`NATIVE` not imported yet (found without importing the
    packages: ``find_spec`` of a top-level package runs none of its code)."""
    out: list[Path] = []
    for package, folder, pattern, module in NATIVE:
        if module in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            out.extend(sorted((Path(location) / folder).glob(pattern)))
    return out


def preload_native_libraries() -> list[Path]:
    """``dlopen`` the :func:`native_libraries` through ``ctypes`` (the GIL released meanwhile),
    once per process; the files loaded. One that fails to load is left to the import that
    follows, which reports it as it always would."""
    loaded = []
    for path in native_libraries():
        if path in _done:
            continue
        _done.add(path)
        try:
            ctypes.CDLL(str(path))
        except OSError as exc:
            log.debug("could not preload %s: %s", path, exc)
            continue
        loaded.append(path)
    return loaded

"""The large native libraries a model's first load imports (``triton._C.libtriton``) are loaded
ahead through ctypes, which releases the GIL while the dynamic loader works, without importing
their Python packages; the import that follows finds them loaded and works (that
dlopen, done by the import, held the GIL 40–90 ms in the middle of a model's load)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

CHECK = """
import sys
from masklens.core.models.native_preload import native_libraries, preload_native_libraries
wanted = native_libraries()
got = preload_native_libraries()
maps = open('/proc/self/maps').read()
print(len(wanted), len(got), 'triton' in sys.modules, all(str(p) in maps for p in got))
print(len(preload_native_libraries()))  # once per process
import triton._C.libtriton  # the import finds the library loaded
print(bool(triton._C.libtriton.__file__), len(native_libraries()))
"""


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton is not installed")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_libtriton_is_mapped_before_its_import_and_the_import_works():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True).stdout.split("\n")
    wanted, got, imported, mapped = out[0].split()
    assert int(wanted) >= 1 and got == wanted  # found and loaded
    assert imported == "False"  # the Python package was not imported (its code not run)
    assert mapped == "True"  # in the process's memory map before the import
    assert out[1] == "0"
    assert out[2] == "True 0"  # imported now, nothing left to preload


def test_a_model_load_preloads_before_the_backend_loads(monkeypatch, tiny_clipseg):
    """``ensure_loaded`` preloads (collector paused) before the backend's ``_load`` imports."""
    from masklens.core.models import native_preload
    from masklens.core.models.registry import create_segmenter

    order: list[str] = []
    monkeypatch.setattr(native_preload, "preload_native_libraries", lambda: order.append("preload") or [])
    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu")
    load = seg._load
    monkeypatch.setattr(seg, "_load", lambda: order.append("load") or load())
    seg.ensure_loaded()
    assert order == ["preload", "load"]

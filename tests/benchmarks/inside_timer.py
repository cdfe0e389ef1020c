"""Time spent inside one masklens function during a call (for the scale lines' breakdowns)."""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from collections.abc import Iterator


@contextlib.contextmanager
def time_inside(module: str, name: str) -> Iterator[list[float]]:
    """Within the block, ``module.name`` is timed wherever a ``masklens`` module bound it; the
    yielded list's one item is the seconds spent in it so far (nested calls counted once)."""
    original = getattr(importlib.import_module(module), name)
    spent, depth = [0.0], [0]

    def timed(*args, **kwargs):
        depth[0] += 1
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent[0] += time.perf_counter() - t0

    bound = [m for key, m in list(sys.modules.items())
             if key.startswith("masklens") and getattr(m, name, None) is original]  # fmt: skip
    for m in bound:
        setattr(m, name, timed)
    try:
        yield spent
    finally:
        for m in bound:
            setattr(m, name, original)

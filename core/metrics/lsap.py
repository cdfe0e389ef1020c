"""scipy's ``linear_sum_assignment`` without importing all of ``scipy.optimize``.

Importing ``scipy.optimize`` pulls in scipy.linalg, sparse and the optimisers: ~0.6 s of a
``masklens score`` run that only needs the Hungarian solver. That solver is scipy's compiled
``scipy/optimize/_lsap`` extension, which ``scipy.optimize`` re-exports unchanged; it is loaded
here on its own (the very same function, so the same assignments). Where that is not
possible (another scipy layout) or ``scipy.optimize`` is already imported, the public
import is used.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_solver: Callable[..., Any] | None = None


def _load_extension() -> Callable[..., Any] | None:
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "optimize"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"_lsap{suffix}"
        if path.is_file():
            loader = importlib.machinery.ExtensionFileLoader("scipy.optimize._lsap", str(path))
            ext = importlib.util.spec_from_file_location("scipy.optimize._lsap", path, loader=loader)
            if ext is None:
                return None
            module = importlib.util.module_from_spec(ext)
            loader.exec_module(module)
            return getattr(module, "linear_sum_assignment", None)
    return None


def linear_sum_assignment(cost: Any, maximize: bool = False) -> Any:
    """``scipy.optimize.linear_sum_assignment(cost, maximize)``."""
    global _solver
    if _solver is None:
        if "scipy.optimize" not in sys.modules:
            try:
                _solver = _load_extension()
            except Exception:  # noqa: BLE001 - any loading problem: the public import below
                _solver = None
        if _solver is None:
            from scipy.optimize import linear_sum_assignment as public

            _solver = public
    return _solver(cost, maximize)

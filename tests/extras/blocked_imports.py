"""Make some packages look absent, as in an install without their extra (for subprocess tests).

``python -c "import blocked_imports; blocked_imports.block(['torch']); ..."``: afterwards
``importlib.util.find_spec('torch')`` is None and ``import torch`` raises ModuleNotFoundError,
exactly as when the package is not installed (every import finder is told not to find it).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any


class _Hiding:
    """Wraps one finder of ``sys.meta_path``; finds nothing of the hidden packages."""

    def __init__(self, finder: Any, names: frozenset[str]) -> None:
        self._finder, self._names = finder, names

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".", 1)[0] in self._names:
            return None
        find = getattr(self._finder, "find_spec", None)
        return find(fullname, path, target) if find is not None else None

    def __getattr__(self, name: str) -> Any:  # invalidate_caches, find_distributions, …
        return getattr(self._finder, name)


def block(names: Iterable[str]) -> None:
    """Hide ``names`` (top-level packages) for the rest of this process."""
    hidden = frozenset(names)
    loaded = [m for m in sys.modules if m.split(".", 1)[0] in hidden]
    if loaded:
        raise RuntimeError(f"already imported, cannot be hidden: {loaded}")
    sys.meta_path[:] = [_Hiding(f, hidden) for f in sys.meta_path]

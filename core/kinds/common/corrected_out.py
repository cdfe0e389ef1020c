"""Guards for writing corrected ground truth (``masklens review apply``): never over an input."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError


def input_paths(files: Mapping[str, Any]) -> set[Path]:
    """Every path named by a loader's keyword arguments (lists flattened), resolved."""
    out: set[Path] = set()
    for value in files.values():
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, (str, Path)):
                out.add(Path(v).resolve())
    return out


def refuse_inputs(targets: Iterable[Path], files: Mapping[str, Any]) -> None:
    """MasklensError when a file about to be written is one of the inputs (or a folder of them)."""
    inputs = input_paths(files)
    for t in targets:
        r = Path(t).resolve()
        if r in inputs:
            raise MasklensError("the output would overwrite an input file", path=t,
                                field="--out", hint="write the corrected benchmark elsewhere")

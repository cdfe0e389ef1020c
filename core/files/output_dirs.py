"""The one guard for every command that writes a whole folder (``report``, ``export``,
``predict``/``merge`` of folder-shaped predictions): an existing ``--out`` is replaced only
when masklens wrote it, and never when it holds this run's inputs.

Every folder masklens writes carries :data:`MARKER`. :func:`check_replaceable` accepts a target
that does not exist, an empty folder, or a folder holding the marker (or a layout an earlier
masklens wrote, ``legacy``); it refuses anything else — a file, a device node, a folder of the
user's own files — and any folder that is or contains one of the run's input paths, with a
MasklensError naming the folder.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError

#: the file every folder written by masklens holds (its presence allows replacing the folder)
MARKER = ".masklens-output.json"
_HINT = "give a new or empty folder with --out (or remove that folder yourself)"


def marker_text(what: str) -> str:
    """The marker's content: what wrote the folder (informative; only its presence counts)."""
    return json.dumps({"written_by": "masklens", "what": what}) + "\n"


def write_marker(folder: Path, what: str) -> None:
    """Put the marker into a staging folder (plain write: the folder is renamed into place whole)."""
    (folder / MARKER).write_text(marker_text(what), encoding="utf-8")


def input_paths(values: Iterable[Any]) -> list[Path]:
    """The local paths among command arguments (strings, paths, lists of them; ``hf://`` and
    ``None`` skipped)."""
    out: list[Path] = []
    for v in values:
        if v is None or isinstance(v, bool):
            continue
        if isinstance(v, list | tuple | set):
            out += input_paths(v)
        elif isinstance(v, str | os.PathLike) and not str(v).startswith("hf://") and str(v):
            out.append(Path(v))
    return out


def _real(p: Path) -> Path:
    try:
        return p.resolve()
    except (OSError, RuntimeError):
        return p.absolute()


def holds_inputs(target: str | Path, inputs: Iterable[Any]) -> Path | None:
    """The first of ``inputs`` (command arguments, see :func:`input_paths`) that is ``target``
    or lies inside it (both resolved), else None."""
    real = _real(Path(target))
    for p in input_paths(inputs):
        q = _real(p)
        if q == real or real in q.parents:
            return p
    return None


def check_replaceable(target: str | Path, *, inputs: Iterable[Any] = (),
                      legacy: Callable[[Path], bool] | None = None) -> None:
    """Refuse (MasklensError naming ``target``) to write a folder over anything but nothing, an
    empty folder or a folder masklens wrote (:data:`MARKER`, or ``legacy(target)``), and over a
    folder that is or holds one of ``inputs`` (the run's input files and folders)."""
    t = Path(target)
    try:
        st = os.stat(t)
    except (FileNotFoundError, NotADirectoryError):  # nothing there (the write says why not)
        return
    except OSError as exc:
        raise MasklensError(f"cannot use this output folder ({exc.strerror})", path=t) from None
    if not stat.S_ISDIR(st.st_mode):
        what = "a file" if stat.S_ISREG(st.st_mode) else "not a folder (a device, pipe or socket)"
        raise MasklensError(f"exists and is {what}; this command writes a folder, not replacing it",
                            path=t, hint=_HINT)
    held = holds_inputs(t, inputs)
    if held is not None:
        raise MasklensError(f"holds this run's input {held}; not replacing it", path=t,
                            hint="write the output to another folder")
    try:
        empty = not any(t.iterdir())
    except OSError as exc:
        raise MasklensError(f"cannot list this output folder ({exc.strerror})", path=t) from None
    if empty or (t / MARKER).is_file() or (legacy is not None and legacy(t)):
        return
    raise MasklensError("exists and was not written by masklens; not replacing it", path=t, hint=_HINT)


def only_names(names: Iterable[str], required: str) -> Callable[[Path], bool]:
    """A ``legacy`` test: the folder holds ``required`` and nothing but ``names`` (plain files)."""
    allowed = set(names)

    def test(folder: Path) -> bool:
        try:
            entries = list(folder.iterdir())
        except OSError:
            return False
        return (any(e.name == required for e in entries)
                and all(e.name in allowed and e.is_file() and not e.is_symlink() for e in entries))

    return test

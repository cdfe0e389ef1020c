"""A masklens workspace file (``*.masklens``): what the window had open, so that
``masklens gui FILE`` — or a double click in a file manager, through the desktop entry — opens
it again. File › Save workspace… writes it.

It is a small JSON object::

    {"masklens_workspace": 1,
     "kind": "cafe",
     "inputs": ["--ann", "/data/cafe/ann.json", "--images", "/data/cafe/images"],
     "prediction_sets": [{"name": "sam3", "argv": ["--pred", "/runs/sam3.json"]}],
     "store": "/data/cafe/.masklens/reviews.sqlite"}

``inputs`` are the benchmark's arguments as ``masklens score KIND`` takes them, without the
predictions; each prediction set has its name in the window and its prediction arguments;
``store`` is the review store the window had open (None: none). A relative path is read
relative to the workspace file's folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masklens.core.errors import DataFormatError
from masklens.core.files.io import atomic_write_json, read_json

#: the format's version, the value of its ``masklens_workspace`` key
VERSION = 1
#: the file name suffix of a workspace (its MIME type: application/x-masklens-workspace)
SUFFIX = ".masklens"


@dataclass(frozen=True)
class PredictionArgs:
    """One prediction set of a workspace: its name and its prediction arguments."""

    name: str
    argv: list[str]


@dataclass(frozen=True)
class Workspace:
    kind: str
    inputs: list[str]
    prediction_sets: list[PredictionArgs] = field(default_factory=list)
    store: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"masklens_workspace": VERSION, "kind": self.kind, "inputs": list(self.inputs),
                "prediction_sets": [{"name": p.name, "argv": list(p.argv)} for p in self.prediction_sets],
                "store": self.store}


def write_workspace(path: str | Path, workspace: Workspace) -> Path:
    """Write ``workspace`` to ``path`` (atomically; ``.masklens`` added when it has no suffix)."""
    p = Path(path)
    if not p.suffix:
        p = p.with_suffix(SUFFIX)
    atomic_write_json(p, workspace.as_json())
    return p


def _strings(value: Any, path: Path, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataFormatError(f"must be a list of strings, got {value!r}", path=path, field=name)
    return list(value)


def _relative_to(folder: Path, argv: list[str]) -> list[str]:
    """``argv`` with each relative path value made absolute against ``folder`` (a value is a
    path when it is not a flag and an existing file or folder there)."""
    out = []
    for i, token in enumerate(argv):
        if i and argv[i - 1].startswith("--") and not token.startswith("-") \
                and not os.path.isabs(token) and "://" not in token and (folder / token).exists():
            token = str(folder / token)
        out.append(token)
    return out


def read_workspace(path: str | Path) -> Workspace:
    """The workspace in ``path``; a file that is not one raises :class:`DataFormatError` naming
    the file and the field."""
    p = Path(path)
    data = read_json(p)
    if not isinstance(data, dict) or "masklens_workspace" not in data:
        raise DataFormatError("not a masklens workspace (no 'masklens_workspace' key)", path=p,
                              hint="File › Save workspace… in the window writes one")
    if data["masklens_workspace"] != VERSION:
        raise DataFormatError(f"workspace version {data['masklens_workspace']!r} is not {VERSION}",
                              path=p, field="masklens_workspace")
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind:
        raise DataFormatError(f"must name a benchmark kind, got {kind!r}", path=p, field="kind")
    folder = p.resolve().parent
    inputs = _relative_to(folder, _strings(data.get("inputs"), p, "inputs"))
    sets = data.get("prediction_sets", [])
    if not isinstance(sets, list):
        raise DataFormatError(f"must be a list, got {sets!r}", path=p, field="prediction_sets")
    prediction_sets = []
    for i, entry in enumerate(sets):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise DataFormatError(f"must be an object with a 'name' and 'argv', got {entry!r}",
                                  path=p, record=i, field="prediction_sets")
        argv = _strings(entry.get("argv"), p, f"prediction_sets[{i}].argv")
        prediction_sets.append(PredictionArgs(entry["name"], _relative_to(folder, argv)))
    store = data.get("store")
    if store is not None and not isinstance(store, str):
        raise DataFormatError(f"must be a path or null, got {store!r}", path=p, field="store")
    if store is not None and not os.path.isabs(store):
        store = str(folder / store)
    return Workspace(kind, inputs, prediction_sets, store)

"""How a score file (``masklens score --out``, ``score(out=…)``) was made: the masklens version,
each input file's path, sha256 and — for an ``hf://`` path — its Hub revision, the parameters
and the time. The JSON's last key, ``provenance``; everything before it is the score itself."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from masklens.core import __version__


def hub_revision(local: Path) -> str | None:
    """The commit of the Hugging Face cache snapshot holding ``local`` (``…/snapshots/<commit>/…``)."""
    parts = local.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "snapshots":
            return parts[i + 1]
    return None


def input_record(given: str, local: str) -> dict[str, Any]:
    """One input as given (``given``) and as read (``local``, the same unless an ``hf://`` path):
    ``path``, ``sha256`` (None for a folder) and, for an ``hf://`` path, ``hf`` and ``revision``."""
    from masklens.core.cache.file_hashes import file_sha256
    from masklens.core.interop.hub import is_hub_path

    path = Path(local)
    record: dict[str, Any] = {"path": str(path.absolute()),
                              "sha256": file_sha256(path) if path.is_file() else None}
    if is_hub_path(given):
        record["hf"] = given
        record["revision"] = hub_revision(path)
    return record


def score_provenance(kind: str, files: Mapping[str, Any], local: Mapping[str, Any],
                     params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``provenance`` entry of a score file: ``files`` as given, ``local`` the same after
    ``hf://`` paths were resolved (a list for a repeated flag)."""
    inputs: dict[str, Any] = {}
    for dest, given in files.items():
        if isinstance(given, list | tuple):
            inputs[dest] = [input_record(str(g), str(p)) for g, p in zip(given, local[dest], strict=True)]
        else:
            inputs[dest] = input_record(str(given), str(local[dest]))
    return {
        "masklens_version": __version__,
        "created_utc": utc_now(),
        "kind": kind,
        "inputs": inputs,
        "params": dict(params),
    }


def utc_now() -> str:
    """The time now as provenance records it: UTC to the second, ``2026-11-29T01:45:00Z``."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")

"""Provenance of a report: masklens version, models and checkpoints, thresholds, sources, date."""

from __future__ import annotations

import hashlib
import platform
import sys
from pathlib import Path
from typing import Any

from masklens.core import __version__
from masklens.core.reports.runs import ReportContext
from masklens.core.scoring.provenance import utc_now


def file_sha256(path: Path, limit: int = 1 << 30) -> str | None:
    """SHA-256 of a file (None for folders, missing files and files over ``limit`` bytes)."""
    try:
        if not path.is_file() or path.stat().st_size > limit:
            return None
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def provenance(ctx: ReportContext) -> dict[str, Any]:
    return {
        "masklens_version": __version__,
        "created_utc": utc_now(),
        "python": sys.version.split()[0],
        "platform": platform.platform(terse=True),
        "benchmark": {
            "kind": ctx.kind.name,
            "name": ctx.benchmark.name,
            "samples": len(ctx.benchmark.samples),
            "sources": {
                k: {"path": str(p), "sha256": file_sha256(Path(p))}
                for k, p in ctx.benchmark.sources.items()
            },
        },
        "params": dict(ctx.params),
        "models": {run.name: _with_file_hashes(run.provenance) for run in ctx.runs},
        "command": ctx.command,
    }


#: provenance keys that name a prediction file whose content hash the report records
_FILE_KEYS = ("file", "pred", "path", "predictions_file")


def _with_file_hashes(prov: dict[str, Any]) -> dict[str, Any]:
    out = dict(prov)
    for k in _FILE_KEYS:
        v = prov.get(k)
        if isinstance(v, (str, Path)) and Path(v).is_file():
            out.setdefault(f"{k}_sha256", file_sha256(Path(v)))
    return out

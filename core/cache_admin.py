"""What ``masklens cache info|clear`` shows and removes: the on-disk prediction cache
(:mod:`masklens.core.prediction_cache`) seen as a whole — its path, entries, size on disk and
entries by backend — and removal of all entries, those of one model, or those older than N days
(the database is then compacted, so its file really shrinks)."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from masklens.core.errors import MasklensError
from masklens.core.prediction_cache import PredictionCache, default_cache_dir


@dataclass(frozen=True)
class BackendUsage:
    entries: int
    result_bytes: int  # the stored results' size (the database adds its own overhead)
    oldest: float | None  # creation time (epoch seconds) of the oldest entry
    newest: float | None


@dataclass(frozen=True)
class CacheInfo:
    path: Path
    exists: bool
    entries: int = 0
    size_bytes: int = 0
    by_backend: dict[str, BackendUsage] = field(default_factory=dict)


def cache_path(root: str | Path | None = None) -> Path:
    base = Path(root) if root is not None else default_cache_dir()
    return base / PredictionCache.FILENAME


def cache_info(root: str | Path | None = None) -> CacheInfo:
    """The cache's numbers; a cache that was never written is reported, not created."""
    path = cache_path(root)
    if not path.is_file():
        return CacheInfo(path, False)
    with PredictionCache(path.parent) as cache:
        rows = cache._conn.execute(
            "SELECT backend, COUNT(*), SUM(LENGTH(result)), MIN(created), MAX(created)"
            " FROM predictions GROUP BY backend ORDER BY backend").fetchall()
        size = cache.size_bytes()
    usage = {b: BackendUsage(int(n), int(nbytes or 0), lo, hi) for b, n, nbytes, lo, hi in rows}
    return CacheInfo(path, True, sum(u.entries for u in usage.values()), size, usage)


def _where(model: str | None, older_than_days: float | None) -> tuple[str, list[object]]:
    parts, args = [], []
    if model is not None:
        parts.append("backend = ?")
        args.append(model)
    if older_than_days is not None:
        if older_than_days < 0:
            raise MasklensError(f"--older-than must be a number of days ≥ 0, got {older_than_days:g}")
        parts.append("created < ?")
        args.append(time.time() - older_than_days * 86400.0)
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


def count_matching(root: str | Path | None = None, *, model: str | None = None,
                   older_than_days: float | None = None) -> int:
    """How many entries :func:`clear_cache` with the same arguments would remove."""
    path = cache_path(root)
    if not path.is_file():
        return 0
    where, args = _where(model, older_than_days)
    with PredictionCache(path.parent) as cache:
        return int(cache._conn.execute(f"SELECT COUNT(*) FROM predictions{where}", args).fetchone()[0])


def clear_cache(root: str | Path | None = None, *, model: str | None = None,
                older_than_days: float | None = None) -> int:
    """Remove the matching entries (all without filters) and compact the database; returns how
    many were removed. Remembered image-file hashes go only when everything is cleared."""
    path = cache_path(root)
    if not path.is_file():
        return 0
    where, args = _where(model, older_than_days)
    with PredictionCache(path.parent) as cache, cache._lock:
        conn = cache._conn
        try:
            removed = conn.execute(f"DELETE FROM predictions{where}", args).rowcount
            if not where:
                conn.execute("DELETE FROM image_files")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
        except sqlite3.OperationalError as exc:  # another process holds it (a run in progress)
            raise MasklensError(f"cannot clear the prediction cache now ({exc})", path=path,
                                hint="retry when no masklens run is using it") from None
    return int(removed)

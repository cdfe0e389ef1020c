"""What ``masklens cache info|clear`` shows and removes: the on-disk prediction cache
(:mod:`masklens.core.cache.predictions`) seen as a whole — its path, entries, size on disk and
entries by backend — and removal of all entries, those of one model, or those older than N days
(the database is then compacted, so its file really shrinks).

It opens the cache's SQLite file with a connection of its own (never creating it), so it works
beside a running ``masklens predict`` (SQLite's locking; a busy timeout of 30 s, as the cache's).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from masklens.core.cache.predictions import PredictionCache, default_cache_dir
from masklens.core.errors import MasklensError


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


def size_on_disk(path: Path) -> int:
    """Bytes of the database and its write-ahead log."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


@contextlib.contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    try:
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    except sqlite3.Error as exc:
        raise MasklensError(f"cannot open the prediction cache ({exc})", path=path) from None
    try:
        yield conn
    except sqlite3.DatabaseError as exc:  # not a database, or another process holds a lock
        raise MasklensError(f"cannot use the prediction cache ({exc})", path=path,
                            hint="retry when no masklens run is using it, or delete the file") from None
    finally:
        conn.close()


def cache_info(root: str | Path | None = None) -> CacheInfo:
    """The cache's numbers; a cache that was never written is reported, not created."""
    path = cache_path(root)
    if not path.is_file():
        return CacheInfo(path, False)
    with _connect(path) as conn:
        rows = conn.execute(
            "SELECT backend, COUNT(*), SUM(LENGTH(result)), MIN(created), MAX(created)"
            " FROM predictions GROUP BY backend ORDER BY backend").fetchall()
    usage = {b: BackendUsage(int(n), int(nbytes or 0), lo, hi) for b, n, nbytes, lo, hi in rows}
    return CacheInfo(path, True, sum(u.entries for u in usage.values()), size_on_disk(path), usage)


def _where(model: str | None, older_than_days: float | None) -> tuple[str, list[object]]:
    parts: list[str] = []
    args: list[object] = []
    if model is not None:
        parts.append("backend = ?")
        args.append(model)
    if older_than_days is not None:
        if not older_than_days >= 0:  # NaN too
            raise MasklensError(f"--older-than must be a number of days ≥ 0, got {older_than_days:g}")
        parts.append("created < ?")
        args.append(time.time() - older_than_days * 86400.0)
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


def count_matching(root: str | Path | None = None, *, model: str | None = None,
                   older_than_days: float | None = None) -> int:
    """How many entries :func:`clear_cache` with the same arguments would remove."""
    path = cache_path(root)
    where, args = _where(model, older_than_days)
    if not path.is_file():
        return 0
    with _connect(path) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM predictions{where}", args).fetchone()[0])


def clear_cache(root: str | Path | None = None, *, model: str | None = None,
                older_than_days: float | None = None) -> int:
    """Remove the matching entries (all without filters) in one transaction and compact the
    database; returns how many were removed. Remembered image-file hashes go only when
    everything is cleared."""
    path = cache_path(root)
    where, args = _where(model, older_than_days)
    if not path.is_file():
        return 0
    with _connect(path) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            removed = conn.execute(f"DELETE FROM predictions{where}", args).rowcount
            if not where:
                conn.execute("DELETE FROM image_files")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        with contextlib.suppress(sqlite3.OperationalError):  # busy: compacting can wait
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
    return int(removed)

"""The on-disk prediction cache: SegmentResults in one SQLite database (WAL mode).

Keyed by (backend, checkpoint identity, image content hash, prompt text, role,
parameters), so re-opening a sample or re-running `masklens predict` costs
nothing. Each write is its own transaction: a crash or Ctrl-C leaves every
finished entry readable and no half-written one. What an entry is (its key, its JSON, how it
is read back) is :mod:`masklens.core.cache.entries`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from masklens.core.cache.entries import BadEntry, PredictionKey, parse_entries, result_json_text
from masklens.core.errors import MasklensError
from masklens.core.files.sqlite_errors import (
    CORRUPT,
    FULL,
    MISSING,
    StoreErrors,
    classify,
    rollback_quietly,
)

if TYPE_CHECKING:
    from masklens.core.models.base import SegmentResult

#: environment variable that overrides the default cache directory
CACHE_DIR_ENV = "MASKLENS_CACHE_DIR"


def default_cache_dir() -> Path:
    """The ``cache_dir`` setting: ``$MASKLENS_CACHE_DIR``, the config file, or the platform's
    user cache dir for ``masklens`` (core/runtime/config.py)."""
    from masklens.core.runtime import config

    return config.get("cache_dir")


_SCHEMA = """
CREATE TABLE IF NOT EXISTS predictions (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    checkpoint TEXT NOT NULL,
    image TEXT NOT NULL,
    prompt TEXT NOT NULL,
    role TEXT NOT NULL,
    params TEXT NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS predictions_image ON predictions(backend, checkpoint, image);
CREATE TABLE IF NOT EXISTS image_files (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    image TEXT NOT NULL
);
"""
class PredictionCache:
    """On-disk cache of SegmentResults in one SQLite database (WAL mode) under ``root``.

    Safe to share between threads (one connection behind a lock) and between
    processes (SQLite locking, 30 s busy timeout). A file that is not a database
    is moved aside (``*.corrupt-<time>``) and a fresh cache started. The cache only
    saves time: a SQLite failure during a run (disk full, a damaged file, a lock that
    never clears) disables it for the rest of the run with one warning on stderr
    (:attr:`disabled` says why) instead of stopping the run. On a network
    filesystem (or with ``MASKLENS_CACHE_MODE=files``) each process writes its own
    file, merged into the database at close (:mod:`masklens.core.cache.shared`).
    """

    FILENAME = "predictions.sqlite3"

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.path = self.root / self.FILENAME
        self._lock = threading.RLock()
        self.hits = 0
        self.misses = 0
        #: entries found invalid in this run (ignored and computed again)
        self.dropped = 0
        #: why the cache was switched off for this run (None while it works)
        self.disabled: str | None = None
        self._errors = StoreErrors(self.path, "prediction cache", "delete it to start a new cache")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if classify(exc) == FULL:  # the cache only saves time: run on without it
                self._conn: sqlite3.Connection | None = None
                self._disable(f"disk full while creating {self.root}")
                return
            raise MasklensError(
                f"cannot create the prediction cache directory ({exc.strerror})",
                path=self.root,
                hint=f"set {CACHE_DIR_ENV} to a writable directory",
            ) from None
        from masklens.core.cache.shared import cache_mode

        self.mode = cache_mode(self.root)
        self.part: Path | None = None
        # reads see the merged database and this process's part in "files" mode
        self._table, self._files = ("all_predictions", "all_image_files") if self.mode == "files" \
            else ("predictions", "image_files")
        self._conn = self._open()

    def _connect(self) -> sqlite3.Connection:
        if self.mode == "files":
            from masklens.core.cache.shared import connect_part

            conn, self.part = connect_part(self.root, self.FILENAME, _SCHEMA)
            return conn
        conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> sqlite3.Connection | None:
        try:
            return self._connect()
        except sqlite3.Error as exc:
            kind = classify(exc, self.path)
            if kind == FULL:
                self._disable(f"disk full while writing {self.path}")
                return None
            if kind not in (CORRUPT, MISSING):
                raise MasklensError(
                    f"cannot open the prediction cache ({exc})",
                    path=self.path,
                    hint=f"delete it or set {CACHE_DIR_ENV} to another directory",
                ) from None
        aside = self.path.with_name(f"{self.FILENAME}.corrupt-{int(time.time())}")
        try:
            for suffix in ("", "-wal", "-shm"):
                src = Path(f"{self.path}{suffix}")
                if src.exists():
                    os.replace(src, f"{aside}{suffix}")
            return self._connect()
        except (OSError, sqlite3.Error) as exc:
            self._disable(f"the damaged cache {self.path} could not be replaced ({exc})")
            return None

    # ------------------------------------------------------------ failures
    def _disable(self, why: str) -> None:
        """Switch the cache off for the rest of this run, with one warning on stderr."""
        if self.disabled is None:
            self.disabled = why
            print(f"masklens: warning: prediction cache disabled for this run: {why}",
                  file=sys.stderr)
        conn, self._conn = getattr(self, "_conn", None), None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _failed(self, exc: sqlite3.Error) -> None:
        kind = classify(exc, self.path)
        if kind == FULL:
            self._disable(f"disk full while writing {self.path}")
        elif kind in (CORRUPT, MISSING):
            self._disable(f"{self.path} is damaged ({exc}); delete it to start a new cache")
        else:
            self._disable(f"{self.path}: {exc}")

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection | None]:
        """The connection under the lock (None once disabled); a SQLite error inside disables
        the cache instead of propagating."""
        with self._lock:
            if self._conn is None:
                yield None
                return
            try:
                yield self._conn
            except sqlite3.Error as exc:
                if self._conn is not None:
                    rollback_quietly(self._conn)
                self._failed(exc)

    def _strict(self, action: str) -> contextlib.AbstractContextManager[Any]:
        """For explicit commands (clear, size): a SQLite error is a clear MasklensError."""
        errors = self._errors

        @contextlib.contextmanager
        def guard() -> Iterator[None]:
            try:
                yield
            except sqlite3.Error as exc:
                raise errors(exc, action) from None

        return guard()

    # ------------------------------------------------------------ access
    def get(self, key: PredictionKey) -> SegmentResult | None:
        """The cached result for ``key`` or None (an unreadable entry counts as missing)."""
        row = None
        with self._db() as db:
            if db is not None:
                row = db.execute(f"SELECT result FROM {self._table} WHERE key = ?", (key.digest,)).fetchone()
        if row is not None:
            result = self._parse(row[0])
            if result is not None:
                self.hits += 1
                return result
        self.misses += 1
        return None

    def _parse(self, text: Any) -> SegmentResult | None:
        (result,) = self._parse_many([text])
        return result

    def _parse_many(self, texts: list[Any]) -> list[SegmentResult | None]:
        """Entries read as untrusted input (:func:`~masklens.core.cache.entries.parse_entries`, one bulk RLE
        check): a
        bad one counts as missing (computed again and replaced), with one warning per cache."""
        out: list[SegmentResult | None] = []
        for result in parse_entries(texts):
            if isinstance(result, BadEntry):
                self.dropped += 1
                if self.dropped == 1:
                    msg = (f"masklens: warning: {self.path}: ignoring an invalid prediction cache "
                           f"entry ({result}); it is computed again (any further ones too)")
                    print(msg, file=sys.stderr)
                    logging.getLogger("masklens").info(msg)
                result = None
            out.append(result)
        return out

    def get_many(self, keys: Iterable[PredictionKey]) -> dict[str, SegmentResult]:
        """Cached results for several keys in one query: ``{key.digest: result}`` of the hits."""
        wanted = list({k.digest for k in keys})
        rows: list[tuple[str, str]] = []
        with self._db() as db:
            if db is not None:
                for i in range(0, len(wanted), 500):
                    chunk = wanted[i:i + 500]  # stay under SQLite's parameter limit
                    rows += db.execute(
                        f"SELECT key, result FROM {self._table} WHERE key IN ({','.join('?' * len(chunk))})",
                        chunk,
                    ).fetchall()
        out: dict[str, SegmentResult] = {}
        for (digest, _), result in zip(rows, self._parse_many([t for _, t in rows]), strict=True):
            if result is not None:
                out[digest] = result
        self.hits += len(out)
        self.misses += len(wanted) - len(out)
        return out

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, PredictionKey):
            return False
        row = None
        with self._db() as db:
            if db is not None:
                row = db.execute(f"SELECT 1 FROM {self._table} WHERE key = ?", (key.digest,)).fetchone()
        return row is not None

    def put(self, key: PredictionKey, result: SegmentResult) -> None:
        """Store ``result`` under ``key`` (replacing any previous entry), committed at once."""
        text = result_json_text(result)
        self.put_many([(key, text)])

    def put_many(self, items: Iterable[tuple[PredictionKey, SegmentResult | str]]) -> None:
        """Store several results in one transaction (all or none)."""
        rows = []
        now = time.time()
        for key, result in items:
            text = (
                result
                if isinstance(result, str)
                else result_json_text(result)
            )
            rows.append(
                (key.digest, key.backend, key.checkpoint, key.image, key.prompt, key.role,
                 key.params, text, now)
            )
        if not rows:
            return
        with self._db() as db:
            if db is None:
                return
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT OR REPLACE INTO predictions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                db.execute("COMMIT")
            except BaseException:
                rollback_quietly(db)  # after SQLITE_FULL there may be no transaction left
                raise

    # ------------------------------------------------------------ image files
    @staticmethod
    def _file_stamp(path: str | Path) -> tuple[str, int, int] | None:
        try:
            st = Path(path).stat()
        except OSError:
            return None
        return str(Path(path).resolve()), st.st_mtime_ns, st.st_size

    def file_image_key(self, path: str | Path) -> str | None:
        """The remembered :func:`image_key` of an image file, if it is unchanged since
        (same modification time and size); lets a re-run skip reading cached images."""
        stamp = self._file_stamp(path)
        if stamp is None:
            return None
        row = None
        with self._db() as db:
            if db is not None:
                row = db.execute(
                    f"SELECT image FROM {self._files} WHERE path = ? AND mtime_ns = ? AND size = ?", stamp
                ).fetchone()
        return None if row is None else str(row[0])

    def remember_file_image_key(self, path: str | Path, key: str) -> None:
        stamp = self._file_stamp(path)
        if stamp is None:
            return
        with self._db() as db:
            if db is not None:
                db.execute("INSERT OR REPLACE INTO image_files VALUES (?, ?, ?, ?)", (*stamp, key))

    def _check_editable(self) -> None:
        if self.mode == "files":
            raise MasklensError("the prediction cache on a network filesystem is merged from "
                                "per-process files and cannot be edited in place", path=self.root,
                                hint="delete the folder to clear it, or set MASKLENS_CACHE_MODE=wal "
                                "where no other process uses it")

    def delete(self, key: PredictionKey) -> None:
        self._check_editable()
        with self._db() as db:
            if db is not None:
                db.execute("DELETE FROM predictions WHERE key = ?", (key.digest,))

    def clear(self, backend: str | None = None) -> int:
        """Remove all entries (or those of one backend); returns how many were removed."""
        self._check_editable()
        with self._lock, self._strict("clearing"):
            if self._conn is None:
                return 0
            if backend is None:
                self._conn.execute("DELETE FROM image_files")
                cur = self._conn.execute("DELETE FROM predictions")
            else:
                cur = self._conn.execute("DELETE FROM predictions WHERE backend = ?", (backend,))
            return cur.rowcount

    def __len__(self) -> int:
        with self._lock, self._strict("reading"):
            if self._conn is None:
                return 0
            return int(self._conn.execute(f"SELECT COUNT(DISTINCT key) FROM {self._table}").fetchone()[0])

    def __bool__(self) -> bool:  # an empty cache is still a cache
        return True

    def size_bytes(self) -> int:
        """Bytes on disk (database plus write-ahead log)."""
        return sum(
            Path(f"{self.path}{s}").stat().st_size
            for s in ("", "-wal")
            if Path(f"{self.path}{s}").exists()
        )

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            if self._conn is not None:
                self._conn.close()
        if self.part is not None:  # "files" mode: this process's results join the database
            from masklens.core.cache.shared import merge_parts

            part, self.part = self.part, None
            merge_parts(self.root, self.FILENAME, _SCHEMA, [part])

    def __enter__(self) -> PredictionCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

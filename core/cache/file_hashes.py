"""File content hashes remembered across processes: a checkpoint's sha256 is read once per file.

A local checkpoint of several GB took seconds to hash on every load. :func:`file_sha256` keys the
hash on the file's (path, size, mtime in ns, inode): a rewritten, replaced or touched file gets a
new key and is hashed again; an unchanged one is answered from memory (this process) or from
``file_hashes.sqlite3`` in the masklens cache folder (other processes). The memo is an
optimisation only: a cache folder that cannot be opened or written means the file is hashed,
never an error.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from masklens.core.files.io import sha256_of_file

#: file name of the memo inside the cache folder
MEMO_FILE = "file_hashes.sqlite3"
_memory: dict[tuple[str, int, int, int], str] = {}
_lock = threading.Lock()


def file_key(path: Path) -> tuple[str, int, int, int]:
    """(resolved path, size, mtime_ns, inode): what says the file is the one hashed before."""
    stat = path.stat()
    return (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)


def _memo_path(cache_dir: Path | None) -> Path | None:
    if cache_dir is not None:
        return Path(cache_dir) / MEMO_FILE
    try:
        from masklens.core.cache.predictions import default_cache_dir

        return default_cache_dir() / MEMO_FILE
    except Exception:  # noqa: BLE001 - no cache folder: memo in memory only
        return None


def _connect(db_path: Path) -> sqlite3.Connection:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(db_path), timeout=5.0)
    db.execute(
        "CREATE TABLE IF NOT EXISTS file_hash (path TEXT NOT NULL, size INTEGER NOT NULL, "
        "mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL, sha256 TEXT NOT NULL, "
        "PRIMARY KEY (path, size, mtime_ns, inode))"
    )
    return db


def remembered(key: tuple[str, int, int, int], cache_dir: Path | None = None) -> str | None:
    """The hash stored for ``key`` (this process, then the memo file), or None."""
    with _lock:
        if key in _memory:
            return _memory[key]
    db_path = _memo_path(cache_dir)
    if db_path is None or not db_path.is_file():
        return None
    try:
        with contextlib.closing(_connect(db_path)) as db:
            row = db.execute(
                "SELECT sha256 FROM file_hash WHERE path=? AND size=? AND mtime_ns=? AND inode=?", key
            ).fetchone()
    except (sqlite3.Error, OSError):
        return None
    if row is None or not isinstance(row[0], str) or len(row[0]) != 64:
        return None
    with _lock:
        _memory[key] = row[0]
    return row[0]


def remember(key: tuple[str, int, int, int], digest: str, cache_dir: Path | None = None) -> None:
    """Keep ``digest`` for ``key`` in this process and, when it can be written, in the memo file."""
    with _lock:
        _memory[key] = digest
    db_path = _memo_path(cache_dir)
    if db_path is None:
        return
    with contextlib.suppress(sqlite3.Error, OSError), contextlib.closing(_connect(db_path)) as db, db:
        db.execute("DELETE FROM file_hash WHERE path=?", (key[0],))  # older versions of the file
        db.execute("INSERT OR REPLACE INTO file_hash VALUES (?, ?, ?, ?, ?)", (*key, digest))


def file_sha256(
    path: str | Path, *, cache_dir: Path | None = None, check: Callable[[], None] | None = None
) -> str:
    """sha256 of the file at ``path``, read only when not remembered for its (path, size, mtime,
    inode). ``check`` is called between 4 MiB chunks (a cancel check may raise there)."""
    path = Path(path)
    key = file_key(path)
    known = remembered(key, cache_dir)
    if known is not None:
        return known
    digest = sha256_of_file(path, check=check)
    if file_key(path) == key:  # not changed while it was read
        remember(key, digest, cache_dir)
    return digest


def forget_in_memory() -> None:
    """Drop this process' memo (tests: prove the memo file alone answers)."""
    with _lock:
        _memory.clear()

"""SQLite failures as the user sees them: disk full, damaged file, missing table, locked, other.

Both SQLite stores (the review store, the prediction cache) map every ``sqlite3.Error`` through
:func:`classify`; :func:`rollback_quietly` ends a failed transaction without hiding its error
(after SQLITE_FULL, SQLite has often rolled back already and a plain ``ROLLBACK`` would raise
"cannot rollback - no transaction is active" instead of the real cause).
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import sqlite3
import time
from pathlib import Path

#: SQLite primary result codes (https://sqlite.org/rescode.html)
_FULL = {13}  # SQLITE_FULL
_CORRUPT = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_BUSY = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_READONLY = {8}
_IOERR = {10}

FULL, CORRUPT, MISSING, BUSY, READONLY, IOERR, OTHER = (
    "full", "corrupt", "missing", "busy", "readonly", "ioerr", "other")


def disk_full(path: Path, *, below: int = 1 << 20) -> bool:
    """Whether the filesystem holding ``path`` has fewer than ``below`` bytes free."""
    for p in (path, *path.parents):
        try:
            return shutil.disk_usage(p).free < below
        except OSError:
            continue
    return False


def classify(exc: BaseException, near: Path | None = None) -> str:
    """One of FULL, CORRUPT, MISSING (a table/column is gone), BUSY, READONLY, IOERR, OTHER.
    An I/O error on a filesystem with (almost) no free space near ``near`` counts as FULL:
    SQLite reports a full disk while growing its -shm/-wal files as SQLITE_IOERR."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return FULL
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc).lower()
    if primary in _FULL or "database or disk is full" in text:
        return FULL
    if primary in _CORRUPT or "malformed" in text or "not a database" in text:
        return CORRUPT
    if "no such table" in text or "no such column" in text:
        return MISSING
    if primary in _BUSY or "locked" in text:
        return BUSY
    if primary in _READONLY or "readonly" in text:
        return READONLY
    if primary in _IOERR or "disk i/o error" in text:
        return FULL if near is not None and disk_full(near) else IOERR
    return OTHER


def rollback_quietly(db: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite still has one; never raises."""
    with contextlib.suppress(sqlite3.Error):
        if db.in_transaction:
            db.execute("ROLLBACK")


def keep_copy(path: Path) -> Path | None:
    """Copy a damaged database (and its -wal) to ``NAME.damaged-<time>``; None if that fails.
    A copy of the same bytes kept by an earlier failing read is reused (one copy, not one per
    read)."""
    same = _same_copy(path)
    if same is not None:
        return same
    stamp = time.strftime("%Y%m%d-%H%M%S")
    copy = path.with_name(f"{path.name}.damaged-{stamp}")
    try:
        shutil.copy2(path, copy)
        wal = Path(f"{path}-wal")
        if wal.exists():
            shutil.copy2(wal, f"{copy}-wal")
    except OSError:
        return None
    return copy


def _same_copy(path: Path) -> Path | None:
    """An existing ``NAME.damaged-*`` copy holding exactly the bytes of ``path`` (and its -wal)."""
    import filecmp
    import glob

    try:
        size = path.stat().st_size
        wal = Path(f"{path}-wal")
        for c in sorted(path.parent.glob(f"{glob.escape(path.name)}.damaged-*")):
            if c.name.endswith("-wal") or c.stat().st_size != size:
                continue
            cwal = Path(f"{c}-wal")
            if filecmp.cmp(path, c, shallow=False) and wal.exists() == cwal.exists() \
                    and (not wal.exists() or filecmp.cmp(wal, cwal, shallow=False)):
                return c
    except OSError:
        return None
    return None


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` starts with SQLite's file header."""
    try:
        with path.open("rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def require_existing(path: Path, what: str) -> None:
    """For read-only use: the file must exist and not be empty (SQLite would make a 0-byte file
    a new, empty database)."""
    from masklens.core.errors import DataFormatError, MasklensError

    if not path.is_file():
        if path.exists():  # a folder, a FIFO, a device: SQLite would block on or misread it
            raise MasklensError(f"not a regular file, so not a {what}", path=path)
        raise MasklensError(f"{what} not found", path=path)
    if path.stat().st_size == 0:
        raise DataFormatError(f"empty file (0 bytes): not a {what}", path=path,
                              hint="the file was left as it is")


class StoreErrors:
    """Turns a store's sqlite3 errors into clear MasklensErrors; a damaged file is copied aside
    once (``NAME.damaged-<time>``) before it is reported."""

    def __init__(self, path: Path, what: str, advice: str) -> None:
        self.path, self.what, self.advice = path, what, advice
        self.damaged_copy: Path | None = None

    def __call__(self, exc: BaseException, action: str):  # -> MasklensError
        from masklens.core.errors import DataFormatError, MasklensError

        kind = classify(exc, self.path)
        if kind == FULL:
            return MasklensError(
                f"disk full while writing {self.path} (nothing was recorded by this step)",
                hint=f"free some disk space and try again; what the {self.what} held before is kept",
            )
        if kind in (CORRUPT, MISSING):
            if self.damaged_copy is None:
                self.damaged_copy = keep_copy(self.path)
            copy = (f"a copy was kept at {self.damaged_copy}" if self.damaged_copy
                    else "no copy could be made")
            return DataFormatError(
                f"{self.path} is damaged ({exc}); {copy}; {self.advice}",
                hint="`sqlite3 FILE .recover` can often rescue the rows of a damaged SQLite file",
            )
        if kind == BUSY:
            return MasklensError(f"the {self.what} is locked by another program ({exc})",
                                 path=self.path, hint="close other programs using it and try again")
        if kind == READONLY:
            return MasklensError(f"cannot write the {self.what}: it is read-only", path=self.path)
        return MasklensError(f"cannot use the {self.what} while {action} ({exc})", path=self.path)

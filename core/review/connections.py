"""The SQLite connections to review store files: the one module that makes them.

Every store is opened through :func:`masklens.core.review.store.open_store`, which asks here:

- :func:`acquire_writer`: one connection per store file per process, kept in a process-wide
  registry keyed by the file's identity (``st_dev``, ``st_ino``) and reference counted. Opening a
  store that is already open reuses its connection, so a process never holds two connections to
  one file (SQLite's POSIX locks are per process: a second connection closed beside the first can
  let another process take the database for unused, checkpoint and delete the WAL still in use).
  The writer switches the file to WAL, ``synchronous=FULL``, and creates or upgrades its schema.
- :func:`acquire_reader`: changes nothing in the file or its folder. A store this process already
  holds for writing is read through that connection. Otherwise a rollback-journal store, or a WAL
  store whose ``-wal`` is there (a writer has it open), is read with ``mode=ro`` (SQLite's locks,
  the writer's WAL index); a WAL store with no ``-wal`` beside it is read ``immutable`` (there is
  no WAL to read, and ``mode=ro`` would leave an empty ``-wal`` and ``-shm`` behind), as is a
  store where ``mode=ro`` itself needs a write (a WAL index in a folder this user cannot write).
  An immutable reader reads the file as it was when it opened: a writer that opens meanwhile
  writes to its new WAL, which this reader does not see. The schema is read as it is (no
  upgrade); older stores lack later columns and tables.

:func:`release` gives a connection back; the last user closes it.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

from masklens.core.errors import DataFormatError, MasklensError
from masklens.core.files.sqlite_errors import (
    StoreErrors,
    is_sqlite_file,
    require_existing,
    rollback_quietly,
)
from masklens.core.review.migrations import MIGRATIONS, SCHEMA_VERSION
from masklens.core.review.reading import select_columns
from masklens.core.review.verdicts import FIELDS

_NOT_OURS = "verdicts are stored in SQLite files written by masklens"


@dataclass(eq=False)
class Connection:
    """One open store file: its SQLite connection, the lock every user of it takes, and what
    was read when it was opened."""

    path: Path
    db: sqlite3.Connection
    writable: bool
    journal_mode: str
    #: the SELECT list of the verdict fields (an older schema's missing columns read as defaults)
    verdict_columns: str
    errors: StoreErrors
    identity: tuple[int, int] | None = None
    users: int = 1
    lock: threading.RLock = field(default_factory=threading.RLock)


#: (st_dev, st_ino) -> the connection this process writes that file with
_WRITERS: dict[tuple[int, int], Connection] = {}
_REGISTRY = threading.Lock()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _registered(path: Path) -> Connection | None:
    """The writing connection this process holds on the file at ``path`` (call under _REGISTRY).
    An entry whose own path no longer names that file (deleted, its inode number reused) is
    dropped from the registry: its users keep it, nobody else is given it."""
    key = _identity(path)
    known = _WRITERS.get(key) if key is not None else None
    if known is not None and _identity(known.path) != key:
        del _WRITERS[key]  # type: ignore[arg-type]
        known.identity = None
        return None
    return known


def _errors(path: Path) -> StoreErrors:
    return StoreErrors(path, "review database", f"run `masklens review check {path}`")


def newer_schema(path: Path, version: int) -> MasklensError:
    """The error for a store written by a newer masklens (not damaged: this one cannot read it)."""
    return MasklensError(
        f"made by a newer masklens (review schema version {version}; this masklens reads up to "
        f"{SCHEMA_VERSION})", path=path, hint="upgrade masklens to open it; the file was left as it is")


# ------------------------------------------------------------------ writing
def acquire_writer(path: Path, timeout: float) -> Connection:
    """The process' writing connection to the store at ``path`` (created or upgraded)."""
    with _REGISTRY:
        known = _registered(path)
        if known is not None:
            known.users += 1
            return known
        conn = _connect_writer(path, timeout)
        conn.identity = _identity(path)
        if conn.identity is not None:
            _WRITERS[conn.identity] = conn
        return conn


def _connect_writer(path: Path, timeout: float) -> Connection:
    errors = _errors(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MasklensError(f"cannot create the folder ({exc.strerror})", path=path.parent) from None
    if path.exists() and not path.is_file():  # a folder, a FIFO, a device
        raise MasklensError("not a regular file, so not a review database; left as it is",
                            path=path, hint="give the path of a review database (or a new file)")
    if path.is_file() and path.stat().st_size and not is_sqlite_file(path):
        raise DataFormatError("not a usable review database (not an SQLite file)", path=path,
                              hint=_NOT_OURS)
    try:
        db = sqlite3.connect(str(path), timeout=timeout, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise errors(exc, "opening") from None
    try:
        db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:  # before anything is changed (the journal mode included)
            raise newer_schema(path, version)
        if version == 0 and db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            raise DataFormatError("an SQLite file of another program (tables, no review schema); "
                                  "left as it is", path=path, hint=_NOT_OURS)
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        db.execute("PRAGMA synchronous = FULL")
        _migrate(db, path)
    except sqlite3.Error as exc:
        db.close()
        raise errors(exc, "opening") from None
    except BaseException:
        db.close()
        raise
    return Connection(path, db, True, str(mode).lower(), ", ".join(FIELDS), errors)


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise newer_schema(path, version)
        for step in range(version, SCHEMA_VERSION):
            MIGRATIONS[step](db)
        if version != SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        rollback_quietly(db)
        raise


# ------------------------------------------------------------------ reading
def acquire_reader(path: Path, timeout: float) -> Connection:
    """A connection reading the store at ``path`` without changing it (see the module doc)."""
    require_existing(path, "review database")
    with _REGISTRY:
        known = _registered(path)
        if known is not None:
            known.users += 1
            return known
    if not is_sqlite_file(path):
        raise DataFormatError("not a usable review database (not an SQLite file)", path=path,
                              hint=_NOT_OURS)
    errors = _errors(path)
    db = None
    try:
        db = connect_read_only(path, timeout)
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version == 0:
            raise DataFormatError("not a masklens review database (no verdicts schema)", path=path,
                                  hint=_NOT_OURS)
        if version > SCHEMA_VERSION:
            raise newer_schema(path, version)
        cols = {r[1] for r in db.execute("PRAGMA table_info(verdicts)")}
        # no table at all: reading reports the damage
        columns = select_columns(cols, FIELDS, path=path) if cols else ", ".join(FIELDS)
        mode = str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    except sqlite3.Error as exc:
        if db is not None:
            db.close()
        raise errors(exc, "opening") from None
    except BaseException:
        if db is not None:
            db.close()
        raise
    return Connection(path, db, False, _file_journal_mode(path) or mode, columns, errors)


def _file_journal_mode(path: Path) -> str | None:
    """"wal" or "delete" as the file's header says (an immutable connection reports neither)."""
    try:
        with path.open("rb") as f:
            head = f.read(20)
    except OSError:
        return None
    return {1: "delete", 2: "wal"}.get(head[18]) if len(head) == 20 else None


def connect_read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """A connection that cannot change ``path`` and leaves nothing beside it (see the module
    doc for when it is ``mode=ro`` and when ``immutable``)."""
    uri = path.resolve().as_uri()
    wal = path.with_name(path.name + "-wal")
    if _file_journal_mode(path) == "wal" and not wal.exists():
        return _connect_uri(f"{uri}?mode=ro&immutable=1", timeout)
    db = _connect_uri(f"{uri}?mode=ro", timeout)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError as exc:
        db.close()
        if "unable to open" not in str(exc) and "readonly" not in str(exc).replace("-", ""):
            raise
    return _connect_uri(f"{uri}?mode=ro&immutable=1", timeout)


def _connect_uri(uri: str, timeout: float) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False,
                           isolation_level=None)


# ------------------------------------------------------------------ closing
def release(conn: Connection) -> None:
    """One user is done with ``conn``; the last one closes it."""
    with _REGISTRY:
        conn.users -= 1
        if conn.users > 0:
            return
        if conn.identity is not None and _WRITERS.get(conn.identity) is conn:
            del _WRITERS[conn.identity]
    with conn.lock:
        conn.db.close()

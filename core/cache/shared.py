"""The prediction cache on a network filesystem: per-process files merged at the end.

SQLite's WAL mode needs shared memory and POSIX locks that NFS, CIFS, Lustre, GPFS or BeeGFS
do not give reliably, and that is where clusters keep ``~/.cache``. There (detected from
``/proc/mounts``, or forced with ``MASKLENS_CACHE_MODE=files``) every process:

- writes its results to its own file ``parts/<host>-<pid>-<token>.sqlite3`` (one writer, no
  WAL, no shared lock), and reads ``predictions.sqlite3`` opened *immutable* (no lock at all)
  alongside it;
- at close merges its part into a copy of ``predictions.sqlite3`` and renames the copy over
  it (an atomic rename, the one step NFS makes atomic), holding ``predictions.lock`` (made
  with O_CREAT|O_EXCL) meanwhile;
- at open first merges the parts that no live process owns: those of dead processes on this
  host, and those of any host untouched for :data:`ORPHAN_AGE_S` (a killed run's finished
  work, so a re-run continues where it stopped).

``MASKLENS_CACHE_MODE=wal`` forces the one WAL database; ``auto`` (the default) picks by the
filesystem type of the cache folder.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import sqlite3
import stat
import time
from pathlib import Path

from masklens.core.errors import MasklensError
from masklens.core.files.filesystems import NETWORK_FS, filesystem_type
from masklens.core.files.temp_files import sweep_after_write

MODE_ENV = "MASKLENS_CACHE_MODE"
#: a part file of another host not written for this long is taken as left by a dead process
ORPHAN_AGE_S = 3600.0
LOCK_STALE_S = 600.0
LOCK_WAIT_S = 300.0
PARTS = "parts"


def cache_mode(root: str | Path) -> str:
    """"files" (per-process files) or "wal" (one database) for a cache folder."""
    from masklens.core.runtime import config

    mode = config.get("cache_mode")
    if mode == "auto":
        return "files" if filesystem_type(root) in NETWORK_FS else "wal"
    return mode


def _part_owner(part: Path) -> tuple[str, int]:
    """(host, pid) from a part's name ``<host>-<pid>-<token>`` (the host may hold dashes)."""
    fields = part.stem.rsplit("-", 2)
    if len(fields) != 3 or not fields[1].isdigit():
        return "", 0
    return fields[0], int(fields[1])


def _written_by_us(path: Path) -> bool:
    """A part (``<host>-<pid>-<hex>.sqlite3``) or its ``-journal`` as masklens names them, and a
    regular file (not a link, FIFO or device node): the only files the merge reads or removes, so a
    folder of the user's own files under the cache root is never touched."""
    name = path.name.removesuffix("-journal")
    token = name.removesuffix(".sqlite3").rsplit("-", 1)[-1]
    if not name.endswith(".sqlite3") or _part_owner(Path(name))[1] == 0 or not token or token.strip("0123456789abcdef"):
        return False
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def orphan_parts(root: Path, *, now: float | None = None) -> list[Path]:
    """Part files that no live process owns (see the module's docstring)."""
    now = time.time() if now is None else now
    host = socket.gethostname()
    out = []
    for part in sorted((root / PARTS).glob("*.sqlite3")):
        if not _written_by_us(part):
            continue
        owner, pid = _part_owner(part)
        try:
            age = now - part.stat().st_mtime
        except OSError:
            continue
        if (owner == host and pid and pid != os.getpid() and not _alive(pid)) or age > ORPHAN_AGE_S:
            out.append(part)
    return out


@contextlib.contextmanager
def merge_lock(root: Path):
    """``predictions.lock`` made with O_CREAT|O_EXCL (atomic on NFS v3+); a lock older than
    :data:`LOCK_STALE_S` is taken as left by a killed process and broken."""
    lock = root / "predictions.lock"
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            with contextlib.suppress(OSError):
                if time.time() - lock.stat().st_mtime > LOCK_STALE_S:
                    lock.unlink()
                    continue
            if time.monotonic() > deadline:
                raise MasklensError("the prediction cache stayed locked by another process", path=lock,
                                    hint="delete the lock file if no masklens process is running") from None
            time.sleep(0.1)
    try:
        os.write(fd, f"{socket.gethostname()} {os.getpid()} {time.time():.0f}\n".encode())
        os.close(fd)
        yield
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()


def merge_parts(root: Path, filename: str, schema: str, parts: list[Path]) -> int:
    """Merge part files into ``root/filename`` by copy + atomic rename (under the merge lock);
    removes the merged parts; returns the rows merged."""
    parts = [p for p in parts if p.exists()]
    if not parts:
        return 0
    main = root / filename
    merged = 0
    with merge_lock(root):
        tmp = root / f".{filename}.{os.getpid()}.{secrets.token_hex(4)}.tmp"  # temp_files' pattern
        try:
            dst = sqlite3.connect(tmp, isolation_level=None)
            if main.exists():
                src = sqlite3.connect(f"file:{main}?mode=ro", uri=True)
                src.backup(dst)
                src.close()
            dst.execute("PRAGMA journal_mode=DELETE")
            dst.executescript(schema)
            for part in parts:
                _roll_back_hot_journal(part)
                dst.execute("ATTACH DATABASE ? AS part", (f"file:{part}?mode=ro",))
                dst.execute("BEGIN")
                merged += dst.execute("INSERT OR REPLACE INTO main.predictions SELECT * FROM part.predictions").rowcount
                dst.execute("INSERT OR REPLACE INTO main.image_files SELECT * FROM part.image_files")
                dst.execute("COMMIT")
                dst.execute("DETACH DATABASE part")
            dst.close()
            os.replace(tmp, main)
            sweep_after_write(main)  # the copies of merges killed before their rename
        except sqlite3.DatabaseError as exc:
            raise MasklensError(f"cannot merge the prediction cache parts ({exc})", path=main) from None
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        for part in parts:
            for leftover in (part, Path(f"{part}-journal")):
                if _written_by_us(leftover):
                    with contextlib.suppress(OSError):
                        leftover.unlink()
    return merged


def _roll_back_hot_journal(part: Path) -> None:
    """A part whose writer was killed mid-transaction has a hot ``-journal``: opening it for
    writing makes SQLite roll the transaction back and delete the journal (a read-only attach
    cannot), so the merge reads the part's committed rows and no journal is left behind."""
    if not _written_by_us(Path(f"{part}-journal")):
        return
    conn = sqlite3.connect(part, isolation_level=None)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    finally:
        conn.close()


def orphan_journals(root: Path) -> list[Path]:
    """``parts/*.sqlite3-journal`` whose part file is gone (a merge that removed the part but
    not its journal, in an older masklens)."""
    return [j for j in sorted((root / PARTS).glob("*.sqlite3-journal"))
            if _written_by_us(j) and not Path(str(j)[: -len("-journal")]).exists()]


def connect_part(root: Path, filename: str, schema: str) -> tuple[sqlite3.Connection, Path]:
    """This process's part file (written) with the merged database attached read-only and
    immutable as ``shared``; temp views ``all_predictions``/``all_image_files`` read both."""
    merge_parts(root, filename, schema, orphan_parts(root))
    for journal in orphan_journals(root):
        with contextlib.suppress(OSError):
            journal.unlink()
    (root / PARTS).mkdir(parents=True, exist_ok=True)
    part = root / PARTS / f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}.sqlite3"
    conn = sqlite3.connect(f"file:{part}", uri=True, timeout=30.0, check_same_thread=False,
                           isolation_level=None)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")  # one writer: no lock traffic on the network
    conn.executescript(schema)
    main = root / filename
    if main.exists():
        conn.execute("ATTACH DATABASE ? AS shared", (f"file:{main}?immutable=1",))
    else:
        conn.execute("ATTACH DATABASE ':memory:' AS shared")
        conn.executescript(schema.replace("EXISTS ", "EXISTS shared."))
    conn.execute("CREATE TEMP VIEW all_predictions AS SELECT * FROM main.predictions "
                 "UNION ALL SELECT * FROM shared.predictions")
    conn.execute("CREATE TEMP VIEW all_image_files AS SELECT * FROM main.image_files "
                 "UNION ALL SELECT * FROM shared.image_files")
    return conn, part

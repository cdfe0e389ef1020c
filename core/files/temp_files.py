"""Sweeping the single-file temp leftovers of masklens' atomic writers.

:func:`masklens.core.files.io.atomic_write_bytes` writes ``.{name}.{pid}.{random}.tmp`` beside the
target and renames it; a writer killed in between leaves that file behind. After a successful
write, :func:`sweep_after_write` removes the leftovers of this pattern in the target's folder
whose writer is gone (its pid is not running) or that nobody has written for
:data:`STALE_AFTER_S` (a pid reused by another program). On a network filesystem another host's
writer may have written it, so there only the age counts. Only masklens' own pattern, only files
(staging folders are :func:`masklens.core.files.io.remove_stale_temps`'s), never this process's own
files younger than that (another thread may be writing one). A folder is looked at most once
per :data:`SWEEP_EVERY_S` per process, so writing many files into one folder costs one listing.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from pathlib import Path

#: ``.{name}.{pid}.{random}.tmp`` (mkstemp's random part; the prediction cache's merge copy
#: may have SQLite's ``-journal`` beside it)
PATTERN = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.(?P<rand>[A-Za-z0-9_]{4,32})\.tmp(?:-journal)?")
#: a leftover unwritten for this long is stale whatever its pid says (seconds)
STALE_AFTER_S = 3600.0
#: the least time between two sweeps of one folder by one process (seconds)
SWEEP_EVERY_S = 60.0

_lock = threading.Lock()
_last_sweep: dict[str, float] = {}


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: another user's live process
        return True
    return True


def is_stale(entry: Path, now: float | None = None, *, local: bool = True) -> bool:
    """Whether ``entry`` is a masklens temp file that is an hour old or (``local``: its pid is
    one of this machine's) whose writer is gone."""
    m = PATTERN.fullmatch(entry.name)
    if m is None:
        return False
    try:
        st = entry.lstat()
    except OSError:
        return False
    if not os.path.isfile(entry) or os.path.islink(entry):
        return False
    if (now if now is not None else time.time()) - st.st_mtime > STALE_AFTER_S:
        return True
    pid = int(m["pid"])
    return local and pid != os.getpid() and not _pid_running(pid)


def sweep_stale_temp_files(folder: str | Path) -> list[Path]:
    """Remove the stale masklens temp files in ``folder`` (errors ignored); returns them."""
    removed: list[Path] = []
    try:
        entries = [Path(e.path) for e in os.scandir(folder) if e.name.endswith((".tmp", ".tmp-journal"))]
    except OSError:
        return removed
    if not entries:
        return removed
    from masklens.core.files.filesystems import NETWORK_FS, filesystem_type

    local = filesystem_type(folder) not in NETWORK_FS
    now = time.time()
    for entry in entries:
        if is_stale(entry, now, local=local):
            with contextlib.suppress(OSError):
                entry.unlink()
                removed.append(entry)
    return removed


def sweep_after_write(target: str | Path) -> None:
    """After a successful write of ``target``: sweep its folder, unless this process did
    within :data:`SWEEP_EVERY_S`. Never raises."""
    folder = os.path.dirname(os.path.abspath(target))
    now = time.monotonic()
    with _lock:
        last = _last_sweep.get(folder)
        if last is not None and now - last < SWEEP_EVERY_S:
            return
        _last_sweep[folder] = now
        if len(_last_sweep) > 4096:  # a long session writing into very many folders
            _last_sweep.clear()
    with contextlib.suppress(Exception):
        sweep_stale_temp_files(folder)

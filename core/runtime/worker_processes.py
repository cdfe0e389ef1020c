"""Worker processes for work that parallelises (a large SA-Co/Gold subset's annotator files and
predictions, part of a large batch of IoU blocks): a fresh Python running one of masklens'
modules (``python -m MODULE``), its input pickled to its standard input when it takes one, its
answer pickled to its standard output (or to a file).

A fresh interpreter, not multiprocessing: no worker is forked from a process running threads
(the window's Qt and job threads), and none imports the caller's main script again (which
multiprocessing's spawn and fork server do, running a user's unguarded script twice). Where
no such worker can be started — a frozen desktop bundle (its program is not a Python), one
usable CPU — :func:`workers_available` is False and the caller reads in its own process: the
same result, more slowly.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import IO, Any


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity, which a container's limit sets)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def workers_available() -> bool:
    """Whether :func:`start_worker` can run a worker beside this process."""
    return not getattr(sys, "frozen", False) and usable_cpus() >= 2 and bool(sys.executable)


def start_worker(module: str, *args: str, env: Mapping[str, str] = {},
                 stdin: bool = False) -> subprocess.Popen[bytes]:  # fmt: skip
    """``python -m module args…`` in this Python, with ``env`` added to this environment;
    ``stdin``: it takes its input through a pipe, values pickled one after another that it
    reads with :func:`requests`; what it pickles to its standard output (:func:`reply`) is read
    through the pipe ``stdout``."""
    return subprocess.Popen(
        [sys.executable, "-m", module, *args], stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, **env},
    )  # fmt: skip


def stop(worker: subprocess.Popen[bytes]) -> None:
    """End a worker whose answer is no longer wanted (or already read) and wait for its end."""
    if worker.poll() is None:
        worker.kill()
    worker.wait()
    for pipe in (worker.stdin, worker.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):  # input left unwritten to a worker that has ended
                pipe.close()


def requests() -> Iterator[Any]:
    """(In a worker started with ``stdin=True``.) Each value pickled to it, one after another,
    until its input is closed."""
    while True:
        try:
            yield pickle.load(sys.stdin.buffer)
        except EOFError:
            return


def reply(value: Any) -> None:
    """(In a worker.) Pickle ``value`` to the standard output, the worker's answer."""
    sys.stdout.buffer.write(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()


def start_worker_answering_in(file: IO[bytes], module: str, *args: str,
                              env: Mapping[str, str] = {}) -> subprocess.Popen[bytes]:
    """:func:`start_worker` whose answer goes to ``file`` (a temporary file without a name),
    not a pipe: a large answer (tens of MB) is written while this process is still busy, and
    :func:`answer_in` reads it at memory speed (a pipe moves it at a few hundred MB/s, and only
    once this process reads)."""
    return subprocess.Popen(
        [sys.executable, "-m", module, *args], stdin=subprocess.DEVNULL, stdout=file,
        stderr=subprocess.DEVNULL, env={**os.environ, **env},
    )  # fmt: skip


def answer_in(worker: subprocess.Popen[bytes], file: IO[bytes]) -> Any:
    """What a worker of :func:`start_worker_answering_in` pickled to ``file``, once it has
    ended; None when it failed (a non-zero exit, an answer cut short)."""
    if worker.wait() != 0:
        return None
    try:
        file.seek(0)
        return pickle.load(file)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError):
        return None

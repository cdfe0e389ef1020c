"""A large COCO results file read ahead: in a worker process
(:mod:`masklens.core.runtime.worker_processes`) while this one loads the benchmark it is
scored against, so that once the benchmark is loaded only each record's image size is left
to look up (:func:`~masklens.core.kinds.common.cgf1.io.read_results` given the digest).

The worker reads the file as :func:`~masklens.core.kinds.common.cgf1.io.results_digest` does
and hands back the digest, or None for a file with any problem (which is then read in this
process, so every error is the plain reading's). It runs only on a CPU that nothing else
wants: the benchmark's loading keeps its cores, the worker takes what they leave idle. Its
answer goes to a temporary file without a name (no pipe to fill while this process is busy).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Iterable
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import IO

from masklens.core.errors import MasklensError
from masklens.core.files import limits
from masklens.core.kinds.common.cgf1.io import ResultsDigest, results_digest
from masklens.core.runtime.worker_processes import (
    answer_in,
    reply,
    start_worker_answering_in,
    stop,
    workers_available,
)

#: results files of at least this many bytes are read ahead; a smaller one is read in less
#: time than a worker takes to start
READ_AHEAD_BYTES = 16 << 20


class ResultsAhead:
    """A results file being read in a worker process. :meth:`digest` waits for its answer;
    :meth:`close` ends the worker when the answer is not wanted (a load that failed or was
    cancelled). The worker is also ended once the handle is garbage-collected, or at exit."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._answer = tempfile.TemporaryFile(prefix="masklens-results-")  # noqa: SIM115 - kept until close()
        try:
            worker = start_worker_answering_in(self._answer, __name__, os.fspath(path), env=limits.environment())
        except BaseException:
            self._answer.close()
            raise
        #: the worker's process id
        self.pid = worker.pid
        self._worker = worker
        self._ending = weakref.finalize(self, _end, worker, self._answer)

    def digest(self) -> ResultsDigest | None:
        """The worker's digest of the file (waiting for it), then the worker is ended; None
        when the file has a problem, the worker failed, or the handle was closed."""
        if not self._ending.alive:
            return None
        try:
            found = answer_in(self._worker, self._answer)
        finally:
            self.close()
        return None if found is None else ResultsDigest(*found)

    def close(self) -> None:
        """End the worker (if it still runs) and drop its answer; a second call does nothing."""
        self._ending()


def _end(worker: subprocess.Popen[bytes], answer: IO[bytes]) -> None:
    stop(worker)
    answer.close()


def read_results_ahead(
    path: str | os.PathLike[str] | None, benchmark_files: Iterable[str | os.PathLike[str] | None]
) -> ResultsAhead | None:
    """``path`` read ahead when worker processes are available and it is a file of at least
    :data:`READ_AHEAD_BYTES` and at most the size of the ``benchmark_files`` together (a
    benchmark loaded in less time than the results take to read would leave the worker's
    start as a delay); None otherwise, also where no worker can be started (the reading in this
    process then reports what is wrong, as it would have)."""
    if not isinstance(path, (str, os.PathLike)) or not workers_available():
        return None
    size = _bytes(path)
    if size < READ_AHEAD_BYTES or size > sum(_bytes(f) for f in benchmark_files):
        return None
    try:
        return ResultsAhead(path)
    except (OSError, MasklensError):  # no process or temporary file to be had; the settings' error
        return None


def _bytes(path: object) -> int:
    """The size of the file ``path`` names; 0 for anything else (an hf:// name, a missing file,
    None, a value of another type)."""
    if not isinstance(path, (str, os.PathLike)):
        return 0
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return 0


def _run_when_idle() -> None:
    """(In a worker.) Run only on a CPU that nothing else wants (Linux's idle scheduling), or
    else at the lowest priority."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):  # not Linux
        with contextlib.suppress(AttributeError, OSError):
            os.nice(19)


if __name__ == "__main__":  # a worker of ResultsAhead: python -m … PATH
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl+C is the asking process' to answer
    _run_when_idle()
    found = results_digest(sys.argv[1])
    reply(None if found is None else tuple(getattr(found, f.name) for f in dataclass_fields(found)))

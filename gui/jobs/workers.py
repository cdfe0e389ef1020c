"""Background jobs on the thread pool (superqt workers): progress, cooperative cancel, errors.

A job function receives a :class:`JobContext`; it reports progress with
``ctx.progress(done, total, text)`` (which also raises :class:`Cancelled` once the user
cancelled) and returns a value that is handed to ``on_done`` on the GUI thread. A
:class:`~masklens.core.errors.MasklensError` becomes its clear one-line message; any
other exception becomes "internal error: …" — never a crash.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from shiboken6 import isValid
from superqt.utils import create_worker

from masklens.core import masks
from masklens.core.errors import Cancelled, MasklensError
from masklens.core.runtime import logs

log = logging.getLogger(__name__)


class JobContext(QObject):
    """Passed to a job function: progress reporting and the cancel flag."""

    progressed = Signal(int, int, str)

    def __init__(self) -> None:
        super().__init__()
        self._cancel = threading.Event()

    def progress(self, done: int, total: int, text: str = "") -> None:
        self.check()
        self.progressed.emit(done, total, text)

    def check(self) -> None:
        if self._cancel.is_set():
            raise Cancelled()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()


#: the interpreter's switch interval while a job runs (seconds; Python's default is 0.005). Every
#: Qt virtual call on a Python-made widget takes the GIL: with a job's thread busy in Python, each
#: take waits up to one interval, so a repaint of the window (hundreds of takes) froze it for
#: hundreds of ms during a report export. A shorter interval hands the GIL back sooner.
JOB_SWITCH_INTERVAL = 0.0005
#: while a job runs, a pycocotools IoU call merges at most about this many characters of RLE
#: (:data:`masklens.core.masks.IOU_CALL_WORK`; 10–17 ns a character on a random model's 1800×1200
#: masks here, so ≤ ~10 ms): it holds the GIL for a whole call. Outside the window (scripts, the
#: command line) a matrix is one call.
JOB_IOU_CALL_WORK = 600_000
_running_lock = threading.Lock()
_running = 0
_saved_interval = 0.005


def _job_started() -> None:
    global _running, _saved_interval
    with _running_lock:
        if _running == 0:
            _saved_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved_interval, JOB_SWITCH_INTERVAL))
            masks.IOU_CALL_WORK = JOB_IOU_CALL_WORK
        _running += 1


def _job_ended() -> None:
    global _running
    with _running_lock:
        _running = max(_running - 1, 0)
        if _running == 0:
            sys.setswitchinterval(_saved_interval)
            masks.IOU_CALL_WORK = None


@contextlib.contextmanager
def gui_friendly() -> Iterator[None]:
    """While a thread of our own (not a job) runs Python, hand the GIL back to the GUI thread
    as soon as a job does (:data:`JOB_SWITCH_INTERVAL`)."""
    _job_started()
    try:
        yield
    finally:
        _job_ended()


class Job:
    def __init__(self, name: str, ctx: JobContext, worker: Any) -> None:
        self.name, self.ctx, self.worker = name, ctx, worker
        self.started = False  # its thread was started (one event-loop turn after run())


def error_message(exc: BaseException) -> str:
    """The text shown in the window for a failed job."""
    if isinstance(exc, MasklensError):
        return exc.format(window=True)
    if isinstance(exc, (MemoryError,)):
        return "out of memory"
    return logs.internal_error(exc)  # names the log file


class JobRunner(QObject):
    """Starts jobs and reports on them; the window shows progress, cancel and errors."""

    started = Signal(str)
    progressed = Signal(str, int, int, str)
    finished = Signal(str)  # succeeded, failed or cancelled
    failed = Signal(str, str)  # job name, message
    cancelled = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs: list[Job] = []
        jobs = self.jobs  # a window closed while jobs run: they stop at their next check
        self.destroyed.connect(lambda *_: [job.ctx.cancel() for job in list(jobs)])

    @property
    def busy(self) -> bool:
        return bool(self.jobs)

    def run(
        self,
        name: str,
        func: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> Job:
        """Run ``func(ctx, *args)`` on the thread pool. The thread starts one event-loop turn
        later, once the GUI thread has painted what the request changed (a job's thread busy in
        Python slows every paint; see :data:`JOB_SWITCH_INTERVAL`)."""
        ctx = JobContext()
        worker = create_worker(func, ctx, *args, _start_thread=False, _ignore_errors=True)
        job = Job(name, ctx, worker)
        ctx.progressed.connect(lambda d, t, s: isValid(self) and self.progressed.emit(name, d, t, s))

        def done(value: Any) -> None:
            if not isValid(self):  # the window (and this runner) went while the job ran
                return
            if ctx.cancelled:
                self.cancelled.emit(name)
            elif on_done is not None:
                try:
                    on_done(value)
                except Exception as exc:  # noqa: BLE001 - shown, never a crash
                    log.error("job %s: %s", name, traceback.format_exc())
                    self._fail(name, exc, on_error)

        def errored(exc: BaseException) -> None:
            if not isValid(self):
                return
            if isinstance(exc, Cancelled) or ctx.cancelled:
                self.cancelled.emit(name)
                return
            if not isinstance(exc, MasklensError):
                log.error("job %s failed:\n%s", name, "".join(traceback.format_exception(exc)))
            self._fail(name, exc, on_error)

        def finished() -> None:
            if job.started:
                job.started = False
                _job_ended()
            if job in self.jobs:
                self.jobs.remove(job)
            if isValid(self):
                self.finished.emit(name)

        worker.returned.connect(done)
        worker.errored.connect(errored)
        worker.finished.connect(finished)
        self.jobs.append(job)
        self.started.emit(name)

        def start() -> None:  # after the GUI thread has handled what is pending (the click's repaint)
            job.started = True
            _job_started()
            worker.start()

        QTimer.singleShot(0, self, start)
        return job

    def _fail(self, name: str, exc: BaseException, on_error: Callable[[str], None] | None) -> None:
        msg = error_message(exc)
        if on_error is not None:
            on_error(msg)
        self.failed.emit(name, msg)

    def cancel_all(self) -> None:
        for job in list(self.jobs):
            job.ctx.cancel()

"""Background jobs on the thread pool (superqt workers): progress, cooperative cancel, errors.

A job function receives a :class:`JobContext`; it reports progress with
``ctx.progress(done, total, text)`` (which also raises :class:`Cancelled` once the user
cancelled) and returns a value that is handed to ``on_done`` on the GUI thread. A
:class:`~masklens.core.errors.MasklensError` becomes its clear one-line message; any
other exception becomes "internal error: …" — never a crash.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from shiboken6 import isValid
from superqt.utils import create_worker

from masklens.core import masks
from masklens.core.errors import Cancelled, MasklensError
from masklens.core.runtime import gc_pause, logs

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


#: a job's pycocotools IoU calls each merge at most about this many characters of RLE
#: (:func:`masklens.core.masks.iou_call_bound`; 10–17 ns a character on a random model's
#: 1800×1200 masks here, so ≤ ~10 ms): a call holds the GIL from start to end. Outside the window
#: (scripts, the command line) a matrix is one call.
JOB_IOU_CALL_WORK = 600_000


def _in_job(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` as a job runs it: its IoU calls bounded, in the job's own thread."""
    if inspect.isgeneratorfunction(func):
        @functools.wraps(func)
        def steps(*args: Any, **kwargs: Any) -> Any:
            with masks.iou_call_bound(JOB_IOU_CALL_WORK):
                return (yield from func(*args, **kwargs))
        return steps

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        with masks.iou_call_bound(JOB_IOU_CALL_WORK):
            return func(*args, **kwargs)
    return call


@contextlib.contextmanager
def gui_friendly() -> Iterator[None]:
    """While a thread of our own (not a job) runs Python: as a job, the GIL handed back to the GUI
    thread sooner, and its IoU calls bounded."""
    gc_pause.shorten_switch_interval()
    try:
        with masks.iou_call_bound(JOB_IOU_CALL_WORK):
            yield
    finally:
        gc_pause.restore_switch_interval()


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

        def cancel_jobs(*_: object) -> None:
            for job in list(jobs):
                job.ctx.cancel()

        self.destroyed.connect(cancel_jobs)

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
        Python slows every paint; the switch interval is shortened meanwhile:
        :func:`masklens.core.runtime.gc_pause.shorten_switch_interval`)."""
        ctx = JobContext()
        worker = create_worker(_in_job(func), ctx, *args, _start_thread=False, _ignore_errors=True)
        job = Job(name, ctx, worker)

        def report(done: int, total: int, text: str) -> None:
            if isValid(self):
                self.progressed.emit(name, done, total, text)

        ctx.progressed.connect(report)

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
                gc_pause.restore_switch_interval()
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
            gc_pause.shorten_switch_interval()
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

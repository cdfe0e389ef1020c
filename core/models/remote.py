"""The window's side of the model process (:mod:`masklens.core.models.model_process`).

:class:`ModelHost` starts the process (``spawn``: no Qt state is copied into it), sends it one
request at a time and waits for the answer with the interpreter lock released, so the GUI thread
never competes with a model for it. :class:`RemoteSegmenter` is a :class:`Segmenter` whose calls
run there; :class:`~masklens.core.models.manager.ModelManager` keeps it like any other.

Cancel: while a call waits, the job's cancel check (:func:`masklens.core.models.interrupt.
current_check`) is looked at every :data:`POLL_S`; once it raises, the process is told (a shared
byte its forward passes check before every submodule) and gets :data:`CANCEL_GRACE_S` to stop.
A process that does not answer by then (busy in one long native call, e.g. reading weights) is
ended; the next request starts a new one, which loads the model again.

A process that dies (out of memory, a crash in a native library) fails the call with a clear
message; the next request starts a new one.

Another Python installation: with the ``model_python`` setting
(``MASKLENS_MODEL_PYTHON``, or the window's Model environment…) the process is that interpreter running
``python -m masklens.core.models.model_process`` (:class:`ExternalProcess`): a masklens without
torch (the desktop bundle) runs its models in an environment that has ``masklens[models]``. It
connects back over a socket of this user's (an authentication key on its stdin), and Cancel is a
SIGUSR1 it turns into the same flag.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.errors import Cancelled, ModelError
from masklens.core.models.base import Segmenter, SegmentRequest, SegmentResult

log = logging.getLogger(__name__)

#: where the window's torch models run: "separate" (the default: a process of their own) or
#: "in-process" (the window's process, as the command line runs them; for debugging a backend)
MODE_VARIABLE = "MASKLENS_MODEL_PROCESS"  # the model_process setting (core/runtime/config.py)
#: how often a waiting call looks at its job's Cancel (seconds)
POLL_S = 0.02
#: after Cancel, how long the process gets to stop before it is ended (seconds)
CANCEL_GRACE_S = 0.5
#: how long closing waits for the process to stop by itself (seconds)
STOP_TIMEOUT_S = 5.0


def _signal_hint(code: int | None) -> str:
    if code is not None and code < 0:
        return f"it was ended by signal {-code}" + (" — most often the system running out of memory"
                                                    if -code == 9 else "")
    return f"it exited with code {code}"


class ExternalProcess:
    """The model process in another Python environment: ``python -m
    masklens.core.models.model_process``, with the parts of multiprocessing's Process, Pipe end
    and shared byte that :class:`ModelHost` uses."""

    #: how long the interpreter gets to start and connect back (importing masklens there)
    CONNECT_TIMEOUT_S = 120.0

    def __init__(self, python: Path) -> None:
        import os
        import subprocess
        import tempfile
        from multiprocessing.connection import Listener

        self.python = python
        authkey = os.urandom(32)
        self._folder = tempfile.mkdtemp(prefix="masklens-model-")
        address = os.path.join(self._folder, "socket")
        listener = Listener(address, family="AF_UNIX", authkey=authkey)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}
        self._stderr = Path(self._folder) / "stderr.txt"  # a file: a pipe nobody reads would fill
        with self._stderr.open("wb") as err:
            self.popen = subprocess.Popen(
                [str(python), "-m", "masklens.core.models.model_process", address],
                stdin=subprocess.PIPE, stderr=err, env=env)
        assert self.popen.stdin is not None
        self.popen.stdin.write(authkey.hex().encode("ascii") + b"\n")
        self.popen.stdin.close()
        accepted: list[Any] = []
        waiter = threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True)
        waiter.start()
        deadline = time.monotonic() + self.CONNECT_TIMEOUT_S
        while waiter.is_alive() and self.popen.poll() is None and time.monotonic() < deadline:
            waiter.join(POLL_S)
        if not accepted:
            self.kill()
            with contextlib.suppress(OSError):
                listener.close()  # wakes the waiting accept
            raise ModelError(f"the model environment {python} did not start masklens' model process"
                             f"{': ' + self._error_tail() if self._error_tail() else ''}",
                             hint="point the Model environment at a Python with masklens[models] installed "
                                  "(pip install 'masklens[models]' in that environment)")
        listener.close()
        self.conn = accepted[0]
        self.cancel = _SignalledFlag(self.popen)

    def _error_tail(self) -> str:
        """The last line the interpreter wrote to stderr (e.g. "No module named masklens")."""
        try:
            text = self._stderr.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""
        return text.splitlines()[-1] if text else ""

    @property
    def pid(self) -> int:
        return self.popen.pid

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        import subprocess

        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout)

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()

    @property
    def exitcode(self) -> int | None:
        code = self.popen.poll()
        if code is not None:
            import shutil

            shutil.rmtree(self._folder, ignore_errors=True)
        return code


class _SignalledFlag:
    """The parent's side of Cancel for an :class:`ExternalProcess`: setting ``value`` to 1 sends
    the process SIGUSR1 (its side sets its own flag; it clears it at every request)."""

    def __init__(self, popen: Any) -> None:
        self._popen = popen
        self._value = 0

    @property
    def value(self) -> int:
        return self._value

    @value.setter
    def value(self, value: int) -> None:
        import signal

        self._value = value
        if value and self._popen.poll() is None:
            self._popen.send_signal(signal.SIGUSR1)


def model_python() -> Path | None:
    """The interpreter of the model environment (the ``model_python`` setting), or None: the
    window's own."""
    from masklens.core.runtime import config

    value: Path | None = config.get("model_python")
    return value


class ModelHost:
    """One model process for a window: started on the first request, restarted after it ended.
    ``python``: the interpreter of another environment to run it in (default: the
    ``model_python`` setting, else this process' own)."""

    def __init__(self, python: Path | None = None) -> None:
        self.python = python
        self._lock = threading.RLock()
        self._process: Any = None
        self._conn: Any = None
        self._cancel: Any = None
        #: the process' device line parts from its last answer (model_process.device_state)
        self.state: dict[str, Any] = {}

    @property
    def external_python(self) -> Path | None:
        """The interpreter of the other environment the models run in: ``python``, else the
        ``model_python`` setting; None: this process' own Python."""
        return self.python or model_python()

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.is_alive() else None

    @property
    def running(self) -> bool:
        return self.pid is not None

    def _start(self) -> None:
        import multiprocessing

        from masklens.core.models import model_process

        python = self.external_python
        if python is not None:
            external = ExternalProcess(python)
            self._process, self._conn, self._cancel = external, external.conn, external.cancel
            log.info("model process %s started in %s", external.pid, python)
            return

        ctx = multiprocessing.get_context("spawn")
        parent_end, child_end = ctx.Pipe()
        cancel = ctx.RawValue("b", 0)
        process = ctx.Process(target=model_process.main, args=(child_end, cancel),
                              name="masklens-models", daemon=True)
        process.start()
        child_end.close()
        self._process, self._conn, self._cancel = process, parent_end, cancel
        log.info("model process %s started", process.pid)

    def _discard(self, *, kill: bool, grace: float = 0.0) -> int | None:
        """Forget the process (with ``kill``, ending it unless it exits within ``grace`` seconds);
        its exit code when known."""
        process, conn = self._process, self._conn
        self._process = self._conn = self._cancel = None
        self.state = {}
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.close()
        if process is None:
            return None
        if kill and grace:
            process.join(timeout=grace)
        if kill and process.is_alive():
            process.kill()
        process.join(timeout=STOP_TIMEOUT_S)
        return process.exitcode

    def request(self, op: str, key: str | None, payload: Any) -> Any:
        """Send one request and wait for its answer; raises what the process raised, Cancelled
        when the calling job was cancelled, a ModelError when the process ended."""
        from masklens.core.models.interrupt import current_check

        check = current_check()
        while not self._lock.acquire(timeout=POLL_S):  # another request runs (e.g. the warm-up)
            if check is not None:
                check()  # a job cancelled while it waits for its turn stops now
        try:
            self.start()
            self._cancel.value = 0
            try:
                self._conn.send((op, key, payload))
            except (BrokenPipeError, OSError) as exc:
                raise self._ended() from exc
            status, value, state = self._wait(check)
            self.state = state
        finally:
            self._lock.release()
        if status == "cancelled":
            raise Cancelled()
        if status == "error":
            raise value
        return value

    def _ended(self) -> ModelError:
        code = self._discard(kill=False)
        return ModelError(f"the model process ended while working ({_signal_hint(code)})",
                          hint="run the prompt again to start it anew; a model too large for this "
                               "machine's memory ends it the same way again")

    def _wait(self, check: Any) -> tuple[str, Any, dict[str, Any]]:
        conn, process = self._conn, self._process  # stop() from another thread may forget them
        cancelled_at: float | None = None
        while True:
            try:
                if conn.poll(POLL_S):
                    return conn.recv()
            except (EOFError, OSError) as exc:
                raise self._ended() from exc
            if not process.is_alive():
                raise self._ended()
            if cancelled_at is None:
                if check is None:
                    continue
                try:
                    check()
                except Cancelled:
                    self._cancel.value = 1  # its forward passes stop at the next submodule
                    cancelled_at = time.monotonic()
            elif time.monotonic() - cancelled_at > CANCEL_GRACE_S:
                log.info("model process %s did not stop within %.1f s of Cancel: ended", self.pid, CANCEL_GRACE_S)
                self._discard(kill=True)
                raise Cancelled()

    def start(self) -> None:
        """Start the process now, in this thread (a fork and exec, plus multiprocessing's first
        import: tens of ms holding the GIL, which a background thread would take from the GUI
        thread while the window is already up); requests start it themselves otherwise."""
        with self._lock:
            if self._process is None or not self._process.is_alive():
                if self._process is not None:
                    self._discard(kill=False)
                self._start()

    def warm(self, backend: str) -> threading.Thread:
        """Start the process and import torch and ``backend``'s libraries there, in a thread of
        this process (which only waits); a failure is logged, the first prompt reports it."""

        def run() -> None:
            try:
                self.request("warm", None, backend)
            except Exception as exc:  # noqa: BLE001 - reported by the first prompt
                log.info("the model process was not prepared for %s: %s", backend, exc)

        thread = threading.Thread(target=run, name="masklens-model-process-warm", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """End the process: asked to stop, ended when it does not within STOP_TIMEOUT_S."""
        if not self._lock.acquire(timeout=STOP_TIMEOUT_S):  # a call still runs: end it
            self._discard(kill=True)
            return
        try:
            if self._process is not None and self._process.is_alive():
                with contextlib.suppress(OSError, EOFError):
                    self._conn.send(("stop", None, None))
                    if self._conn.poll(STOP_TIMEOUT_S):
                        self._conn.recv()
            self._discard(kill=True, grace=STOP_TIMEOUT_S)
        finally:
            self._lock.release()


def model_key(name: str, options: dict[str, Any]) -> str:
    return json.dumps([name, options], sort_keys=True, default=str)


class RemoteSegmenter(Segmenter):
    """A segmenter of backend ``name`` with ``options`` that lives in ``host``'s process."""

    cacheable = True

    def __init__(self, host: ModelHost, name: str, options: dict[str, Any]) -> None:
        from masklens.core.models.registry import backend_info, require_extra

        # a missing extra is named now, as a local one would be; in another environment, there
        self.info = backend_info(name) if host.external_python else require_extra(name)
        self.host, self.name, self.options = host, name, dict(options)
        self.key = model_key(name, self.options)
        self._created = False

    def _call(self, method: str, *args: Any) -> Any:
        value = self.host.request("call", self.key, (self.name, self.options, method, args))
        self._created = True
        return value

    def segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        return self._call("segment", image, request)

    def segment_many(self, image: np.ndarray, requests: list[SegmentRequest]) -> list[SegmentResult]:
        return self._call("segment_many", image, requests)

    def provenance(self) -> dict[str, Any]:
        return self._call("provenance")

    def cache_identity(self) -> str:
        return self._call("cache_identity")

    def ensure_loaded(self) -> None:
        self._call("ensure_loaded")

    def memory_bytes(self) -> int:
        """Bytes it holds on an accelerator: 0 before it was made, once its process ended, and
        without a request when that process reported no accelerator (the manager asks before
        every call)."""
        if not self._created or not self.host.running or not {"cuda", "mps"} & self.host.state.keys():
            return 0
        return int(self._call("memory_bytes"))

    def unload(self) -> None:
        if self._created and self.host.running:
            self.host.request("drop", self.key, None)
        self._created = False


def runs_apart(name: str) -> bool:
    """Whether the window runs backend ``name`` in the model process: an installed torch backend
    (one added in this process only could not be made there), unless
    :data:`MODE_VARIABLE` says "in-process"."""
    from masklens.core.errors import MasklensError
    from masklens.core.models.preload import needs_torch
    from masklens.core.models.registry import made_by_name
    from masklens.core.runtime import config

    if config.get("model_process") == "in-process":
        return False
    try:
        return made_by_name(name) and needs_torch(name)
    except MasklensError:
        return False


def window_factory(host: ModelHost) -> Any:
    """A ModelManager factory: :class:`RemoteSegmenter` where :func:`runs_apart`, else the
    backend's own segmenter in this process (the demo, replays, plug-ins)."""
    from masklens.core.models.registry import create_segmenter

    def make(name: str, **options: Any) -> Segmenter:
        if runs_apart(name):
            return RemoteSegmenter(host, name, options)
        return create_segmenter(name, **options)

    return make


def prepare(host: ModelHost, backend: str) -> threading.Thread | None:
    """Ahead of the first prompt of a session whose model runs on torch: start the model process
    and import torch there (:func:`runs_apart`), or import torch in this process in the
    background (:mod:`masklens.core.models.preload`). The thread doing it, or None."""
    import importlib.util

    from masklens.core.models import preload

    if runs_apart(backend):
        if host.running or (importlib.util.find_spec("torch") is None and not host.external_python):
            return None
        host.start()  # here, while the window is being built; the warm-up's thread only waits
        return host.warm(backend)
    return preload.start_torch_import(backend)

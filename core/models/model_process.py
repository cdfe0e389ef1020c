"""The model process: where the window's torch models load and run (the child's side).

A model running in the window's own process shares the interpreter lock with the GUI thread.
Loading weights and running a forward pass release and retake that lock thousands of times a
second (every tensor operation), and a thread that retakes it at once keeps winning it: the GUI
thread then waits tens to hundreds of milliseconds for it (measured with perf: the GUI thread
timed out in ``take_gil`` every 0.5 ms for 45 ms while Grounded SAM 2 loaded). A process of its
own has its own lock, so nothing a model does can freeze the window.

:func:`serve` answers the requests of :class:`masklens.core.models.remote.ModelHost` over a
pipe, one at a time: ``("call", key, (backend, options, method, args))`` runs a method of the
segmenter made for ``key`` (created on first use), ``("drop", key, None)`` unloads it,
``("warm", None, backend)`` imports torch and the backend's module ahead of the first prompt,
``("stop", None, None)`` ends the process. Every answer is ``(status, value, state)``: status
"ok", "cancelled" or "error", and the process' device line (:func:`device_state`).

Cancel: the parent sets a shared byte; the forward passes check it before every submodule
(:mod:`masklens.core.models.interrupt`), so a pass stops within milliseconds and the process
keeps its loaded models for the next prompt.
"""

from __future__ import annotations

import pickle
import sys
from multiprocessing.connection import Connection
from typing import Any

from masklens.core.errors import Cancelled, ModelError

#: the segmenter methods a request may call
METHODS = frozenset({"segment", "segment_many", "provenance", "cache_identity", "ensure_loaded",
                     "memory_bytes", "unload"})


def device_state() -> dict[str, Any]:
    """The process' device line parts: CUDA memory when a GPU is in use (never imports torch)."""
    torch = sys.modules.get("torch")
    state: dict[str, Any] = {"torch": torch is not None}
    if torch is None:
        return state
    try:
        if torch.cuda.is_available():
            i = torch.cuda.current_device()
            state.update(cuda=i, name=torch.cuda.get_device_name(i),
                         allocated=torch.cuda.memory_allocated(i), reserved=torch.cuda.memory_reserved(i),
                         total=torch.cuda.get_device_properties(i).total_memory)
        elif getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            state["mps"] = True
    except Exception:  # noqa: BLE001 - a status line must never fail
        pass
    return state


def portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling (its type and fields), else a ModelError with its text."""
    try:
        copy = pickle.loads(pickle.dumps(exc))
        if type(copy) is type(exc) and str(copy) == str(exc):
            return exc
    except Exception:  # noqa: BLE001 - any exception type may refuse pickling
        pass
    text = str(exc) or type(exc).__name__
    return ModelError(f"{type(exc).__name__}: {text}" if not isinstance(exc, ModelError) else text)


def _estimate(segmenter: Any) -> int:
    from masklens.core.models.manager import estimate_gpu_bytes

    return estimate_gpu_bytes(segmenter)


def main(conn: Connection, cancel: Any) -> None:
    """The process' entry point: Ctrl+C in the terminal is the window's to handle (it ends this
    process by closing the pipe), then :func:`serve`."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(conn, cancel)


def serve(conn: Connection, cancel: Any) -> None:
    """Answer requests until "stop" or until the parent's end of the pipe closes."""
    from masklens.core.models.interrupt import cancel_check
    from masklens.core.models.registry import create_segmenter

    segmenters: dict[str, Any] = {}

    def check() -> None:
        if cancel.value:
            raise Cancelled()

    while True:
        try:
            op, key, payload = conn.recv()
        except (EOFError, OSError):  # the window's process has gone
            return
        try:
            value: Any = None
            if op == "stop":
                conn.send(("ok", None, device_state()))
                return
            if op == "warm":
                from masklens.core.models.preload import needs_torch
                from masklens.core.models.registry import require_extra
                from masklens.core.models.torch_device import import_torch

                require_extra(payload)
                if needs_torch(payload):
                    import_torch()
            elif op == "drop":
                segmenter = segmenters.pop(key, None)
                if segmenter is not None:
                    segmenter.unload()
            elif op == "call":
                backend, options, method, args = payload
                if method not in METHODS:
                    raise ModelError(f"the model process has no method '{method}'")
                segmenter = segmenters.get(key)
                if segmenter is None:
                    segmenter = segmenters[key] = create_segmenter(backend, **options)
                with cancel_check(check):
                    if method == "memory_bytes":
                        value = _estimate(segmenter)
                    else:
                        value = getattr(segmenter, method)(*args)
            else:
                raise ModelError(f"the model process got an unknown request '{op}'")
            conn.send(("ok", value, device_state()))
        except Cancelled:
            conn.send(("cancelled", None, device_state()))
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the window
            conn.send(("error", portable(exc), device_state()))


class _Flag:
    """Cancel in a process of another environment: set by SIGUSR1 from the window's process."""

    value = 0


class _ClearingConnection:
    """The connection to the window's process, clearing the Cancel flag as each request arrives."""

    def __init__(self, conn: Any, flag: _Flag) -> None:
        self._conn, self._flag = conn, flag

    def recv(self) -> Any:
        request = self._conn.recv()
        self._flag.value = 0
        return request

    def send(self, value: Any) -> None:
        self._conn.send(value)


def connect_back(address: str) -> None:
    """The entry point of the model process in another Python environment
    (:class:`masklens.core.models.remote.ExternalProcess`): connect to the window's process at
    ``address`` with the key read from stdin, then :func:`main`."""
    import signal
    from multiprocessing.connection import Client

    authkey = bytes.fromhex(sys.stdin.readline().strip())
    conn = Client(address, family="AF_UNIX", authkey=authkey)
    flag = _Flag()

    def cancelled(signum: int, frame: object) -> None:
        flag.value = 1

    signal.signal(signal.SIGUSR1, cancelled)
    main(_ClearingConnection(conn, flag), flag)  # type: ignore[arg-type]  # recv/send as a Connection's


if __name__ == "__main__":
    connect_back(sys.argv[1])

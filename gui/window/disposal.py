"""Dropping large structures without freezing the window.

Replacing 100,000 readout records frees 100,000 dicts in one C call chain on whichever thread
drops the last reference — half a second with the GIL held. :func:`release_later` hands the
old structure to a daemon thread that takes it apart in small slices, so the GIL changes hands
between slices and the GUI thread never waits long. A structure someone else still references
is never emptied: it is looked at again a little later, and let go if it stays shared.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from typing import Any

from masklens.core.scoring.records import Records

SLICE = 256
PAUSE = 0.002  # seconds between slices
_queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


RETRIES = 100  # × 20 ms: how long a structure may stay shared before it is simply let go


def _run() -> None:
    while True:
        obj, tries = _queue.get()
        # 2 = this frame's name + getrefcount's argument: nobody else holds it, nobody can get it
        if sys.getrefcount(obj) == 2:
            _dismantle(obj)
        elif tries < RETRIES:  # still held (e.g. by the model that is about to replace it)
            time.sleep(0.02)
            _queue.put((obj, tries + 1))
        del obj


def _dismantle(obj: Any) -> None:
    """Free ``obj``'s items a slice at a time, sleeping between slices: the sleep hands the GIL
    to the GUI thread, which re-takes it for each Python call while it paints."""
    if isinstance(obj, Records):  # its records: the list that holds them, unless still iterated
        obj = obj.release()
        if sys.getrefcount(obj) > 2:  # this frame's name + getrefcount's argument
            return
    if isinstance(obj, list):
        while obj:
            del obj[-SLICE:]
            time.sleep(PAUSE)
    elif isinstance(obj, dict):
        while obj:
            for _ in range(min(SLICE, len(obj))):
                obj.popitem()
            time.sleep(PAUSE)


def release_later(*objs: Any) -> None:
    """Let go of ``objs`` (lists, dicts or :class:`Records`) on a background thread, slice by slice."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="masklens-release", daemon=True)
            _thread.start()
    for o in objs:
        if isinstance(o, list | dict | Records) and len(o) > SLICE:
            _queue.put((o, 0))

"""Decode the images of the samples next to the one shown, off the GUI thread, so that the next
sample switch finds them in the window's image cache (:class:`~masklens.gui.canvas.image_cache.ImageStore`).

One daemon thread works through the latest request only: a new request (the user moved on)
replaces what was still waiting; the thread ends after :data:`IDLE_EXIT_S` without work. Decoding releases the GIL, and the cache lets the GUI thread
wait for an image the thread is decoding rather than decode it twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

#: the thread ends after this many seconds without a request (the next request starts another)
IDLE_EXIT_S = 5.0


class ImagePrefetcher:
    """Decodes image refs into ``store`` on its own thread (started on the first request)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._wanted: list[Any] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = False
        self._closed = False
        self.done = 0  # refs this thread has taken care of (tests and benchmarks read it)

    def request(self, refs: Iterable[Any]) -> int:
        """Decode these refs (those not cached yet), replacing any earlier request still waiting;
        returns how many were queued."""
        todo = [r for r in refs if not self.store.has_image(r)]
        with self._cond:
            if self._closed:
                return 0
            self._wanted = todo
            if todo and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="masklens-prefetch", daemon=True)
                self._thread.start()
            self._cond.notify()
        return len(todo)

    def idle(self) -> bool:
        """Nothing waiting and nothing being decoded."""
        with self._cond:
            return not self._wanted and not self._busy

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until :meth:`idle` (tests and benchmarks); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._wanted and not self._busy, timeout)

    def close(self) -> None:
        with self._cond:
            self._closed, self._wanted = True, []
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._wanted or self._closed, IDLE_EXIT_S)
                if self._closed or not self._wanted:
                    self._thread = None
                    return
                ref = self._wanted.pop(0)
                self._busy = True
            try:
                self.store.image(ref)  # cached: free; a missing file: its placeholder, recorded there
            except Exception as exc:  # noqa: BLE001 - the GUI thread decodes it again and reports
                log.info("prefetching %s failed: %s: %s", getattr(ref, "path", ref), type(exc).__name__, exc)
            self.done += 1

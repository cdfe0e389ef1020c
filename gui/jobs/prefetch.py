"""Decode the images of the samples next to the one shown, off the GUI thread, so that the next
sample switch finds them in the window's image cache (:class:`~masklens.gui.canvas.image_cache.ImageStore`);
an item may come with what to do with its decoded pixels (the panels' masks and overlays,
:mod:`masklens.gui.canvas.prefetch_panels`).

One daemon thread works through the latest request only: a new request (the user moved on)
replaces what was still waiting; the thread ends after :data:`IDLE_EXIT_S` without work. Decoding releases the GIL, and the cache lets the GUI thread
wait for an image the thread is decoding rather than decode it twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)

#: the thread ends after this many seconds without a request (the next request starts another)
IDLE_EXIT_S = 5.0
#: an item's follow-up work (decoding masks, label maps: it holds the GIL) waits until no sample
#: switch came for this long: while the user steps on quickly it would only slow the switches down
QUIET_MS = 80


class ImagePrefetcher:
    """Decodes image refs into ``store`` on its own thread (started on the first request)."""

    def __init__(self, store: Any, on_decoded: Callable[[Any], None] | None = None) -> None:
        self.store = store
        self.on_decoded = on_decoded  # called with each image's pixels as soon as they are decoded
        self._wanted: list[Any] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = False
        self._closed = False
        self._quiet_from = 0.0  # time.monotonic() from which follow-up work may run
        self._requests = 0  # how many requests came (an item's follow-up is dropped by a newer one)

    def input_arrived(self) -> None:
        """A sample switch (or another input) on the GUI thread: hold follow-up work ``QUIET_MS``."""
        self._quiet_from = time.monotonic() + QUIET_MS / 1000

    def request(self, refs: Iterable[Any]) -> int:
        """Decode these refs (those not cached yet), replacing any earlier request still waiting;
        returns how many were queued. An item may be ``(ref, then)``: ``then(pixels)`` runs on
        this thread once the image is decoded (queued even when the image is cached)."""
        todo = [r for r in refs if isinstance(r, tuple) or not self.store.has_image(r)]
        with self._cond:
            if self._closed:
                return 0
            self._wanted = todo
            self._requests += 1
            if todo and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="masklens-prefetch", daemon=True)
                self._thread.start()
            self._cond.notify_all()
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

    def _wait_quiet(self, request: int) -> bool:
        """Wait until no input came for ``QUIET_MS``; False when closed meanwhile or when a newer
        request came (its images go first; what is still wanted of this one, it asks again)."""
        with self._cond:
            while (fresh := not self._closed and self._requests == request) and \
                    (left := self._quiet_from - time.monotonic()) > 0:
                self._cond.wait(left)
            return fresh

    def _run(self) -> None:
        while True:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._wanted or self._closed, IDLE_EXIT_S)
                if self._closed or not self._wanted:
                    self._thread = None
                    return
                item = self._wanted.pop(0)
                request = self._requests
                self._busy = True
            ref, then = item if isinstance(item, tuple) else (item, None)
            try:
                fresh = not self.store.has_image(ref)
                pixels = self.store.image(ref)  # cached: free; a missing file: its placeholder, recorded there
                if fresh and self.on_decoded is not None:
                    self.on_decoded(pixels)
                if then is not None and self._wait_quiet(request):
                    then(pixels)
            except Exception as exc:  # noqa: BLE001 - the GUI thread makes it again and reports
                log.info("prefetching %s failed: %s: %s", getattr(ref, "path", ref), type(exc).__name__, exc)

"""The window's on-disk prediction cache (shared with `masklens predict`), opened once, by
whichever thread needs it first: a prompt job opens it off the GUI thread (~30 ms of SQLite)."""

from __future__ import annotations

import threading
from typing import Any

from masklens.core.errors import MasklensError
from masklens.gui.window.message_bar import MessageBar


class PredictionCacheAccess:
    """The window's one prediction cache: ``cache`` (problems said in the message bar) and
    ``open()`` (thread-safe; the problem returned, for a job to say)."""

    _UNOPENED = object()

    def __init__(self, message_bar: MessageBar) -> None:
        self.message_bar = message_bar
        self._lock = threading.Lock()
        self._cache: Any = self._UNOPENED

    @property
    def cache(self) -> Any:
        """The on-disk PredictionCache shared with `masklens predict` (None if it cannot open)."""
        cache, problem = self.open()
        if problem:
            self.message_bar.show_message(problem, "warning")
        return cache

    def open(self) -> tuple[Any, str | None]:
        """(the prediction cache or None, why it could not be opened — said once); safe to call
        from a prompt job, which opens it off the GUI thread (SQLite opening takes ~30 ms)."""
        import sqlite3

        from masklens.core.cache.predictions import PredictionCache

        with self._lock:
            if self._cache is not self._UNOPENED:
                return self._cache, None
            try:
                self._cache = PredictionCache()
            except (OSError, sqlite3.Error, MasklensError) as exc:
                self._cache = None
                return None, f"prediction cache unavailable: {exc}"
            return self._cache, None

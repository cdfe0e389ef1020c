"""The window's on-disk prediction cache (shared with `masklens predict`), opened once, by
whichever thread needs it first: a prompt job opens it off the GUI thread (~30 ms of SQLite)."""

from __future__ import annotations

import threading
from typing import Any

from masklens.core.errors import MasklensError

#: one prediction cache per window, opened by whichever thread needs it first
_CACHE_LOCK = threading.Lock()


class PredictionCacheAccess:
    """Mixin of the window: ``prediction_cache`` and ``open_prediction_cache``."""

    message_bar: Any

    @property
    def prediction_cache(self) -> Any:
        """The on-disk PredictionCache shared with `masklens predict` (None if it cannot open)."""
        cache, problem = self.open_prediction_cache()
        if problem:
            self.message_bar.show_message(problem, "warning")
        return cache

    def open_prediction_cache(self) -> tuple[Any, str | None]:
        """(the prediction cache or None, why it could not be opened — said once); safe to call
        from a prompt job, which opens it off the GUI thread (SQLite opening takes ~30 ms)."""
        import sqlite3

        from masklens.core.cache.predictions import PredictionCache

        with _CACHE_LOCK:
            if getattr(self, "_prediction_cache", False) is not False:
                return self._prediction_cache, None
            try:
                self._prediction_cache = PredictionCache()
            except (OSError, sqlite3.Error, MasklensError) as exc:
                self._prediction_cache = None
                return None, f"prediction cache unavailable: {exc}"
            return self._prediction_cache, None

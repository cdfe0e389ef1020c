"""masklens' log file: a rotating file in the user log dir, set up by the CLI and the window.

``$MASKLENS_LOG_DIR`` overrides the folder (default ``platformdirs.user_log_dir("masklens")``,
on Linux ``~/.local/state/masklens/log``). The file is ``masklens.log``, rotated at 1 MiB with 3
old files kept. A folder that cannot be written only loses the log, never the command.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
from pathlib import Path

LOG_DIR_ENV = "MASKLENS_LOG_DIR"  # the log_dir setting's variable (core/runtime/config.py)
FILENAME = "masklens.log"
MAX_BYTES = 1 << 20
BACKUPS = 3
FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"

logger = logging.getLogger("masklens")


def log_dir() -> Path:
    """The ``log_dir`` setting (core/runtime/config.py)."""
    from masklens.core.runtime import config

    return config.get("log_dir")


def log_path() -> Path:
    """Where the log file is (whether or not it was written yet)."""
    return log_dir() / FILENAME


class _LogFile(logging.handlers.RotatingFileHandler):
    """The rotating log file; when it cannot be written (disk full, a folder in its place,
    another owner's file) it says so once, in one line on stderr, and writes nothing more,
    instead of Python's "--- Logging error ---" traceback on every record."""

    broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.broken:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        import sys

        if self.broken:
            return
        self.broken = True
        exc = sys.exc_info()[1]
        reason = getattr(exc, "strerror", None) or exc or "unknown error"
        with contextlib.suppress(Exception):  # stderr gone too: nothing left to tell
            sys.stderr.write(f"masklens: warning: cannot write the log file {self.baseFilename} "
                             f"({reason}); logging is off for this run\n")
        with contextlib.suppress(Exception):
            if self.stream is not None:
                self.stream.close()
        self.stream = None


def _handler() -> logging.handlers.RotatingFileHandler | None:
    for h in logger.handlers:
        if isinstance(h, logging.handlers.RotatingFileHandler):
            return h
    return None


def configure(level: int = logging.INFO) -> Path | None:
    """Attach the rotating file handler to the ``masklens`` logger (once per process, again when
    the log folder changed); returns the file's path, or None when it cannot be written."""
    path = log_path()
    current = _handler()
    if current is not None:
        if Path(current.baseFilename) == path.resolve():
            return path
        logger.removeHandler(current)
        current.close()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = _LogFile(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                           encoding="utf-8", errors="backslashreplace", delay=True)
    except OSError:
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())  # Python's last-resort stderr echo stays off
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
    logger.setLevel(min(level, logger.level or level))
    return path


def internal_error(exc: BaseException) -> str:
    """The one line a window shows for a bug: what went wrong and where the details are."""
    return f"internal error: {type(exc).__name__}: {exc} (details in the log file {log_path()})"

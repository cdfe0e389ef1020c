"""User-facing errors: one clear message naming the file, the record and the field.

A message names an argument as its caller wrote it: ``--score-threshold`` on the command line
(inside :func:`command_line`, which ``masklens`` enters), ``score_threshold=`` from Python.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

_on_command_line = False


def on_command_line() -> bool:
    """Whether this process is running a ``masklens`` command (else: called from Python)."""
    return _on_command_line


@contextlib.contextmanager
def command_line() -> Iterator[None]:
    """Within the block, messages name command-line flags (every thread: the GUI's workers too)."""
    global _on_command_line
    before, _on_command_line = _on_command_line, True
    try:
        yield
    finally:
        _on_command_line = before


def argument_name(flag: str) -> str:
    """``flag`` (``--score-threshold``) as the caller writes it: the flag itself on the command
    line, the keyword (``score_threshold=``) from Python."""
    return flag if _on_command_line else flag.lstrip("-").replace("-", "_") + "="


class Where(TypedDict):
    """Where a problem is, as the keywords of :class:`MasklensError` (``**where``), for a
    function that names the same place in several messages."""

    path: str | Path | None
    record: str | int | None
    field: str | None


class MasklensError(Exception):
    """An error caused by the user's input or environment, shown without a traceback.

    The message names where the problem is (file, record, field) and, where possible,
    what to do about it.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        record: str | int | None = None,
        field: str | None = None,
        hint: str | None = None,
        window_hint: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.record = record
        self.field = field
        self.hint = hint
        #: the hint in the window's words (e.g. the Options… dialog instead of --weights)
        self.window_hint = window_hint
        self.detail = message
        super().__init__(self.format())

    def format(self, *, window: bool = False) -> str:
        """The message; ``window=True`` gives the hint as the GUI words it, when it has its own."""
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.record is not None:
            where.append(f"record {self.record}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        text = f"{': '.join([', '.join(where)]) + ': ' if where else ''}{self.detail}"
        hint = self.window_hint if window and self.window_hint else self.hint
        if hint:
            text += f"\n  hint: {hint}"
        return text


class DataFormatError(MasklensError):
    """A benchmark, annotation or prediction file does not have the expected shape."""


class ModelError(MasklensError):
    """A model cannot be found, loaded or run (missing weights, unknown name, no CUDA)."""


class Cancelled(Exception):
    """A long job was cancelled cooperatively (Ctrl-C in the CLI, Cancel in the GUI)."""

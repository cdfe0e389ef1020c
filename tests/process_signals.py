"""Signals of a running process, read from /proc (Linux)."""

from __future__ import annotations

import signal
from pathlib import Path


def sigint_taken_over(pid: int) -> bool:
    """The process ``pid`` blocks or catches SIGINT (its program's first instruction has run),
    read from /proc/PID/status."""
    bit = 1 << (signal.SIGINT - 1)
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    return bool((int(fields["SigBlk"], 16) | int(fields["SigCgt"], 16)) & bit)

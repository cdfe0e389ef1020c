"""This process' children and open files, read from /proc (Linux)."""

from __future__ import annotations

import os
from pathlib import Path

HAS_PROC = Path("/proc/self/stat").exists()


def children_running(module: str) -> list[int]:
    """Process ids of this process' children whose command line names ``module``
    (``python -m MODULE``; one that has ended shows none)."""
    found = []
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # ended meanwhile
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == me and module.encode() in cmdline.split(b"\0"):
            found.append(int(entry.name))
    return found


def open_files_named(fragment: str) -> list[str]:
    """What this process' open file descriptors point to, where that holds ``fragment``."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if fragment in target:
            out.append(target)
    return out

"""The process' memory: resident size now and at its peak, and the memory still available.

Read from the operating system without extra libraries (``/proc`` and cgroups on Linux,
``resource`` for the peak; psutil when it is installed, elsewhere). Every reading may be None
(unknown): callers show or check nothing then, never fail.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def rss_bytes(pid: int | None = None) -> int | None:
    """Resident set size of this process (or of process ``pid``) now (None when it cannot be read)."""
    try:
        with open(f"/proc/{pid or 'self'}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import psutil

        return int(psutil.Process(pid).memory_info().rss)
    except Exception:  # noqa: BLE001 - optional library, any platform error
        return None


def peak_rss_bytes(*, children: bool = False) -> int | None:
    """The largest resident size this process has had (with ``children``: the largest of its
    ended child processes, e.g. the window's model process once stopped); None when unknown."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, KiB elsewhere


def _cgroup_room() -> int | None:
    """What the cgroup (v2) memory limit still allows, when one is set."""
    base = Path("/sys/fs/cgroup")
    try:
        limit = (base / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(int(limit) - int((base / "memory.current").read_text().strip()), 0)
    except (OSError, ValueError):
        return None


def available_bytes() -> int | None:
    """Memory a new allocation can still get without swapping: MemAvailable (Linux), bounded by
    the cgroup limit; psutil's ``available`` elsewhere; None when unknown."""
    avail: int | None = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        try:
            import psutil

            avail = int(psutil.virtual_memory().available)
        except Exception:  # noqa: BLE001 - optional library
            avail = None
    room = _cgroup_room()
    if room is not None:
        avail = room if avail is None else min(avail, room)
    return avail


def human_bytes(n: float) -> str:
    """``1.2 GB``, ``340 MB``: a size for people (decimal units)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"

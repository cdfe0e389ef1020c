"""What a folder holds, to compare before and after a command: each entry below it (links not
followed) by its mode, and a regular file also by its bytes; a device node or FIFO is never opened."""

from __future__ import annotations

import stat
from pathlib import Path


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(root))] = (st.st_mode, p.read_bytes() if stat.S_ISREG(st.st_mode) else b"")
    return out

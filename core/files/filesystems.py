"""Which filesystem holds a path, and which filesystem types are network filesystems (where
SQLite's WAL mode and pid checks across hosts do not work)."""

from __future__ import annotations

from pathlib import Path

#: filesystem types (as /proc/mounts names them) where the cache uses per-process files
NETWORK_FS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "fuse.ceph",
    "glusterfs", "fuse.glusterfs", "afs", "panfs", "wekafs", "fuse.sshfs", "9p", "fuse.juicefs",
})


def filesystem_type(path: str | Path, mounts: str | None = None) -> str:
    """The type of the filesystem holding ``path`` (the longest mount point above it in
    ``/proc/mounts``, or in ``mounts`` given as that file's text); "" when unknown."""
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
    p, tail = Path(path).absolute(), []
    while not p.exists() and p != p.parent:  # the cache folder may not exist yet
        tail.append(p.name)
        p = p.parent
    target = str(p.resolve().joinpath(*reversed(tail)))
    best, kind = -1, ""
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, kind = len(point), fields[2]
    return kind

"""The one guard for every command that writes a whole folder (``report``, ``export``,
``evaluate``, ``review apply`` of folder-shaped benchmarks, ``predict``/``merge`` of
folder-shaped predictions): an existing ``--out`` is replaced only when it holds nothing but
what masklens wrote there, and never when it is or holds one of the run's inputs.

Every folder masklens writes carries :data:`MARKER`, a JSON file that says which folder it
belongs to (the folder's ``st_dev`` and ``st_ino``: a copy of the folder, or a marker moved
into another folder, belongs to no folder) and lists every file masklens wrote there with its
SHA-256. :func:`check_replaceable` accepts a target that does not exist, an empty folder, or a
folder whose own marker lists exactly the files in it, unchanged (a sub-folder carrying its
own marker, as ``evaluate --report`` writes, is judged by that marker). Anything else — a
file, a device node, a symbolic link, a folder without its own marker, a file masklens did not
write or one changed since — is refused with one MasklensError naming the folder and the files;
nothing is ever deleted to make room. There is no name heuristic: a folder holding a
``summary.json`` or ``masklens-export.json`` of the user's is the user's.

A command checks its ``--out`` before the work and again just before putting the new folder in
place. :func:`check_replaceable` returns what it found (:class:`Checked`: every entry's
``lstat`` identity, size, mtime and ctime, taken before the files were hashed); given back as
``since``, the later check lists the folder again and hashes nothing when every entry is as it
was, and checks the folder in full (every file's bytes) when anything differs.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_text, sha256_of_file

#: the file every folder written by masklens holds (see the module doc)
MARKER = ".masklens-output.json"
_HINT = "give a new or empty folder with --out (or move those files away yourself)"
#: files named in one message at most (the rest are counted)
_NAMED = 5


@dataclass(frozen=True)
class Checked:
    """What :func:`check_replaceable` accepted at ``target``: each entry below it (``.``: the
    folder itself) with its (mode, device, inode, size, mtime_ns, ctime_ns); None: nothing was
    there. A file rewritten since changes its ctime (which no program can set back), a file
    renamed over it its inode. ``taken_ns``: when the listing began."""

    target: Path
    listing: dict[str, tuple[int, ...]] | None
    taken_ns: int

    def unchanged(self, listing: dict[str, tuple[int, ...]] | None) -> bool:
        """Whether ``listing`` (of ``target``, now) shows every entry as it was. An entry changed
        within :data:`_RACY_NS` of the first listing may change again with the same timestamps
        (file times tick coarsely): then the answer is no, and the folder is read in full."""
        if listing != self.listing:
            return False
        return all(entry[5] < self.taken_ns - _RACY_NS for entry in (self.listing or {}).values())


#: how recent a change the listing comparison does not vouch for (file clocks tick in ms steps)
_RACY_NS = 2_000_000_000


def _listing(folder: Path) -> dict[str, tuple[int, ...]] | None:
    """The :class:`Checked` listing of ``folder`` now (symbolic links not followed); None when
    nothing is there."""
    def identity(st: os.stat_result) -> tuple[int, ...]:
        return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    try:
        top = os.lstat(folder)
    except (FileNotFoundError, NotADirectoryError):
        return None
    out = {".": identity(top)}
    if not stat.S_ISDIR(top.st_mode):
        return out
    pending = [("", folder)]
    while pending:
        prefix, here = pending.pop()
        with os.scandir(here) as entries:
            for e in entries:
                st = e.stat(follow_symlinks=False)
                rel = prefix + e.name
                out[rel] = identity(st)
                if stat.S_ISDIR(st.st_mode):
                    pending.append((rel + "/", Path(e.path)))
    return out


def _own_files(folder: Path) -> Iterator[tuple[str, Path]]:
    """(relative POSIX path, path) of every entry below ``folder`` but the marker, folders left
    out (a sub-folder carrying its own marker is listed as one entry: its own marker covers it)."""
    for entry in sorted(folder.iterdir()):
        if entry.name == MARKER and entry.parent == folder:
            continue
        if entry.is_dir() and not entry.is_symlink():
            if (entry / MARKER).is_file():
                yield entry.name + "/", entry
                continue
            for rel, p in _own_files(entry):
                yield f"{entry.name}/{rel}", p
        else:
            yield entry.name, entry


def marker_record(folder: Path, what: str) -> dict[str, Any]:
    """The marker of ``folder`` as it is now: its identity and every file below it (sub-folders
    carrying their own marker listed as ``name/`` with no checksum)."""
    st = os.stat(folder)
    files: dict[str, str | None] = {}
    for rel, p in _own_files(folder):
        files[rel] = None if rel.endswith("/") else sha256_of_file(p)
    return {"written_by": "masklens", "what": what, "folder": [st.st_dev, st.st_ino], "files": files}


def write_marker(folder: Path, what: str) -> None:
    """Put the marker into ``folder`` (a staging folder, renamed into place whole: a rename keeps
    the folder's identity), listing what is in it now. Written last, after every other file."""
    atomic_write_text(folder / MARKER, json.dumps(marker_record(folder, what), indent=1) + "\n")


def _read_marker(folder: Path) -> dict[str, Any] | None:
    try:
        st = (folder / MARKER).lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > 64 << 20:
            return None
        value = json.loads((folder / MARKER).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("files"), dict):
        return None
    ident = value.get("folder")
    if not (isinstance(ident, list) and len(ident) == 2 and all(type(i) is int for i in ident)):
        return None
    return value


def _bound(folder: Path, marker: dict[str, Any]) -> bool:
    """Whether ``marker`` (read from ``folder``) names ``folder`` itself."""
    st = os.stat(folder)
    return bool(marker["folder"] == [st.st_dev, st.st_ino])


def _judge(folder: Path) -> tuple[list[str] | None, bool | None]:
    """(:func:`foreign_files` of ``folder``, whether its marker names it: None without one)."""
    marker = _read_marker(folder)
    bound = None if marker is None else _bound(folder, marker)
    if marker is None or not bound:  # what no marker lists first: the user's own additions
        listed_there = marker["files"] if marker is not None else {}
        foreign = sorted((rel for rel, _ in _own_files(folder)), key=lambda rel: (rel in listed_there, rel))
        return foreign, bound  # [] too: a sub-folder's unreadable marker is not its own
    listed: dict[str, Any] = marker["files"]
    bad: list[str] = []
    for rel, p in _own_files(folder):
        if rel not in listed:
            bad.append(rel)
        elif rel.endswith("/"):
            inner = foreign_files(p)
            if inner is not None:
                bad += [f"{rel}{x}" for x in inner] or [rel]
        elif p.is_symlink() or not p.is_file() or listed[rel] != sha256_of_file(p):
            bad.append(f"{rel} (changed since masklens wrote it)")
    return bad or None, bound


def foreign_files(folder: Path) -> list[str] | None:
    """None when ``folder``'s own marker (bound to this folder) lists exactly what is in it,
    unchanged; else the entries masklens did not write there or that changed since (relative
    paths; every entry but the marker when the marker is missing or belongs to another
    folder)."""
    return _judge(folder)[0]


def _named(names: list[str]) -> str:
    more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
    return ", ".join(names[:_NAMED]) + more


def input_paths(values: Iterable[Any]) -> list[Path]:
    """The local paths among command arguments (strings, paths, lists of them; ``hf://`` and
    ``None`` skipped)."""
    out: list[Path] = []
    for v in values:
        if v is None or isinstance(v, bool):
            continue
        if isinstance(v, list | tuple | set):
            out += input_paths(v)
        elif isinstance(v, str | os.PathLike) and not str(v).startswith("hf://") and str(v):
            out.append(Path(v))
    return out


def _real(p: Path) -> Path:
    try:
        return p.resolve()
    except (OSError, RuntimeError):
        return p.absolute()


def holds_inputs(target: str | os.PathLike[str], inputs: Iterable[Any]) -> Path | None:
    """The first of ``inputs`` (command arguments, see :func:`input_paths`) that is ``target``,
    lies inside it, or has ``target`` as its own folder (all resolved), else None."""
    real = _real(Path(target))
    for p in input_paths(inputs):
        q = _real(p)
        if q == real or real in q.parents:
            return p
    return None


def refuse_inputs(target: str | os.PathLike[str], inputs: Iterable[Any], *, flag: str = "--out") -> None:
    """MasklensError when the output ``target`` is one of the run's ``inputs`` or a folder of
    one (the benchmark's files, review stores, ``--root``, changelogs: whatever the command
    reads)."""
    held = holds_inputs(target, inputs)
    if held is not None:
        what = "is" if _real(held) == _real(Path(target)) else "holds"
        raise MasklensError(f"{what} this run's input {held}; not writing over it", path=Path(target),
                            field=flag, hint="write the output somewhere else")


def check_replaceable(target: str | Path, *, inputs: Iterable[Any] = (),
                      since: Checked | None = None) -> Checked:
    """Refuse (MasklensError naming ``target``) to write a folder over anything but nothing, an
    empty folder or a folder holding only what masklens wrote there (see the module doc), and
    over a folder that is or holds one of ``inputs`` (the run's input files and folders).

    Returns what was accepted. ``since``: this run's earlier result for ``target``; when the
    folder is listed exactly as it was then, no file is read again."""
    t = Path(target)
    refuse_inputs(t, inputs)
    taken = time.time_ns()
    try:
        listing = _listing(t)
    except OSError as exc:
        raise MasklensError(f"cannot list this output folder ({exc.strerror})", path=t) from None
    if since is not None and since.target == t and since.unchanged(listing):
        return since
    checked = Checked(t, listing, taken)
    try:
        st = os.lstat(t)
    except (FileNotFoundError, NotADirectoryError):  # nothing there (the write says why not)
        return checked
    except OSError as exc:
        raise MasklensError(f"cannot use this output folder ({exc.strerror})", path=t) from None
    if stat.S_ISLNK(st.st_mode):
        raise MasklensError("is a symbolic link; this command writes a folder, not replacing the "
                            "link or what it points to", path=t, hint="give the folder itself")
    if not stat.S_ISDIR(st.st_mode):
        what = "a file" if stat.S_ISREG(st.st_mode) else "not a folder (a device, pipe or socket)"
        raise MasklensError(f"exists and is {what}; this command writes a folder, not replacing it",
                            path=t, hint=_HINT)
    try:
        if not any(t.iterdir()):
            return checked
        foreign, bound = _judge(t)
    except OSError as exc:
        raise MasklensError(f"cannot list this output folder ({exc.strerror})", path=t) from None
    if not foreign:  # all masklens' own, or nothing at all but a marker
        return checked
    if bound is False:
        raise MasklensError(f"its {MARKER} belongs to another folder (a copy of an output is not "
                            f"masklens' own); not replacing it or its files ({_named(foreign)})",
                            path=t, hint=_HINT)
    raise MasklensError(f"holds files masklens did not write there ({_named(foreign)}); "
                        "not replacing it", path=t, hint=_HINT)


def add_to_marker(folder: Path, written: Iterable[Path]) -> None:
    """Add what masklens has just written into its own ``folder`` after the folder was put in
    place (``evaluate --report``'s report folder, which carries its own marker) to the
    folder's marker."""
    marker = _read_marker(folder)
    if marker is None:
        return
    for p in map(Path, written):
        with contextlib.suppress(ValueError, OSError):
            rel = p.relative_to(folder).as_posix()
            if p.is_dir() and (p / MARKER).is_file():  # a folder of its own marker
                marker["files"][rel + "/"] = None
            elif p.is_file():
                marker["files"][rel] = sha256_of_file(p)
    atomic_write_text(folder / MARKER, json.dumps(marker, indent=1) + "\n")

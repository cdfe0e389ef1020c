"""One guarded resolver for every path that comes from a data file, and safe file names from ids.

A path written inside an annotation or prediction file (a mask PNG, an image ``file_name``,
an OVS ``score_map``) is resolved against its declared root (``--root``, ``--images``, the
folder of the file that names it, ``--pred-dir``). :func:`inside_root` refuses, with a
DataFormatError naming the file, the record and the field:

- an absolute path or a ``..`` path that lands outside the root;
- a path whose existing part is (or passes through) a symlink leading outside the root —
  except, under a Hugging Face cache snapshot, into that repository's own ``blobs/`` (how
  huggingface_hub stores every file of a snapshot);
- a NUL character or a name component longer than the filesystem allows.

``..`` segments and symlinks that stay inside the root are fine. Users who keep their masks
or images elsewhere on purpose pass ``--allow-outside-root`` (score, predict, evaluate,
report, gui), which sets :func:`allow_outside_root` for the run. The returned path is
``root / relative`` exactly as before (not the resolved real path), so valid inputs give
the same paths, provenance and scores as they always did.

Ids used as file names (HalluSegBench ``ann_id``) go through :func:`safe_name`.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from masklens.core.errors import DataFormatError, Where, on_command_line

#: the command-line flag, named in hints
FLAG = "--allow-outside-root"
_NAME_MAX = 255  # bytes in one path component (ext4, xfs, btrfs, tmpfs, APFS, NTFS in chars)

_default_allow = False


def outside_root_allowed() -> bool:
    """Whether paths may leave their root in this run (``--allow-outside-root``)."""
    return _default_allow


@contextlib.contextmanager
def allow_outside_root(allow: bool = True) -> Iterator[None]:
    """Within the block (in every thread, e.g. the GUI's workers) paths may leave their root."""
    global _default_allow
    before = _default_allow
    _default_allow = bool(allow)
    try:
        yield
    finally:
        _default_allow = before


def set_allow_outside_root(allow: bool) -> None:
    """Set the policy for the rest of the process (the GUI session of ``masklens gui``)."""
    global _default_allow
    _default_allow = bool(allow)


def _within(child: str, root: str) -> bool:
    return child == root or child.startswith(root.rstrip(os.sep) + os.sep)


def inside_root(
    root: str | os.PathLike[str],
    relative: str | Path,
    *,
    path: str | Path | None = None,
    record: str | int | None = None,
    field: str | None = None,
    what: str = "path",
    allow: bool | None = None,
) -> Path:
    """``root / relative``, refused (DataFormatError naming ``path``/``record``/``field``) when
    it leaves ``root`` — lexically (absolute, ``..``) or through a symlink — unless allowed."""
    where: Where = {"path": path, "record": record, "field": field}
    if not isinstance(relative, (str, os.PathLike)):
        raise DataFormatError(f"expected a file name (a string), got {relative!r}", **where)
    text = os.fspath(relative)
    if "\x00" in text:
        raise DataFormatError(f"{what} contains a NUL character: {text!r}", **where)
    try:
        os.fsencode(text)
    except UnicodeEncodeError:  # a lone surrogate ('\ud800') read from a JSON escape
        raise DataFormatError(f"{what} has characters no file name can hold: {text!r}", **where) from None
    for part in Path(text).parts:
        if len(os.fsencode(part)) > _NAME_MAX:
            raise DataFormatError(
                f"{what} has a name longer than {_NAME_MAX} bytes ({part[:40]}…)", **where)
    target = Path(root) / text
    if outside_root_allowed() if allow is None else allow:
        return target
    root_abs = os.path.normpath(os.path.abspath(root))
    hint = f"{what}s are relative to {root}; " + (
        f"pass {FLAG} to read files kept elsewhere" if on_command_line() else
        "to read files kept elsewhere, call inside `with masklens.core.files.paths.allow_outside_root():`")
    if not _within(os.path.normpath(os.path.abspath(target)), root_abs):
        kind = "an absolute path" if Path(text).is_absolute() else "a path"
        raise DataFormatError(f"{kind} outside its root {root}: {text}", hint=hint, **where)
    real = os.path.realpath(target)  # resolves the symlinks of the part that exists
    if not _within(real, os.path.realpath(root_abs)) and not _in_own_blobs(real, root_abs):
        raise DataFormatError(
            f"{text} leads outside its root {root} through a symlink (to {real})", hint=hint, **where)
    return target


class RootGuard:
    """:func:`inside_root` for many names under one root, as one load meets them (SA-Co/Gold:
    15,000 image names under ``--images``). A plain name (one component, no ``..``) that is
    not a symlink in the root's listing (read once) resolves inside the root by construction:
    its real path is the root's real path joined with it. Every other name, and every name
    when the root cannot be listed, goes through :func:`inside_root` itself. The answer for
    each name (its path, or its error) equals :func:`inside_root`'s; a name met again is
    answered from memory."""

    __slots__ = ("root", "_links", "_seen")

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = root
        self._links: frozenset[str] | None = None  # the root's symlinks, once listed
        self._seen: dict[str, Path] = {}

    def _symlinks(self) -> frozenset[str] | None:
        if self._links is None:
            try:
                with os.scandir(self.root) as entries:
                    self._links = frozenset(e.name for e in entries if e.is_symlink())
            except OSError:  # not listable (missing, not a folder, no permission): every name checked
                return None
        return self._links

    def inside(self, relative: str, *, path: str | Path | None = None, record: str | int | None = None,
               field: str | None = None, what: str = "path") -> Path:
        """``root / relative`` as :func:`inside_root` answers it."""
        seen = self._seen.get(relative) if type(relative) is str else None
        if seen is not None:
            return seen
        answer = self._answer(relative, path=path, record=record, field=field, what=what)
        if type(relative) is str:
            self._seen[relative] = answer
        return answer

    def _answer(self, relative: str, *, path: str | Path | None, record: str | int | None,
                field: str | None, what: str) -> Path:
        if (type(relative) is str and relative and os.sep not in relative and relative not in (".", "..")
                and (os.altsep is None or os.altsep not in relative) and "\x00" not in relative
                and relative.isascii() and len(relative) <= _NAME_MAX):  # fmt: skip
            links = self._symlinks()
            if links is not None and relative not in links:
                return Path(self.root) / relative
        return inside_root(self.root, relative, path=path, record=record, field=field, what=what)


#: a Hugging Face cache repository folder: ``models--OWNER--NAME`` (also datasets, spaces)
_HUB_REPO = re.compile(r"^(models|datasets|spaces)--.+--.+$")


def hub_blobs(root: str) -> str | None:
    """The real ``blobs/`` folder of the Hugging Face cache repository whose snapshot holds
    ``root`` (``…/datasets--OWNER--NAME/snapshots/<revision>[/sub/folder]``), else None.
    huggingface_hub lays a snapshot out as symlinks into that folder. It must be the
    repository's own folder (``blobs/`` a real folder inside the repository's real path): a
    file's final path is checked against it, so a ``blobs/`` linked elsewhere admits nothing."""
    parts = Path(root).parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "snapshots" and _HUB_REPO.match(parts[i - 1]):
            repo = Path(*parts[:i])
            if not (repo / "blobs").is_dir():
                return None
            # the repository's own blobs/: a blobs/ that is itself a link out of the repository
            # (to the home folder, to /) would let a snapshot file reach anything below it
            own = os.path.join(os.path.realpath(repo), "blobs")
            return own if os.path.realpath(repo / "blobs") == own else None
    return None


def _in_own_blobs(real: str, root_abs: str) -> bool:
    """A path under a hub snapshot (lexically inside ``root``, checked before) whose symlink
    leads into its own repository's ``blobs/``: part of the snapshot, so inside the root."""
    blobs = hub_blobs(root_abs)
    return blobs is not None and _within(real, blobs)


_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")


def safe_name(text: str) -> str:
    """``text`` usable as (part of) one file name: path separators (``/``, ``\\``), NUL and
    control characters become ``_``, and ``.``/``..``/"" become underscores. A name that is
    already safe is returned unchanged (so valid ids keep their official file names); a name
    too long for the filesystem is reported by :func:`inside_root`."""
    name = _UNSAFE.sub("_", text)
    return "_" * max(1, len(name)) if name in ("", ".", "..") else name


def short_name(path: Path) -> str:
    """A file named with its folder, as a title (``cafe/ann.json``: a stem alone, "ann", says
    little); the name alone at a root."""
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def candidates_under(root: str | Path, names: list[str | Path]) -> list[Path]:
    """``root / name`` for each name that stays inside ``root`` (see :func:`inside_root`); the
    others are left out silently — for look-ups that try several places."""
    out = []
    for name in names:
        try:
            out.append(inside_root(root, name))
        except DataFormatError:
            continue
    return out


def add_flag(parser) -> None:  # parser: argparse.ArgumentParser
    """``--allow-outside-root`` on a command that reads paths named inside data files."""
    parser.add_argument(
        FLAG, action="store_true", dest="allow_outside_root",
        help="let paths inside the data files (masks, images, score maps, prediction files) "
        "point outside their root folder (--root, --images, the file's folder, --pred-dir) by "
        "'..', an absolute path or a symlink; refused by default",
    )

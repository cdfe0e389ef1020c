"""File helpers: atomic writes and JSON reading with clear errors."""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import math
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from masklens.core.errors import DataFormatError, MasklensError
from masklens.core.files import limits
from masklens.core.files.json_depth import json_depth_exceeds, scan_parsed
from masklens.core.files.temp_files import sweep_after_write

if TYPE_CHECKING:
    from masklens.core.files.output_dirs import Checked


def read_json(path: str | Path, *, record: str | int | None = None, field: str | None = None) -> Any:
    """Read a JSON input file within the limits (core/files/limits.py): a regular file (no FIFO or
    device: those would block or never end) of at most MASKLENS_MAX_JSON_BYTES, nested at most
    MASKLENS_MAX_JSON_DEPTH deep. Any problem raises DataFormatError naming the file."""
    p = Path(path)
    lim = limits.current()
    st = limits.check_regular_file(p, what="JSON file", path=None, record=record, field=field)

    def fail(msg: str, hint: str | None = None) -> DataFormatError:
        return DataFormatError(msg, path=p, record=record, field=field, hint=hint)

    if st.st_size > lim.max_json_bytes:
        raise fail(f"file of {st.st_size} bytes is larger than the limit ({lim.max_json_bytes} bytes)",
                   "raise MASKLENS_MAX_JSON_BYTES if this is intended")
    try:
        with p.open("rb") as fh:
            data = fh.read(lim.max_json_bytes + 1)
        if len(data) > lim.max_json_bytes:  # grew while we read it
            raise fail(f"file is larger than the limit ({lim.max_json_bytes} bytes)")
        value = _fast_parse(data, lim.max_json_depth)
        if value is _UNPARSED:  # left to ``json``, which recurses: the text is scanned first
            too_deep = json_depth_exceeds(data, lim.max_json_depth)
        else:  # orjson refused more than 1024 levels itself: _fast_parse walked the value
            too_deep = value is _TOO_DEEP
        if too_deep:
            raise fail(f"arrays/objects nest deeper than the limit ({lim.max_json_depth} levels)",
                       "raise MASKLENS_MAX_JSON_DEPTH if this is intended")
        return json.loads(data) if value is _UNPARSED else value
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except UnicodeDecodeError:
        raise fail("not a UTF-8 text file") from None
    except RecursionError:
        raise fail("arrays/objects nest too deeply to be read") from None
    except MemoryError:
        raise fail("not enough memory to read this file") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise fail(f"not valid JSON ({exc})") from None
    except OSError as exc:
        raise fail(f"cannot read file ({exc.strerror})") from None


def parse_json(raw: bytes) -> Any:
    """Parse JSON bytes with orjson (faster than ``json``) so that every file reads exactly
    as ``json`` reads it: what orjson refuses but ``json`` accepts (NaN/Infinity, lone
    surrogates) is parsed by ``json``, malformed files raise ``json``'s own
    :class:`json.JSONDecodeError` (line and column), and a value holding a float of magnitude
    2**63 or more (orjson reads integer literals beyond 64 bits as floats; ``json`` keeps them
    integers) is parsed again by ``json``."""
    value = _fast_parse(raw, 1 << 30)
    return json.loads(raw) if value is _UNPARSED else value


_UNPARSED, _TOO_DEEP = object(), object()

#: address space a parse may take per byte of text at worst (a list of ``[],`` takes ~19x)
_PARSE_BYTES_PER_BYTE = 32


def orjson_can_allocate(size: int) -> bool:
    """Whether orjson may parse ``size`` bytes here. orjson crashes the process (SIGSEGV) when
    an allocation fails, where ``json`` raises MemoryError; allocations fail before the OOM
    killer steps in only under an address-space limit (``ulimit -v``, batch schedulers), so
    there a text that could need more than the limit goes to ``json``."""
    try:
        import resource
    except ImportError:  # not a POSIX system: no RLIMIT_AS
        return True
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft == resource.RLIM_INFINITY or size * _PARSE_BYTES_PER_BYTE < soft


def _fast_parse(raw: bytes, depth_limit: int) -> Any:
    """orjson's value of ``raw`` where it equals ``json``'s; :data:`_TOO_DEEP` where that value
    nests deeper than ``depth_limit``; else :data:`_UNPARSED` (left to ``json``)."""
    if not orjson_can_allocate(len(raw)):
        return _UNPARSED
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _UNPARSED
    too_deep, huge = scan_parsed(value, depth_limit)
    return _TOO_DEEP if too_deep else _UNPARSED if huge else value


def json_safe(value: Any) -> Any:
    """Replace NaN/inf floats (recursively) by None so the JSON is standard."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return json_safe(value.item())
    return value


def sha256_of_file(path: str | Path, *, check: Callable[[], None] | None = None) -> str:
    """SHA-256 (hex) of the bytes of the file at ``path``, read whole every time (no memo).
    ``check`` is called between 4 MiB chunks (a cancel check may raise there)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            digest.update(chunk)  # hashlib releases the GIL on large buffers
            if check is not None:
                check()
    return digest.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: files and folders we write get the user's usual permissions (mkstemp/mkdtemp make them private)
_UMASK = _umask()  # read once: os.umask is process-wide, so it is only touched at import
_FILE_MODE = 0o666 & ~_UMASK
_DIR_MODE = 0o777 & ~_UMASK


def cannot_write(path: Path, exc: OSError) -> MasklensError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return MasklensError(
            f"cannot write the output: disk full while writing it ({exc.strerror})", path=path,
            hint="free some space (or write elsewhere) and run again; the previous output is kept",
        )
    reason = "it is a directory" if isinstance(exc, IsADirectoryError) else (exc.strerror or str(exc))
    return MasklensError(f"cannot write output ({reason})", path=path)


# ---------------------------------------------------------------- temp siblings of an output
def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: some other user's live process
        return True
    return True


#: a staging entry without a pid in its name (older masklens) is stale after this many seconds
LEGACY_STALE_S = 600


def _stale_owner(middle: str, entry: Path) -> bool:
    """Whether the temp sibling ``.{name}.{middle}.tmp`` / ``.{name}.old-{pid}`` belongs to no
    live process: ``middle`` is ``{pid}.{random}`` (this version), ``{pid}`` (an ``old-`` folder)
    or a bare random part (older masklens: stale once older than :data:`LEGACY_STALE_S`)."""
    pid = middle.split(".", 1)[0]
    if ("." in middle or middle.isdigit()) and pid.isdigit():
        return int(pid) != os.getpid() and not _pid_alive(int(pid))  # ours: another thread's
    try:
        return time.time() - entry.lstat().st_mtime > LEGACY_STALE_S
    except OSError:
        return False


def remove_stale_temps(target: str | Path) -> list[Path]:
    """Remove what a killed write of ``target`` left beside it (``.{name}.….tmp`` staging
    folders/files, ``.{name}.old-{pid}`` previous outputs) whose process is gone. When the kill
    came after the previous output was moved aside but before the new one took its place,
    the previous output is put back first. Returns what was removed."""
    t = Path(target)
    removed: list[Path] = []
    try:
        siblings = list(t.parent.glob(f".{glob.escape(t.name)}.*"))
    except OSError:
        return removed
    for s in siblings:
        rest = s.name[len(t.name) + 2:]
        if rest.endswith(".tmp"):
            middle, previous = rest[:-4], s / ".previous"
        elif rest.startswith("old-"):
            middle, previous = rest[4:], s
        else:
            continue
        if not _stale_owner(middle, s):
            continue
        with contextlib.suppress(OSError):
            if previous.is_dir() and not t.exists() and not t.is_symlink():
                os.replace(previous, t)  # the kill came between the two renames
        if s.is_dir() and not s.is_symlink():
            shutil.rmtree(s, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                s.unlink()
        if not s.exists():
            removed.append(s)
    return removed


def temp_sibling_dir(target: str | Path) -> Path:
    """A fresh staging folder ``.{name}.{pid}.XXXX.tmp`` beside ``target`` (after removing stale
    ones left by killed runs); raises MasklensError naming ``target`` when it cannot be made."""
    t = Path(target)
    try:
        t.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(t)
        tmp = Path(tempfile.mkdtemp(prefix=f".{t.name}.{os.getpid()}.", suffix=".tmp", dir=t.parent))
        os.chmod(tmp, _DIR_MODE)
    except OSError as exc:
        raise cannot_write(t, exc) from None
    return tmp


def named_after_output(exc: MasklensError, tmp: Path, target: Path) -> MasklensError:
    """``exc`` (raised while writing inside the staging folder ``tmp``) re-worded to name the
    output the user asked for, not the temp path."""
    if exc.path is None:
        return exc
    try:
        rel = Path(exc.path).relative_to(tmp)
    except ValueError:
        return exc
    inner = Path(*rel.parts[1:]) if rel.parts and rel.parts[0] == target.name else rel
    detail = exc.detail + (f" (at {inner})" if inner.parts and str(inner) != "." else "")
    return type(exc)(detail, path=target, record=exc.record, field=exc.field, hint=exc.hint)


def is_special_file(path: str | Path) -> bool:
    """Whether ``path`` (links followed) is a device node, FIFO or socket (``/dev/null``,
    ``/dev/stdout``): an output there is written to, never renamed over."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def write_into_special(path: str | Path, data: bytes) -> None:
    """Write ``data`` into the device or pipe ``path`` as it is (no temp file, no rename)."""
    p = Path(path)
    if stat.S_ISBLK(os.stat(p).st_mode) or stat.S_ISSOCK(os.stat(p).st_mode):
        raise MasklensError("is a block device or socket; not writing an output there", path=p,
                            hint="give a regular file (or /dev/null, /dev/stdout)")
    try:  # non-blocking open: a FIFO no program reads would block forever
        fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise MasklensError("is a pipe that no program is reading; not waiting for one", path=p,
                                hint="start the reader first, or give a regular file") from None
        raise cannot_write(p, exc) from None
    try:
        os.set_blocking(fd, True)  # the reader takes the data at its own pace
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise cannot_write(p, exc) from None


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` via a temp file in the same directory and an atomic rename.

    An unwritable destination raises MasklensError naming it; nothing partial is left behind.
    A device or pipe (``/dev/null``) is written to directly (:func:`write_into_special`).
    """
    p = Path(path)
    if is_special_file(p):
        write_into_special(p, data)
        return
    if p.is_dir():
        raise cannot_write(p, IsADirectoryError())
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{os.getpid()}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise cannot_write(p, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, p)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise cannot_write(p, exc) from None
        raise
    sweep_after_write(p)  # what killed writers left beside it (masklens.core.files.temp_files)


def atomic_write_text(path: str | Path, text: str) -> None:
    """UTF-8; a character UTF-8 cannot hold (a lone surrogate from the input) becomes '?'."""
    atomic_write_bytes(path, text.encode("utf-8", errors="replace"))


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Write standard JSON (NaN → null) atomically."""
    text = json.dumps(json_safe(obj), indent=indent, allow_nan=False)
    atomic_write_text(path, text + "\n")


def atomic_write_json_fast(path: str | Path, obj: Any, *, pretty: bool = False) -> None:
    """:func:`atomic_write_json` through orjson: compact (``pretty``: indented by 2), NaN and
    infinities as null, numpy scalars and arrays as numbers; what orjson cannot write (an
    integer beyond 64 bits, a lone surrogate) goes through :func:`atomic_write_json`."""
    option = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
    try:
        data = orjson.dumps(obj, option=option | (orjson.OPT_INDENT_2 if pretty else 0))
    except orjson.JSONEncodeError:
        atomic_write_json(path, obj, indent=2 if pretty else None)
        return
    atomic_write_bytes(path, data)


def replace_folder(staged: Path, target: Path) -> None:
    """Put the folder ``staged``, written inside a staging folder of ``target``
    (:func:`temp_sibling_dir`), at ``target`` in place of what is there: nothing, or a folder
    the caller has checked may be replaced. The previous folder is moved into the staging folder
    as ``.previous`` (:func:`remove_stale_temps` puts it back after a kill) and removed only once
    ``staged`` is in place; when that rename fails it is put back. An OSError is raised as it
    came (the caller names the output); the caller removes the staging folder. Whatever is not a
    folder itself at ``target`` — a file, a symbolic link, a device node — is never moved: an
    OSError, and nothing is touched."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        os.replace(staged, target)
        return
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder; not replacing it", os.fspath(target))
    previous = staged.parent / ".previous"
    os.replace(target, previous)
    try:
        os.replace(staged, target)
    except OSError:
        os.replace(previous, target)  # put the previous folder back
        raise
    shutil.rmtree(previous, ignore_errors=True)


@contextlib.contextmanager
def atomic_directory(path: str | Path, *, what: str = "output", inputs: Iterable[Any] = (),
                     checked: Checked | None = None) -> Iterator[Path]:
    """Yield a temp directory beside `path`; on success it replaces `path` atomically.

    An existing `path` is replaced only when it holds nothing but what masklens wrote there
    (masklens.core.files.output_dirs) and none of ``inputs``; else MasklensError, before any
    work and again just before the swap (``checked``: the caller's own check_replaceable of
    `path` in this run, which both checks compare against instead of reading every file again).
    The new folder gets the marker (``what`` wrote it). On any exception the temp directory is
    removed and `path` is left untouched.
    """
    from masklens.core.files.output_dirs import check_replaceable, write_marker

    target = Path(path)
    checked = check_replaceable(target, inputs=inputs, since=checked)
    tmp = temp_sibling_dir(target)
    staged = tmp / target.name
    try:
        staged.mkdir()
        yield staged
        write_marker(staged, what)
        check_replaceable(target, inputs=inputs, since=checked)  # nothing of the user's arrived meanwhile
        replace_folder(staged, target)
    except MasklensError as exc:
        raise named_after_output(exc, tmp, target) from None
    except OSError as exc:
        raise cannot_write(target, exc) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

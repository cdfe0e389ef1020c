"""Input limits checked before anything is allocated or decoded (docs/reliability.md, Limits).

Every check raises :class:`DataFormatError` naming the file, the record and the field. The
limits are settings (``MASKLENS_MAX_MASK_SIDE`` …, docs/configuration.md); they are read at
each check, so a test or a user can change them without restarting anything.
"""

from __future__ import annotations

import errno
import math
import os
import stat
import struct
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeGuard

from masklens.core.errors import DataFormatError
from masklens.core.runtime import config


@dataclass(frozen=True)
class Limits:
    """The input limits in force (the settings of core/runtime/config.py, docs/configuration.md)."""

    max_mask_side: int  # pixels along either side of a mask, score map or image
    max_mask_pixels: int  # height × width
    polygon_margin: float  # polygon coordinates within [-m·side, (1 + m)·side]
    max_json_bytes: int  # size of one JSON input file
    max_json_depth: int  # nesting of arrays/objects in one JSON input file
    max_image_bytes: int  # decoded size of one image (H × W × 3 bytes of RGB)
    max_batch_bytes: int  # decoded size of the images decoded together (core/files/image_batches.py)


_NAMES = tuple(f.name for f in fields(Limits))


def current() -> Limits:
    """The limits in force: the environment, the config file, the defaults (read now)."""
    return Limits(*config.read(*_NAMES))


def environment() -> dict[str, str]:
    """The limits in force as the environment variables that set them: a worker process
    started with them checks its input as this process does (the environment beats the config
    file)."""
    return {config.BY_NAME[name].env: str(value) for name, value in vars(current()).items()}


def is_int(value: Any) -> bool:
    """A JSON integer: an ``int`` that is not a ``bool`` (``true`` is not the id 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_finite_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number usable as a float: finite, not a bool, and no integer too large for a float
    (``math.isfinite(10**400)`` would raise OverflowError)."""
    if type(value) is float:
        return math.isfinite(value)
    return is_int(value) and -_FLOAT_MAX < value < _FLOAT_MAX


_FLOAT_MAX = 1 << 1023


def check_mask_size(height: Any, width: Any, *, path: Any = None, record: Any = None,
                    field: str | None = None, what: str = "mask") -> tuple[int, int]:
    """(height, width) as ints within the limits; otherwise a DataFormatError."""
    max_side, max_pixels = config.read("max_mask_side", "max_mask_pixels")
    if not (is_int(height) and is_int(width)) or height < 0 or width < 0:
        raise DataFormatError(f"{what} size must be two non-negative integers, got {height!r} × {width!r}",
                              path=path, record=record, field=field)
    if max(height, width) > max_side or height * width > max_pixels:
        raise DataFormatError(
            f"{what} of {height} × {width} pixels is larger than the limit "
            f"({max_side} px a side, {max_pixels} pixels)", path=path, record=record,
            field=field, hint="raise MASKLENS_MAX_MASK_SIDE / MASKLENS_MAX_MASK_PIXELS if this is intended")
    return int(height), int(width)


def check_polygon(coords: Sequence[Any], height: int, width: int, *, path: Any = None, record: Any = None,
                  field: str | None = None) -> None:
    """Polygon coordinates (x, y, x, y, …): finite numbers within the image ± the margin."""
    m = config.get("polygon_margin")
    for i, v in enumerate(coords):
        side = width if i % 2 == 0 else height
        if not is_finite_number(v) or not -m * side <= v <= (1 + m) * side:
            axis = "x" if i % 2 == 0 else "y"
            raise DataFormatError(
                f"polygon coordinate {axis}={v!r} is not a finite number within the image "
                f"({width} × {height}) ± {m:g}× its size", path=path, record=record, field=field)


def check_regular_file(p: Path, *, what: str = "file", path: Any = None, record: Any = None,
                       field: str | None = None) -> os.stat_result:
    """The stat of ``p`` when it is a regular file (symlinks followed); FIFOs, devices, folders,
    missing files and over-long names raise a DataFormatError (so nothing blocks on open)."""
    where = {"path": path if path is not None else p, "record": record, "field": field}
    suffix = f": {p}" if path is not None else ""
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise DataFormatError(f"{what} not found{suffix}", **where) from None
    except OSError as exc:
        reason = "the path is too long" if exc.errno == errno.ENAMETOOLONG else exc.strerror or str(exc)
        raise DataFormatError(f"cannot open {what} ({reason}){suffix}", **where) from None
    except ValueError:  # an embedded NUL character, a lone surrogate
        raise DataFormatError(f"{what} path has characters no file name can hold{suffix}", **where) from None
    if stat.S_ISDIR(st.st_mode):
        raise DataFormatError(f"expected a {what}, found a directory{suffix}", **where)
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if (
            stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) else "not a regular file"
        raise DataFormatError(f"{what} is {kind}; only regular files are read{suffix}", **where)
    return st


def exists(p: Path, *, file: bool = False) -> bool:
    """``p.exists()`` (``p.is_file()`` with ``file``) that answers False for a name the system
    cannot look up (too long, a NUL byte) instead of raising."""
    try:
        return p.is_file() if file else p.exists()
    except (OSError, ValueError):
        return False


def read_header(p: Path, n: int) -> bytes:
    """The first ``n`` bytes of a regular file (after :func:`check_regular_file`)."""
    with open(p, "rb") as fh:
        return fh.read(n)


def png_size(header: bytes) -> tuple[int, int] | None:
    """(height, width) declared by a PNG header, None when the bytes are not a PNG."""
    if len(header) < 24 or header[:8] != b"\x89PNG\r\n\x1a\n" or header[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", header[16:24])
    return height, width


#: PNG colour type -> the bit depths it allows (PNG specification, 11.2.2)
_PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def png_header_problem(header: bytes) -> str | None:
    """What is wrong with a PNG's IHDR chunk (the first 33 bytes of the file), None when it is
    sound or the bytes are not a PNG: checked here so that libpng/OpenCV never print their own
    lines about it before masklens' one clear error."""
    if len(header) < 16 or header[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    import zlib

    if len(header) < 33 or header[8:16] != b"\x00\x00\x00\rIHDR":
        return "the PNG header (IHDR) is missing or truncated"
    data = header[16:29]
    if struct.unpack(">I", header[29:33])[0] != zlib.crc32(header[12:29]):
        return "the PNG header (IHDR) is damaged (CRC error)"
    width, height, depth, colour, compression, filter_, interlace = struct.unpack(">IIBBBBB", data)
    if not width or not height:
        return f"the PNG header declares an empty image ({width} × {height})"
    if depth not in _PNG_DEPTHS.get(colour, ()) or compression or filter_ or interlace > 1:
        return (f"the PNG header is invalid (bit depth {depth}, colour type {colour}, "
                f"compression {compression}, filter {filter_}, interlace {interlace})")
    return None


def check_image_header(p: Path, *, what: str = "image", path: Any = None, record: Any = None,
                       field: str | None = None) -> None:
    """A regular file whose declared size (PNG header; other formats via Pillow's lazy open)
    is within the mask limits and whose PNG header is sound, checked before any pixel is
    decoded."""
    check_regular_file(p, what=what, path=path, record=record, field=field)
    header = read_header(p, 33)
    problem = png_header_problem(header)
    if problem is not None:
        raise DataFormatError(f"cannot decode {what}: {problem}", path=path if path is not None else p,
                              record=record, field=field)
    size = png_size(header)
    if size is None:
        size = _pillow_size(p)
    if size is not None:
        check_mask_size(*size, path=path if path is not None else p, record=record, field=field, what=what)


def image_size(p: Path) -> tuple[int, int] | None:
    """(height, width) an image file declares (PNG header; else Pillow's lazy open), before any
    pixel is decoded; None when neither can tell."""
    size = png_size(read_header(p, 24))
    return size if size is not None else _pillow_size(p)


def check_image_budget(p: Path, *, path: Any = None, record: Any = None, field: str | None = None,
                       what: str = "image") -> tuple[int, int] | None:
    """The declared (height, width) of the image ``p`` when its decoded RGB pixels fit the
    budget (MASKLENS_MAX_IMAGE_BYTES); a DataFormatError naming the image and the limit when
    they do not, before anything is decoded (a 420 KB PNG may declare 12000 × 12000)."""
    size = image_size(p)
    if size is None:
        return None
    h, w = size
    budget = current().max_image_bytes
    if h * w * 3 > budget:
        raise DataFormatError(
            f"{what} of {h} × {w} pixels needs {h * w * 3 / 2**20:.0f} MiB decoded, more than the "
            f"limit of {budget / 2**20:.0f} MiB per image", path=path if path is not None else p,
            record=record, field=field, hint="raise MASKLENS_MAX_IMAGE_BYTES if this is intended")
    return size


def _pillow_size(p: Path) -> tuple[int, int] | None:
    import warnings

    from PIL import Image

    bomb_limit = Image.MAX_IMAGE_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Image.MAX_IMAGE_PIXELS = None  # our own limit applies; Pillow only reads the header here
            with Image.open(p) as im:
                return im.size[1], im.size[0]
    except Exception:  # not an image Pillow knows: cv2 decides (and its failure is reported)
        return None
    finally:
        Image.MAX_IMAGE_PIXELS = bomb_limit  # Pillow's own guard stays on for real decoding


def check_npy_header(p: Path, *, what: str = "array", path: Any = None, record: Any = None,
                     field: str | None = None) -> tuple[tuple[int, ...], Any]:
    """(shape, dtype) of an ``.npy`` file from its header, before the data is allocated: a 2-D
    real (bool/int/float) array within the mask limits whose file holds all its data."""
    import numpy as np

    where = {"path": path if path is not None else p, "record": record, "field": field}
    st = check_regular_file(p, what=what, **where)
    try:
        with open(p, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _fortran, dtype = reader(fh, max_header_size=10000)
            offset = fh.tell()
    except (ValueError, OSError, SyntaxError, TypeError) as exc:
        raise DataFormatError(f"cannot read {what} {p} (not a readable .npy file: {exc})", **where) from None
    if dtype.hasobject or dtype.kind not in "biuf":
        raise DataFormatError(f"{what} {p} has dtype {dtype}; expected booleans, integers or real floats",
                              **where)
    if len(shape) != 2:
        raise DataFormatError(f"{what} {p} has shape {shape}; expected a 2-D array", **where)
    check_mask_size(*shape, what=what, **where)
    if 0 in shape:
        raise DataFormatError(f"{what} {p} is empty ({shape[0]} × {shape[1]})", **where)
    if st.st_size - offset < math.prod(shape) * dtype.itemsize:
        raise DataFormatError(f"{what} {p} is truncated (its header declares {shape})", **where)
    return shape, dtype

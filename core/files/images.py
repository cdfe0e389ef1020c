"""The one image decoder: every path that turns an image file into pixels calls :func:`read_image`
(the model runner and backends, the GUI, the report gallery), so a model sees the pixels a user sees.

Policy (docs/images.md says why):

- **EXIF orientation is applied**, as ``PIL.ImageOps.exif_transpose`` does (transformers'
  ``load_image``, the reference pipeline of the SAM 3 / SAM 2 / OWLv2 / Grounding DINO / CLIPSeg
  processors, and OpenCV's ``imread``). Exception: when the benchmark records the image's size and
  that size is the *stored* (unrotated) pixel grid while the oriented image is its transpose, the
  annotation was drawn on the stored pixels (as Meta's SAM 3 dataset loader reads them: PIL
  ``open().convert("RGB")``, no EXIF) and the stored pixels are used, so masks stay aligned.
- **Output**: H×W×3 ``uint8`` RGB, C-contiguous.
- **Alpha is dropped** (not composited), as ``Image.convert("RGB")`` and ``cv2.IMREAD_COLOR`` do.
- **Grey** (``1``, ``L``, ``I;16``) is replicated to three channels; **palette** images are looked up.
- **16-bit** samples keep their high byte (``v >> 8``): what Pillow does with 16-bit colour PNGs
  and OpenCV with any 16-bit image; grey 16-bit images get the same rule (Pillow would clip them).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from masklens.core.errors import DataFormatError
from masklens.core.files import limits

#: bumped whenever the decoding policy changes the pixels of some file (joins cached file keys)
DECODER_VERSION = 2

#: the EXIF tag of the orientation
_ORIENTATION = 0x0112
#: Pillow modes holding integer samples wider than 8 bits (grey)
_WIDE_GREY = {"I", "I;16", "I;16B", "I;16L", "I;16N"}


def read_image(path: str | Path, expected_size: tuple[int, int] | None = None) -> np.ndarray:
    """Decode ``path`` to H×W×3 uint8 RGB under the policy above.

    ``expected_size`` is the (height, width) the benchmark records for the image, if any; it only
    decides the EXIF exception. A missing or undecodable file is a :class:`DataFormatError`.
    """
    from PIL import ImageOps

    stored = _open(Path(path))
    image = stored
    try:
        if stored.getexif().get(_ORIENTATION, 1) != 1:  # (exif_transpose copies even when there is nothing to do)
            image = ImageOps.exif_transpose(stored)
    except (OSError, ValueError, SyntaxError, KeyError, TypeError):  # a corrupt EXIF block: keep the stored grid
        image = stored
    if expected_size is not None and image.size != stored.size:
        want = (int(expected_size[1]), int(expected_size[0]))  # PIL sizes are (width, height)
        if image.size != want and stored.size == want:
            image = stored
    return to_rgb(image, path=Path(path))


def to_rgb(image, *, path: Path | None = None) -> np.ndarray:
    """A decoded PIL image as H×W×3 uint8 RGB (alpha dropped, grey replicated, 16-bit → high byte)."""
    if image.mode in _WIDE_GREY:
        wide = np.asarray(image).astype(np.int64)
        grey = (np.clip(wide, 0, 0xFFFF) >> 8).astype(np.uint8)
        return np.ascontiguousarray(np.repeat(grey[:, :, None], 3, axis=2))
    if image.mode == "F":
        raise DataFormatError(
            "floating-point images are not supported", path=path, hint="save the image as an 8- or 16-bit PNG"
        )
    try:
        rgb = image if image.mode == "RGB" else image.convert("RGB")
    except ValueError as exc:
        raise DataFormatError(f"cannot convert image mode {image.mode} to RGB ({exc})", path=path) from exc
    return np.ascontiguousarray(np.asarray(rgb, dtype=np.uint8))


def _open(path: Path):
    """The decoded image as stored in the file (no orientation applied yet), after its declared
    size was checked against the decoded-size budget (core/files/limits.py)."""
    from PIL import Image, UnidentifiedImageError

    if not path.is_file():
        raise DataFormatError("image file not found", path=path, hint="check --images / the benchmark's image root")
    limits.check_image_budget(path)
    _quiet_pillow(Image)
    try:
        with Image.open(path) as im:
            im.load()  # the pixels stay usable after the with-block closes the file
        return im
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise DataFormatError(
            f"the image cannot be decoded ({type(exc).__name__}: {exc})",
            path=path,
            hint="re-export it as PNG or JPEG; the file may be truncated or not an image",
        ) from exc


def _quiet_pillow(image_module) -> None:
    """Pillow's decompression-bomb guard follows masklens' budget (checked before decoding), and
    Pillow's warnings (DecompressionBombWarning, "Palette images with Transparency …") go to the
    log, never to the terminal."""
    pixels = limits.current().max_image_bytes // 3
    if pixels != image_module.MAX_IMAGE_PIXELS:
        image_module.MAX_IMAGE_PIXELS = pixels
    global _warnings_routed
    if not _warnings_routed:
        _warnings_routed = True
        _route_warnings(Path(image_module.__file__).parent)


_warnings_routed = False


def _route_warnings(library: Path) -> None:
    """Warnings raised inside ``library`` (a package folder) are written to the masklens log
    instead of stderr; others are shown as before. Installed once (warnings.showwarning is
    process-wide; the decoding threads of the window share it)."""
    import logging

    shown = warnings.showwarning
    prefix = str(library)

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001, ANN202
        if str(filename).startswith(prefix):
            logging.getLogger("masklens").info("%s (%s:%s): %s", category.__name__, filename, lineno, message)
            return
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.filterwarnings("always", module=r"PIL\.")  # each one logged, not only the first


__all__ = ["DECODER_VERSION", "read_image", "to_rgb"]

"""Photograph-like test images in every form the image decoder must handle, each with the pixels it
must decode to, computed here independently of :mod:`masklens.core.files.images`.

Odd, non-square sizes; an EXIF-rotated JPEG (orientation 6); greyscale 8- and 16-bit; 16-bit colour;
palette with transparency; RGBA with varying alpha.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


def photo(height: int, width: int, seed: int) -> np.ndarray:
    """A smooth, textured H×W×3 uint8 scene: sky-to-ground gradient, two blobs, sensor noise."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    img = np.empty((height, width, 3))
    img[..., 0] = 90 + 100 * yy / max(height - 1, 1)
    img[..., 1] = 140 + 60 * np.sin(xx / max(width, 1) * 3.0)
    img[..., 2] = 210 - 120 * yy / max(height - 1, 1)
    for _ in range(2):
        cy, cx = rng.uniform(0.2, 0.8) * height, rng.uniform(0.2, 0.8) * width
        r = rng.uniform(0.15, 0.3) * min(height, width)
        blob = ((yy - cy) ** 2 + (xx - cx) ** 2) < r * r
        img[blob] = rng.uniform(20, 240, 3)
    img += rng.normal(0, 6, img.shape)
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class Case:
    """An image file and the H×W×3 uint8 RGB pixels the decoder must give for it."""

    path: Path
    expected: np.ndarray
    #: the size (height, width) of the pixel grid stored in the file (before EXIF orientation)
    stored_size: tuple[int, int]


def write_cases(folder: Path) -> dict[str, Case]:
    """Write the test images into ``folder``; name -> :class:`Case`."""
    import cv2
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    cases: dict[str, Case] = {}

    def add(name: str, expected: np.ndarray, stored: tuple[int, int]) -> None:
        cases[name] = Case(folder / name, np.ascontiguousarray(expected), stored)

    base = photo(37, 61, seed=1)  # odd, not square
    # JPEG, EXIF orientation 6 ("rotate 90° clockwise to display"): decoded stored pixels, rotated
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.fromarray(base).save(folder / "exif6.jpg", quality=92, exif=exif)
    with Image.open(folder / "exif6.jpg") as im:
        stored = np.asarray(im.convert("RGB"))
    add("exif6.jpg", np.rot90(stored, k=-1), base.shape[:2])
    # a plain JPEG (no EXIF), another odd size
    plain = photo(45, 29, seed=2)
    Image.fromarray(plain).save(folder / "plain.jpg", quality=90)
    with Image.open(folder / "plain.jpg") as im:
        add("plain.jpg", np.asarray(im.convert("RGB")), plain.shape[:2])
    grey = photo(33, 47, seed=3)[..., 1]
    Image.fromarray(grey, mode="L").save(folder / "grey.png")
    add("grey.png", np.repeat(grey[..., None], 3, axis=2), grey.shape)
    wide = (photo(31, 43, seed=4)[..., 0].astype(np.uint16) * 257 + np.arange(43, dtype=np.uint16))
    Image.fromarray(wide).save(folder / "grey16.png")  # Pillow writes mode I;16
    add("grey16.png", np.repeat((wide >> 8).astype(np.uint8)[..., None], 3, axis=2), wide.shape)
    colour16 = photo(29, 35, seed=5).astype(np.uint16) * 257 + 77
    cv2.imwrite(str(folder / "rgb16.png"), colour16[..., ::-1])  # OpenCV writes BGR
    add("rgb16.png", (colour16 >> 8).astype(np.uint8), colour16.shape[:2])
    rgb = photo(27, 41, seed=6)
    pal = Image.fromarray(rgb).quantize(colors=16)
    pal.info["transparency"] = 0
    pal.save(folder / "palette.png", transparency=0)
    lut = np.asarray(pal.getpalette()[: 16 * 3], np.uint8).reshape(-1, 3)
    add("palette.png", lut[np.asarray(pal)], rgb.shape[:2])
    rgba = np.dstack([photo(39, 25, seed=7), np.linspace(0, 255, 39 * 25).reshape(39, 25).astype(np.uint8)])
    Image.fromarray(rgba, mode="RGBA").save(folder / "rgba.png")
    add("rgba.png", rgba[..., :3], rgba.shape[:2])
    return cases

"""numpy → QImage compositing for mask overlays (vectorised; never per-pixel Python).

Each overlay is a uint8 *label map* shown as an indexed QImage whose colour table
carries colour and alpha, so changing colours or opacity only swaps the table.

* :func:`layer_labels`: 0 = none, 1 = fill, 2 = outline;
* :func:`instance_labels`: instance k (1-based, ≤ 120) fills with k, outlines with 128 + k;
* :func:`error_labels`: 1 = FN (ground truth only), 2 = FP (prediction only), 3 = TP (both).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from PySide6.QtGui import QColor, QImage, QPixmap

MAX_INSTANCES = 120
#: Okabe–Ito qualitative palette for instances (colour-blind safe)
#: (reddish purple #CC79A7 is left out: it is the ground truth's colour)
INSTANCE_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#56B4E9", "#D55E00", "#F0E442")


def outline(mask: np.ndarray, width: int = 2) -> np.ndarray:
    """Inner boundary pixels of a boolean mask (mask xor its erosion)."""
    import cv2

    m = mask.view(np.uint8) if mask.dtype == bool else (mask != 0).astype(np.uint8)
    kernel = np.ones((2 * width + 1, 2 * width + 1), np.uint8)
    eroded: np.ndarray = cv2.erode(m, kernel, borderType=cv2.BORDER_CONSTANT, borderValue=0)
    return (m ^ eroded).view(bool)


def bbox(*masks: np.ndarray) -> tuple[int, int, int, int] | None:
    """The union bounding box (x0, y0, x1, y1) of boolean masks, None when all are empty."""
    import cv2

    boxes = []
    for m in masks:
        x, y, w, h = cv2.boundingRect(m.view(np.uint8))
        if w and h:
            boxes.append((x, y, x + w, y + h))
    if not boxes:
        return None
    xs0, ys0, xs1, ys1 = zip(*boxes, strict=True)
    return min(xs0), min(ys0), max(xs1), max(ys1)


def crop(masks: Sequence[np.ndarray], box: tuple[int, int, int, int]) -> list[np.ndarray]:
    x0, y0, x1, y1 = box
    return [m[y0:y1, x0:x1] for m in masks]


def layer_labels(mask: np.ndarray, outlines: bool = True, width: int = 2) -> np.ndarray:
    """Fill = 1, outline = 2."""
    labels = mask.astype(np.uint8)
    if outlines:
        np.copyto(labels, np.uint8(2), where=outline(mask, width))
    return labels


def instance_labels(masks: Sequence[np.ndarray], outlines: bool = True, width: int = 2) -> np.ndarray:
    """Instance k fills with k and outlines with 128 + k (later instances drawn on top); each
    instance is written only inside its own bounding box."""
    if not masks:
        raise ValueError("instance_labels needs at least one mask")
    labels = np.zeros(masks[0].shape, dtype=np.uint8)
    for k, m in enumerate(masks[:MAX_INSTANCES], start=1):
        box = bbox(m)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        sub, region = m[y0:y1, x0:x1], labels[y0:y1, x0:x1]
        np.copyto(region, np.uint8(k), where=sub)
        if outlines:
            np.copyto(region, np.uint8(128 + k), where=outline(sub, width))
    return labels


def error_labels(gt: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """1 = FN, 2 = FP, 3 = TP, from boolean ground truth and prediction."""
    return gt.view(np.uint8) | (pred.view(np.uint8) << 1)


@functools.lru_cache(maxsize=512)
def _argb(colour: str, alpha: float) -> int:
    c = QColor(colour)
    c.setAlphaF(max(0.0, min(1.0, alpha)))
    return c.rgba()


def layer_table(colour: str, opacity: float, outline_opacity: float = 1.0) -> list[int]:
    return [0, _argb(colour, opacity), _argb(colour, outline_opacity)] + [0] * 253


def instance_table(opacity: float, palette: Sequence[str] = INSTANCE_PALETTE) -> list[int]:
    return list(_instance_table(opacity, tuple(palette)))


@functools.lru_cache(maxsize=32)
def _instance_table(opacity: float, palette: tuple[str, ...]) -> tuple[int, ...]:
    """The colour table for ``opacity`` (made once per opacity: every sample switch asks)."""
    table = [0] * 256
    for k in range(1, MAX_INSTANCES + 1):
        colour = palette[(k - 1) % len(palette)]
        table[k] = _argb(colour, opacity)
        table[128 + k] = _argb(colour, 1.0)
    return tuple(table)


def error_table(tp: str, fp: str, fn: str, opacity: float) -> list[int]:
    return [0, _argb(fn, opacity), _argb(fp, opacity), _argb(tp, opacity)] + [0] * 252


def indexed_image(labels: np.ndarray, table: list[int]) -> QImage:
    """An indexed QImage over a label map (copied, so the array may be freed)."""
    labels = np.ascontiguousarray(labels)
    h, w = labels.shape
    img = QImage(labels.data, w, h, labels.strides[0], QImage.Format.Format_Indexed8)
    img.setColorTable(table)
    return img.copy()


def rgb_image(rgb: np.ndarray) -> QImage:
    """A QImage of an H×W×3 uint8 RGB array (copied)."""
    rgb = np.ascontiguousarray(rgb)
    h, w, _ = rgb.shape
    return QImage(rgb.data, w, h, rgb.strides[0], QImage.Format.Format_RGB888).copy()


def to_pixmap(labels: np.ndarray, table: list[int]) -> QPixmap:
    return QPixmap.fromImage(indexed_image(labels, table))

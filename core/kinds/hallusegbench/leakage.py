"""Edit leakage of a factual/counterfactual image pair: how much of the edit fell outside the
edited object.

Definitions (docs/metrics.md, "Edit leakage"):

* a pixel is *changed* when the largest absolute difference of its R, G and B values between
  the factual image I and the counterfactual image I′ (8-bit, sRGB as stored) exceeds
  :data:`CHANGE_THRESHOLD` (alpha ignored; I′ of another size is resized to I's with nearest
  neighbour);
* the *edited region* is M_c ∪ M′_c′: the object's mask in both images (each resized to the
  image with nearest neighbour);
* ``edit_leakage`` = |changed \\ (M_c ∪ M′_c′)| / |changed|, in [0, 1]; null when no pixel
  changed (nothing to attribute). ``edit_leak_px`` = |changed \\ (M_c ∪ M′_c′)|.

Needs the images' pixels, so the scorer (which needs none) never computes it: the window
measures it and :func:`annotate` stores it in the sample's meta, which the kind's readout
copies (``masklens score`` output is unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from masklens.core.schema import Sample

#: a channel must differ by more than this (of 255) for the pixel to count as changed
CHANGE_THRESHOLD = 24
#: where :func:`annotate` stores the figures in ``Sample.meta``
META_KEY = "edit_leakage"


def _rgb(image: np.ndarray) -> np.ndarray:
    arr = np.asarray(image)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3:
        raise ValueError(f"an image must be H×W or H×W×C, got shape {arr.shape}")
    return arr[:, :, :3] if arr.shape[2] >= 3 else np.repeat(arr[:, :, :1], 3, axis=2)


def _fit(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    m = np.asarray(mask) != 0
    if m.shape == shape:
        return m
    import cv2

    return cv2.resize(m.view(np.uint8), (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST).astype(bool)


def changed_pixels(factual: np.ndarray, counterfactual: np.ndarray, threshold: int = CHANGE_THRESHOLD) -> np.ndarray:
    """H×W bool: max over R, G, B of |I − I′| > ``threshold`` (I′ resized to I if needed)."""
    a, b = _rgb(factual), _rgb(counterfactual)
    if b.shape[:2] != a.shape[:2]:
        import cv2

        b = cv2.resize(np.ascontiguousarray(b), (a.shape[1], a.shape[0]), interpolation=cv2.INTER_NEAREST)
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    return diff > threshold


def edit_leakage(factual: np.ndarray, counterfactual: np.ndarray, mask_factual: np.ndarray,
                 mask_counterfactual: np.ndarray, threshold: int = CHANGE_THRESHOLD) -> dict[str, Any]:
    """``{"edit_leakage": share or None, "edit_leak_px": int, "edit_changed_px": int}``."""
    changed = changed_pixels(factual, counterfactual, threshold)
    shape = changed.shape
    edited = _fit(mask_factual, shape) | _fit(mask_counterfactual, shape)
    n_changed = int(np.count_nonzero(changed))
    leak = int(np.count_nonzero(changed & ~edited))
    return {"edit_leakage": leak / n_changed if n_changed else None, "edit_leak_px": leak,
            "edit_changed_px": n_changed}


def sample_leakage(sample: Sample, image: Callable[[str], np.ndarray | None]) -> dict[str, Any] | None:
    """The figures of one HalluSegBench sample; ``image(key)`` gives its pixels (None: missing,
    then None is returned)."""
    f, cf = image("factual"), image("counterfactual")
    if f is None or cf is None or "factual" not in sample.gts or "counterfactual" not in sample.gts:
        return None
    return edit_leakage(f, cf, sample.gts["factual"].union().to_array(),
                        sample.gts["counterfactual"].union().to_array())


def annotate(samples: Iterable[Sample], figures: dict[str, dict[str, Any] | None]) -> int:
    """Store measured figures (sample id → figures) in each sample's meta; returns how many."""
    n = 0
    for s in samples:
        got = figures.get(s.id)
        if got is not None:
            s.meta[META_KEY] = dict(got)
            n += 1
    return n

"""Helpers of the differential tests: run a backend and its reference pipeline on the same image and
compare scores, the kept set and every mask pixel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.models.base import SegmentResult


def reference_image(path: Path) -> Any:
    """The image as the reference pipelines load it: transformers' ``load_image`` (PIL, EXIF applied,
    ``convert("RGB")``). One quirk is removed: for a palette image with a transparent index, Pillow
    keeps ``info["transparency"]`` after ``convert("RGB")`` and the processors' ``convert_to_rgb`` then
    paints every pixel of that colour white; masklens drops alpha in every form (docs/images.md), and
    test_image_decoder.py pins the quirk down."""
    from transformers.image_utils import load_image

    image = load_image(str(path))
    image.info.pop("transparency", None)
    return image


def best_first(scores: Any, masks: Any) -> tuple[np.ndarray, np.ndarray]:
    """Reference scores and boolean masks reordered best first (stable), as masklens returns them."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    masks = np.asarray(masks).astype(bool)
    order = np.argsort(-scores, kind="stable")
    return scores[order], masks[order] if len(order) else masks


def assert_same(result: SegmentResult, scores: Any, masks: Any, *, label: str, atol: float = 1e-6) -> None:
    """``result`` keeps the reference's instances (same count), with equal scores and equal masks at
    the image size, every pixel."""
    ref_scores, ref_masks = best_first(scores, masks)
    assert len(result.scores) == len(ref_scores), f"{label}: kept {len(result.scores)} vs reference {len(ref_scores)}"
    np.testing.assert_allclose(result.scores, ref_scores, rtol=0, atol=atol, err_msg=label)
    for i, (mask, ref) in enumerate(zip(result.masks, ref_masks, strict=True)):
        got = mask.to_array()
        assert got.shape == ref.shape, f"{label}: mask {i} shape {got.shape} vs {ref.shape}"
        differ = int((got != ref).sum())
        assert differ == 0, f"{label}: mask {i} differs from the reference in {differ} pixels"

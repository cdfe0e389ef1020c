"""Model-assisted correction: clicks or a box sent to the chosen segmenter, its best answer
proposed as a mask to add to, subtract from, or replace the instance being edited.

The request is the backends' own :class:`~masklens.core.models.base.SegmentRequest` with
points and/or boxes and no text (SAM 2 / SAM 3 point and box prompts; the demo model keeps the
regions the clicks or the box select), run through the window's ModelManager on the worker pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class AssistPrompt:
    """Clicks (x, y, label 1/0) and at most one box, in pixels of the image the model sees."""

    points: list[tuple[float, float, int]] = field(default_factory=list)
    box: tuple[float, float, float, float] | None = None

    def __bool__(self) -> bool:
        return bool(self.points) or self.box is not None

    def request(self) -> Any:
        from masklens.core.models.base import SegmentRequest

        return SegmentRequest(text="", points=list(self.points) or None,
                              boxes=[self.box] if self.box is not None else None)


def propose(ctx: Any, models: Any, model: str, options: dict[str, Any], image: np.ndarray,
            prompt: AssistPrompt) -> tuple[np.ndarray | None, float | None]:
    """(the best-scored mask at the image's size, its score), or (None, None) when the model
    returns nothing. Runs on a worker (``ctx`` reports progress and checks for cancel)."""
    ctx.progress(0, 1, f"{model}: proposing a mask")
    request = prompt.request()
    result = models.call(model, lambda seg: seg.segment(image, request), **options)
    ctx.check()
    if not result.masks:
        return None, None
    best = int(np.argmax(result.scores))
    return result.masks[best].to_array().astype(bool), float(result.scores[best])


def fit_to(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """``mask`` at ``shape`` (nearest neighbour), as the ground truth's resolution wants."""
    if mask.shape == shape:
        return mask
    import cv2

    return cv2.resize(mask.view(np.uint8), (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST).astype(bool)

"""Grounded SAM 2: Grounding DINO (transformers) boxes for the text prompt, then SAM 2 masks.

The box score is Grounding DINO's: the maximum over the prompt's tokens of sigmoid(logit), as in
``post_process_grounded_object_detection``; boxes with score ≥ the threshold (0.2, CAFE's
calibrated value) are kept. SAM 2 encodes each image once (see :mod:`.sam2_masks`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from masklens.core.models.base import BackendInfo
from masklens.core.models.sam2_masks import DetectorSam2Segmenter
from masklens.core.models.torch_device import import_torch
from masklens.core.models.torch_runtime import fit_text

INFO = BackendInfo(
    name="grounded-sam2",
    title="Grounded SAM 2",
    default_weights="IDEA-Research/grounding-dino-base",
    default_score_threshold=0.2,
    description="Grounding DINO boxes (transformers) -> SAM 2.1 masks (transformers, or Meta's sam2 "
    "package for original .pt checkpoints). Box threshold 0.2 as calibrated in CAFE.",
    extra="models",
)


def grounding_text(text: str) -> str:
    """Grounding DINO's prompt convention: lower case, ending with a period."""
    text = " ".join(text.strip().lower().split())
    return text if text.endswith(".") else text + "."


class GroundedSam2Segmenter(DetectorSam2Segmenter):
    info = INFO

    DETECTOR_LABEL = "Grounding DINO"

    def _detector_classes(self) -> tuple[Any, Any]:
        from transformers import GroundingDinoForObjectDetection, GroundingDinoProcessor

        return GroundingDinoForObjectDetection, GroundingDinoProcessor

    def _detect(self, image: np.ndarray, text: str) -> tuple[np.ndarray, np.ndarray]:
        torch = import_torch()
        limit = int(self.detector.config.max_text_len)
        body, self._truncated = fit_text(self.detector_processor.tokenizer, grounding_text(text)[:-1], limit - 1)
        inputs = self.detector_processor(images=image, text=body + ".", return_tensors="pt")
        out = self.detector(**self.runtime.to_device(inputs))
        probs = torch.sigmoid(out.logits[0].float())  # (queries, max_text_len); padding is -inf
        scores = probs.max(dim=-1).values
        cx, cy, w, h = out.pred_boxes[0].float().unbind(-1)
        height, width = image.shape[:2]
        boxes = torch.stack(
            [(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height],
            dim=-1,
        )
        return boxes.cpu().numpy(), scores.cpu().numpy()


def create(**options: Any) -> GroundedSam2Segmenter:
    return GroundedSam2Segmenter(**options)


__all__ = ["INFO", "GroundedSam2Segmenter", "create", "grounding_text"]

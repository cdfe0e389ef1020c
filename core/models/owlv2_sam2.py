"""OWLv2 + SAM 2: OWLv2 (transformers) boxes for the text prompt, then SAM 2 masks.

The image embedder runs once per image (``image_embedder`` output cached); each prompt only encodes
its text and runs OWLv2's class and box heads, exactly as ``Owlv2ForObjectDetection.forward`` does.
The box score is sigmoid(logit) of the prompt (threshold 0.2, CAFE's calibrated value). OWLv2
predicts one box per image patch, so overlapping duplicates are suppressed with box NMS
(``nms_iou`` 0.3 by default, the value of transformers' OWL post-processing for image queries).
The image pre-processing gives the processor's pixels in pieces that Cancel stops between
(:mod:`masklens.core.models.owlv2_pixels`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from masklens.core.models import owlv2_pixels
from masklens.core.models.base import BackendInfo
from masklens.core.models.interrupt import current_check
from masklens.core.models.sam2_masks import DetectorSam2Segmenter
from masklens.core.models.torch_device import import_torch
from masklens.core.models.torch_runtime import fit_text

INFO = BackendInfo(
    name="owlv2-sam2",
    title="OWLv2 + SAM 2",
    default_weights="google/owlv2-large-patch14-ensemble",
    default_score_threshold=0.2,
    description="OWLv2 boxes (transformers) -> SAM 2.1 masks. Box threshold 0.2 as calibrated in "
    "CAFE (CAFE's own baseline used SAM ViT-H for the masks; this backend uses SAM 2.1).",
    extra="models",
)


class Owlv2Sam2Segmenter(DetectorSam2Segmenter):
    info = INFO
    OPTIONS = {**DetectorSam2Segmenter.OPTIONS, "nms_iou": 0.3}

    DETECTOR_LABEL = "OWLv2"

    def _detector_classes(self) -> tuple[Any, Any]:
        from transformers import Owlv2ForObjectDetection, Owlv2Processor

        return Owlv2ForObjectDetection, Owlv2Processor

    def image_features(self, image: np.ndarray) -> Any:
        """OWLv2's per-patch feature map of the (padded, resized) image, computed once per image."""

        def compute() -> Any:
            # the processor's pixels, its long blur cut in pieces that Cancel can stop between
            pixels = owlv2_pixels.pixel_values(self.detector_processor.image_processor, image, current_check())
            if pixels is None:  # a processor that step does not reproduce: run it whole
                pixels = self.detector_processor(images=image, return_tensors="pt")["pixel_values"]
            feature_map, _ = self.detector.image_embedder(pixel_values=pixels.to(self.runtime.device))
            return feature_map

        return self.encoding(f"owlv2:{self.detector_weights.path if self.detector_weights else ''}", image, compute)

    def _detect(self, image: np.ndarray, text: str) -> tuple[np.ndarray, np.ndarray]:
        torch = import_torch()
        feature_map = self.image_features(image)
        batch, rows, cols, dim = feature_map.shape
        image_feats = feature_map.reshape(batch, rows * cols, dim)
        limit = int(self.detector.config.text_config.max_position_embeddings)
        text, self._truncated = fit_text(self.detector_processor.tokenizer, text, limit)
        tokens = self.runtime.to_device(self.detector_processor(text=[[text]], return_tensors="pt"))
        text_out = self.detector.owlv2.get_text_features(
            input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"]
        )
        query = text_out.pooler_output
        query = query / torch.linalg.norm(query, ord=2, dim=-1, keepdim=True)
        query_mask = tokens["input_ids"][None, :, 0] > 0
        logits, _ = self.detector.class_predictor(image_feats, query[None], query_mask)
        pred_boxes = self.detector.box_predictor(image_feats, feature_map)  # cxcywh on the padded square
        scores = torch.sigmoid(logits[0, :, 0].float())
        cx, cy, w, h = pred_boxes[0].float().unbind(-1)
        side = float(max(image.shape[:2]))  # OWLv2 pads to a square at the bottom/right
        boxes = torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=-1) * side
        return boxes.cpu().numpy(), scores.cpu().numpy()


def create(**options: Any) -> Owlv2Sam2Segmenter:
    return Owlv2Sam2Segmenter(**options)


__all__ = ["INFO", "Owlv2Sam2Segmenter", "create"]

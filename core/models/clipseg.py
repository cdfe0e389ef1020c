"""CLIPSeg (transformers ``CLIPSegForImageSegmentation``): one probability map per prompt.

CLIPSeg has no instances and no presence head. The backend reports at most one instance: the
pixels whose probability is ≥ ``mask_threshold``, scored by the map's maximum probability, kept when
that score is ≥ ``score_threshold``. Both default to the same value (0.4), so an accepted instance is
never empty and an empty map is never an instance. That default is a starting point, not a
calibration on labelled data (none is available to this project); :func:`calibrate_threshold`
picks the value that maximises mean IoU on a user's labelled maps, sweeping 0.05…0.95 in steps of
0.05 as SAM 3's baseline calibration (its Sec. F.1) does for detection thresholds.

The CLIP vision activations of an image are computed once and reused by every prompt on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from masklens.core.errors import ModelError
from masklens.core.models.base import BackendInfo, SegmentRequest, SegmentResult
from masklens.core.models.torch_device import import_torch
from masklens.core.models.torch_runtime import HfSegmenter, fit_text

DEFAULT_THRESHOLD = 0.4

INFO = BackendInfo(
    name="clipseg",
    title="CLIPSeg",
    default_weights="CIDAS/clipseg-rd64-refined",
    default_score_threshold=DEFAULT_THRESHOLD,
    description="CLIPSeg probability map thresholded into one mask per prompt, scored by its "
    "maximum probability (no presence head). Threshold 0.4 by default; calibrate it on "
    "labelled data with clipseg.calibrate_threshold.",
    extra="models",
    threshold_only_filters=False,  # mask_threshold defaults to the score threshold
)


class ClipSegSegmenter(HfSegmenter):
    """Options: ``mask_threshold`` (probability, defaults to the score threshold)."""

    info = INFO
    OPTIONS = {"mask_threshold": None}

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if self.options["mask_threshold"] is None:
            self.options["mask_threshold"] = self.score_threshold
        self._truncated = False

    def _hf_classes(self) -> tuple[Any, Any]:
        from transformers import CLIPSegForImageSegmentation, CLIPSegProcessor

        return CLIPSegForImageSegmentation, CLIPSegProcessor

    def activations(self, image: np.ndarray) -> list[Any]:
        """The CLIP vision activations the decoder reads, computed once per image content."""

        def compute() -> list[Any]:
            batch = self.processor(images=image, return_tensors="pt")
            out = self.model.clip.get_image_features(
                pixel_values=batch["pixel_values"].to(self.runtime.device),
                interpolate_pos_encoding=True,
                output_hidden_states=True,
            )
            # hidden_states[0] is the embedding output, so layer i is at i + 1
            return [out.hidden_states[i + 1] for i in self.model.extract_layers]

        return self.encoding("clipseg", image, compute)

    def probabilities(self, image: np.ndarray, text: str) -> Any:
        """The prompt's probability map at the model's resolution (h×w tensor)."""
        torch = import_torch()
        activations = self.activations(image)
        limit = int(self.model.config.text_config.max_position_embeddings)
        text, self._truncated = fit_text(self.processor.tokenizer, text, limit)
        tokens = self.runtime.to_device(self.processor(text=[text], padding=True, return_tensors="pt"))
        conditional = self.model.get_conditional_embeddings(
            batch_size=1, input_ids=tokens["input_ids"], attention_mask=tokens.get("attention_mask")
        )
        logits = self.model.decoder(activations, conditional).logits
        return torch.sigmoid(logits.float().reshape(logits.shape[-2:]))

    def _segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        if not request.text:
            raise ModelError(f"{INFO.name}: empty prompt", hint="CLIPSeg needs a text prompt")
        torch = import_torch()
        probs = torch.nn.functional.interpolate(
            self.probabilities(image, request.text)[None, None],
            size=image.shape[:2],
            mode="bilinear",
            align_corners=False,
        )[0, 0]
        score = float(probs.max())  # at the image's size, so score ≥ t ⇔ the mask is non-empty
        return self.finish(
            probs[None],
            np.array([score]),
            image,
            mask_threshold=float(self.options["mask_threshold"]),
            mask_inclusive=True,
            extra={"text_truncated": True} if self._truncated else None,
        )


def calibrate_threshold(
    prob_maps: Sequence[np.ndarray],
    gt_masks: Sequence[np.ndarray],
    grid: Sequence[float] | None = None,
) -> tuple[float, dict[float, float]]:
    """The threshold maximising mean IoU of ``prob ≥ t`` against the ground truth, and every
    threshold's mean IoU. IoU of two empty masks counts 1 (the prompt correctly found nothing)."""
    if len(prob_maps) != len(gt_masks) or not prob_maps:
        raise ValueError("need as many probability maps as ground-truth masks, at least one")
    grid = [round(0.05 * k, 2) for k in range(1, 20)] if grid is None else list(grid)
    table: dict[float, float] = {}
    for t in grid:
        ious = []
        for prob, gt in zip(prob_maps, gt_masks, strict=True):
            pred, truth = np.asarray(prob) >= t, np.asarray(gt) != 0
            if pred.shape != truth.shape:
                raise ValueError(f"probability map {pred.shape} and mask {truth.shape} differ in size")
            union = np.logical_or(pred, truth).sum()
            ious.append(1.0 if union == 0 else np.logical_and(pred, truth).sum() / union)
        table[t] = float(np.mean(ious))
    best = max(grid, key=lambda t: (table[t], -t))
    return best, table


def create(**options: Any) -> ClipSegSegmenter:
    return ClipSegSegmenter(**options)


__all__ = ["DEFAULT_THRESHOLD", "INFO", "ClipSegSegmenter", "calibrate_threshold", "create"]

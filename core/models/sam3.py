"""SAM 3 (transformers ``Sam3Model`` + ``Sam3Processor``): promptable concept segmentation.

Per prompt: instance masks, instance scores = sigmoid(logit) × presence (SAM 3's own scoring), and the
image-level presence score sigmoid(presence_logit). The image is encoded once
(``get_vision_features``) and every further prompt on it reuses ``vision_embeds``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from masklens.core.errors import ModelError
from masklens.core.models.base import BackendInfo, SegmentRequest, SegmentResult
from masklens.core.models.torch_device import Stopwatch, import_torch
from masklens.core.models.torch_runtime import HfSegmenter, as_rgb_image

#: SAM 3's text encoder context (``max_position_embeddings`` of its CLIP text model)
TEXT_TOKENS = 32

INFO = BackendInfo(
    name="sam3",
    title="SAM 3",
    default_weights="facebook/sam3",
    default_score_threshold=0.5,
    description="Meta's Segment Anything 3 (transformers): instance masks, scores including the "
    "presence factor, and the image-level presence score. Threshold 0.5 as in CAFE.",
    extra="models",
)


class Sam3Segmenter(HfSegmenter):
    """SAM 3 through transformers; options: ``mask_threshold`` (on mask probabilities, 0.5),
    ``batch_size`` (text prompts per forward pass in :meth:`segment_many`, 8)."""

    info = INFO
    OPTIONS = {"mask_threshold": 0.5, "batch_size": 8}

    def _hf_classes(self) -> tuple[Any, Any]:
        from transformers import Sam3Model, Sam3Processor

        return Sam3Model, Sam3Processor

    def vision_embeds(self, image: np.ndarray) -> Any:
        """The image's ``get_vision_features`` output, computed once per image content."""

        def compute() -> Any:
            batch = self.processor(images=image, return_tensors="pt")
            pixels = batch["pixel_values"].to(self.runtime.device)
            return self.model.get_vision_features(pixel_values=pixels)

        return self.encoding("sam3", image, compute)

    def _segment(self, image: np.ndarray, request: SegmentRequest) -> SegmentResult:
        embeds = self.vision_embeds(image)
        height, width = image.shape[:2]
        kwargs: dict[str, Any] = {"text": request.text or None, "return_tensors": "pt"}
        if not request.text and not request.boxes:
            if request.points:
                raise ModelError(
                    f"{INFO.name}: SAM 3's concept model takes text and boxes, not click points",
                    hint="draw a box instead, or use grounded-sam2 / owlv2-sam2 whose SAM 2 stage takes clicks",
                )
            raise ModelError(f"{INFO.name}: empty prompt", hint="give a text prompt or a box")
        if request.boxes:
            kwargs["input_boxes"] = [[list(map(float, b)) for b in request.boxes]]
            kwargs["input_boxes_labels"] = [[1] * len(request.boxes)]
            kwargs["original_sizes"] = [[height, width]]
        inputs = self.processor(**kwargs)
        inputs.pop("original_sizes", None)
        tokens, cut = self._tokens([request.text or "visual"])
        truncated = cut[0]
        inputs["input_ids"], inputs["attention_mask"] = tokens["input_ids"], tokens["attention_mask"]
        inputs = self.runtime.to_device(inputs)
        out = self.model(vision_embeds=embeds, **inputs)
        return self._result(out, 0, image, truncated)

    def _tokens(self, texts: list[str]) -> tuple[Any, list[bool]]:
        """Token ids padded to SAM 3's 32 text positions; longer prompts are truncated (end token
        kept) rather than failing, and the results say so."""
        tok = self.processor.tokenizer
        tokens = tok(texts, padding="max_length", max_length=TEXT_TOKENS, truncation=True, return_tensors="pt")
        return tokens, [len(tok(t)["input_ids"]) > TEXT_TOKENS for t in texts]

    def _result(self, out: Any, index: int, image: np.ndarray, truncated: bool) -> SegmentResult:
        """Instances of batch item ``index``: score = sigmoid(logit) × presence."""
        torch = import_torch()
        instance = torch.sigmoid(out.pred_logits[index].float())
        presence = None
        if out.presence_logits is not None:
            presence_t = torch.sigmoid(out.presence_logits[index].float()).reshape(-1)[0]
            presence = float(presence_t)
            instance = instance * presence_t
        logits = out.pred_masks[index]

        def probs(keep: list[int]) -> Any:  # only the kept queries' masks, not all of them
            return torch.sigmoid(logits[torch.as_tensor(keep, device=logits.device)].float())

        return self.finish(
            probs,
            instance.cpu().numpy(),
            image,
            mask_threshold=float(self.options["mask_threshold"]),
            presence=presence,
            extra={"text_truncated": True} if truncated else None,
        )

    def segment_many(self, image: np.ndarray, requests: list[SegmentRequest]) -> list[SegmentResult]:
        """Text-only prompts run as batches of ``batch_size`` on the one cached encoding (the
        encoding is broadcast, not copied); prompts with boxes run one by one. ``latency_ms`` of a
        batched result is its batch's time divided by the batch size."""
        rgb = as_rgb_image(image)
        results: list[SegmentResult | None] = [None] * len(requests)
        batched = [i for i, r in enumerate(requests) if r.text and not r.boxes]
        size = int(self.options["batch_size"])
        for start in range(0, len(batched), size):
            chunk = batched[start : start + size]
            with self._lock:
                self.ensure_loaded()
                watch = Stopwatch(self.runtime.device)
                with self.runtime.inference():
                    embeds = _broadcast(self.vision_embeds(rgb), len(chunk))
                    tokens, cut = self._tokens([requests[i].text for i in chunk])
                    tokens = self.runtime.to_device(dict(tokens))
                    out = self.model(vision_embeds=embeds, **tokens)
                    chunk_results = [self._result(out, b, rgb, cut[b]) for b in range(len(chunk))]
                latency = watch.ms() / len(chunk)
                prov = self.provenance()
            for i, res in zip(chunk, chunk_results, strict=True):
                res.provenance = {**prov, **res.provenance, "latency_ms": round(latency, 3), "batch": len(chunk)}
                results[i] = res
        for i, req in enumerate(requests):
            if results[i] is None:
                results[i] = self.segment(rgb, req)
        return [r for r in results if r is not None]


def _broadcast(embeds: Any, batch: int) -> Any:
    """A batch-1 vision encoder output viewed as ``batch`` copies (no memory copied)."""
    if batch == 1:
        return embeds

    def expand(value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(expand(v) for v in value)
        if hasattr(value, "expand") and getattr(value, "ndim", 0) >= 1 and value.shape[0] == 1:
            return value.expand(batch, *value.shape[1:])
        return value

    return type(embeds)(**{key: expand(value) for key, value in embeds.items()})


def create(**options: Any) -> Sam3Segmenter:
    return Sam3Segmenter(**options)


__all__ = ["INFO", "Sam3Segmenter", "create"]

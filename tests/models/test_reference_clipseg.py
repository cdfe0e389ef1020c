"""CLIPSeg backend vs transformers' own pipeline on the tiny checkpoint and real-looking images: the
processor resizes the image to the model's input size (its own resizing), ``CLIPSegForImageSegmentation``
runs the full forward pass, and the sigmoid map is resized back to the image size (bilinear,
``align_corners=False``, as transformers' segmentation post-processing does). One instance: pixels
≥ ``mask_threshold``, scored by the map's maximum — compared score and every pixel."""

from __future__ import annotations

import numpy as np
import pytest
from reference import assert_same, reference_image

from masklens.core.models.base import SegmentRequest
from masklens.core.models.registry import create_segmenter

PROMPTS = ("red square", "a cat on the left")


@pytest.fixture(scope="module")
def reference_clipseg(tiny_clipseg):
    from transformers import CLIPSegForImageSegmentation, CLIPSegProcessor

    return CLIPSegForImageSegmentation.from_pretrained(tiny_clipseg).eval(), CLIPSegProcessor.from_pretrained(tiny_clipseg)


def reference_map(reference_clipseg, path, text):
    import torch

    model, processor = reference_clipseg
    image = reference_image(path)
    inputs = processor(text=[text], images=[image], padding="max_length", return_tensors="pt")
    with torch.inference_mode():
        logits = model(**inputs).logits
    probs = torch.sigmoid(logits.reshape(1, 1, *logits.shape[-2:]))
    size = (image.size[1], image.size[0])
    return torch.nn.functional.interpolate(probs, size=size, mode="bilinear", align_corners=False)[0, 0].numpy()


@pytest.mark.slow
def test_matches_the_reference_map(tiny_clipseg, reference_clipseg, reference_images):
    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu", score_threshold=0.0)
    for path in reference_images:
        for text in PROMPTS:
            probs = reference_map(reference_clipseg, path, text)
            score = float(probs.max())
            t = float(np.quantile(probs, 0.6))  # a real cut through the map
            seg.score_threshold, seg.options["mask_threshold"] = t, t
            res = seg.segment(str(path), SegmentRequest(text))
            assert_same(res, [score], (probs >= t)[None], label=f"{path.name} '{text}' t={t}")
            seg.score_threshold = seg.options["mask_threshold"] = score + 1e-3  # above the maximum
            assert seg.segment(str(path), SegmentRequest(text)).masks == []

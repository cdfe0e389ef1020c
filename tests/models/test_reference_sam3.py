"""SAM 3 backend vs transformers' own pipeline (``Sam3Processor`` → ``Sam3Model`` →
``post_process_instance_segmentation``) on the tiny checkpoint and real-looking images: scores, kept
set and every mask pixel at the image size."""

from __future__ import annotations

import numpy as np
import pytest
from reference import assert_same, reference_image

from masklens.core.models.base import SegmentRequest
from masklens.core.models.registry import create_segmenter

PROMPTS = ("red square", "the large blue object on the left")


@pytest.fixture(scope="module")
def reference_sam3(tiny_sam3):
    from transformers import Sam3Model, Sam3Processor

    return Sam3Model.from_pretrained(tiny_sam3).eval(), Sam3Processor.from_pretrained(tiny_sam3)


def reference_outputs(reference_sam3, path, text, boxes=None):
    """``Sam3Model``'s full forward pass on the processor's inputs, and the image's original size."""
    import torch

    model, processor = reference_sam3
    image = reference_image(path)
    kwargs = {"input_boxes": [boxes], "input_boxes_labels": [[1] * len(boxes)]} if boxes else {}
    inputs = processor(images=image, text=text, return_tensors="pt", **kwargs)
    with torch.inference_mode():
        return model(**inputs), inputs["original_sizes"].tolist()


def post_process(reference_sam3, outputs, threshold, mask_threshold=0.5):
    out, sizes = outputs
    return reference_sam3[1].post_process_instance_segmentation(
        out, threshold=threshold, mask_threshold=mask_threshold, target_sizes=sizes
    )[0]


def run_reference(reference_sam3, path, text, threshold, boxes=None):
    return post_process(reference_sam3, reference_outputs(reference_sam3, path, text, boxes), threshold)


@pytest.mark.slow
def test_every_prompt_and_image_matches_the_reference(tiny_sam3, reference_sam3, reference_images):
    """Threshold 0 (every query kept) and, for the first prompt, a threshold between two reference
    scores (a real cut); one prompt at a time (``segment``) and batched on the cached encoding
    (``segment_many``)."""
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    compared = 0
    paths = [p for p in reference_images if p.name not in ("plain.jpg", "rgb16.png")]  # plain RGB once decoded
    for path in paths:
        seg.score_threshold = 0.0
        batched = seg.segment_many(str(path), [SegmentRequest(p) for p in PROMPTS])
        for prompt, many in zip(PROMPTS, batched, strict=True):
            outputs = reference_outputs(reference_sam3, path, prompt)
            ref = post_process(reference_sam3, outputs, 0.0)
            label = f"{path.name} '{prompt}'"
            seg.score_threshold = 0.0
            assert_same(seg.segment(str(path), SegmentRequest(prompt)), ref["scores"], ref["masks"], label=label)
            assert_same(many, ref["scores"], ref["masks"], label=f"{label} (batched)")
            compared += 1
            if prompt != PROMPTS[0]:
                continue
            scores = np.sort(ref["scores"].numpy().astype(np.float64))
            t = float((scores[2] + scores[3]) / 2)  # 3 of the 6 queries pass
            cut = post_process(reference_sam3, outputs, t)
            assert len(cut["scores"]) == 3
            seg.score_threshold = t
            assert_same(seg.segment(str(path), SegmentRequest(prompt)), cut["scores"], cut["masks"], label=f"{label} t={t}")
    assert compared == len(paths) * len(PROMPTS) >= 12


def test_box_prompts_match_the_reference(tiny_sam3, reference_sam3, reference_images):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    for path in reference_images[1:3]:  # a demo image and the EXIF-rotated JPEG
        image = reference_image(path)
        w, h = image.size
        box = [round(w * 0.2, 1), round(h * 0.25, 1), round(w * 0.7, 1), round(h * 0.9, 1)]
        for text in ("red square", None):
            ref = run_reference(reference_sam3, path, text or "visual", 0.0, boxes=[box])
            res = seg.segment(str(path), SegmentRequest(text or "", boxes=[tuple(box)]))
            assert_same(res, ref["scores"], ref["masks"], label=f"{path.name} box text={text}")


def test_threshold_equality_is_the_one_documented_difference(tiny_sam3, reference_sam3, reference_images):
    """transformers keeps ``score > t``; masklens keeps ``score ≥ t`` (docs/models.md): with t equal to
    an instance's score, masklens keeps exactly that one more instance, and nothing else differs."""
    path = reference_images[0]
    everything = run_reference(reference_sam3, path, "red square", threshold=0.0)
    t = float(np.sort(everything["scores"].numpy())[3])  # a float32 score, exactly representable
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=t)
    ours = seg.segment(str(path), SegmentRequest("red square"))
    ref = run_reference(reference_sam3, path, "red square", threshold=t)
    assert len(ours.scores) == len(ref["scores"]) + 1 and min(ours.scores) == t
    keep = everything["scores"] >= t
    assert_same(ours, everything["scores"][keep], everything["masks"][keep], label="t = a score")

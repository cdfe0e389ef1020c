"""OWLv2 + SAM 2 on tiny random checkpoints (CPU, no downloads)."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import forward_calls

from masklens.core.models.base import SegmentRequest
from masklens.core.models.registry import backend_info, create_segmenter


@pytest.fixture()
def owl(tiny_owlv2, tiny_sam2_hf):
    def make(**extra):
        opts = dict(weights=str(tiny_owlv2), sam2_weights=str(tiny_sam2_hf), device="cpu", score_threshold=0.0)
        return create_segmenter("owlv2-sam2", **{**opts, **extra})

    return make


def test_info_defaults():
    info = backend_info("owlv2-sam2")
    assert info.default_weights == "google/owlv2-large-patch14-ensemble"
    assert info.default_score_threshold == 0.2


def test_cached_detection_equals_the_full_forward(owl, rgb_image):
    """Scores and boxes from the cached image embedding equal Owlv2ForObjectDetection.forward."""
    import torch

    seg = owl()
    seg.segment(rgb_image, SegmentRequest("red square"))  # loads and caches
    with seg.runtime.inference():
        boxes, scores = seg._detect(rgb_image, "red square")
    inputs = seg.detector_processor(images=rgb_image, text=[["red square"]], return_tensors="pt")
    with torch.inference_mode():
        out = seg.detector(**inputs)
    ref = seg.detector_processor.post_process_grounded_object_detection(
        out, threshold=-1.0, target_sizes=[(48, 64)]
    )[0]
    assert scores.max() > 0.0 and np.ptp(scores) > 1e-3  # a real query, not a masked-out one
    np.testing.assert_allclose(scores, ref["scores"].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(boxes, ref["boxes"].numpy(), rtol=1e-4, atol=1e-3)


def test_image_embedder_runs_once_per_image(owl, rgb_image):
    seg = owl()
    first = seg.segment(rgb_image, SegmentRequest("red square"))
    owl_calls = forward_calls(seg.detector.owlv2.vision_model)
    sam_calls = forward_calls(seg.masker.model.vision_encoder)
    second = seg.segment(rgb_image, SegmentRequest("blue circle"))
    assert owl_calls == [] and sam_calls == []
    seg.segment(rgb_image[::-1].copy(), SegmentRequest("blue circle"))
    assert owl_calls == [1] and sam_calls == [1]
    for res in (first, second):
        assert len(res.masks) >= 1
        assert all(m.shape == (48, 64) for m in res.masks)
        assert res.scores == sorted(res.scores, reverse=True)
    assert first.provenance["nms_iou"] == 0.3


def test_box_nms():
    from masklens.core.models.sam2_masks import box_nms

    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10.5]], float)
    scores = np.array([0.5, 0.9, 0.4, 0.6])
    assert list(box_nms(boxes, scores, 0.3)) == [1, 2]
    assert list(box_nms(boxes, scores, None)) == [1, 3, 0, 2]  # no NMS: best first


def test_nms_applied_in_the_backend(owl, rgb_image):
    import torch
    from torchvision.ops import box_iou

    without = owl(nms_iou=None).segment(rgb_image, SegmentRequest("red square"))
    with_nms = owl(nms_iou=0.3).segment(rgb_image, SegmentRequest("red square"))
    assert len(without.masks) == 16  # one box per patch of the 64 px / 16 px tiny model
    assert 1 <= len(with_nms.masks) < len(without.masks)
    boxes = torch.tensor(with_nms.provenance["boxes"], dtype=torch.float32)
    assert bool(((boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])).all())
    iou = box_iou(boxes, boxes).fill_diagonal_(0)
    assert float(iou.max()) <= 0.3 + 1e-6  # what survived does not overlap above 0.3
    assert with_nms.scores[0] == without.scores[0]  # the best box always survives


def test_chunked_mask_conversion_and_cap(owl, rgb_image, monkeypatch):
    """Masks are made in chunks (bounded memory) with the same result; max_instances caps them."""
    import masklens.core.models.torch_runtime as rt

    whole = owl(nms_iou=None).segment(rgb_image, SegmentRequest("red square"))
    monkeypatch.setattr(rt, "MASK_CHUNK", 3)
    chunked = owl(nms_iou=None).segment(rgb_image, SegmentRequest("red square"))
    assert chunked.scores == whole.scores
    # SAM 2 on a chunk of boxes vs all at once: same masks up to float noise at the 0 logit
    from masklens.core.masks import iou

    assert all(iou(a, b) >= 0.98 for a, b in zip(chunked.masks, whole.masks, strict=True))
    capped = owl(nms_iou=None, max_instances=4).segment(rgb_image, SegmentRequest("red square"))
    assert capped.scores == whole.scores[:4]
    assert all(iou(a, b) >= 0.98 for a, b in zip(capped.masks, whole.masks[:4], strict=True))
    assert len(capped.provenance["boxes"]) == 4
    assert owl().max_instances == 100  # the detector pipelines' default cap


def test_long_prompt_is_cut_to_the_text_encoder(owl, rgb_image):
    long_text = " ".join(["the red square"] * 20)  # the tiny OWLv2 text encoder has 16 positions
    res = owl().segment(rgb_image, SegmentRequest(long_text))
    assert res.provenance["text_truncated"] is True and len(res.masks) >= 1


def test_unload_frees_both_stages(owl, rgb_image):
    seg = owl()
    first = seg.segment(rgb_image, SegmentRequest("red square"))
    assert len(seg.encodings) == 2  # the OWLv2 feature map and the SAM 2 embeddings
    seg.unload()
    assert seg.detector is None and seg.masker is None and len(seg.encodings) == 0
    again = seg.segment(rgb_image, SegmentRequest("red square"))
    assert again.scores == pytest.approx(first.scores)

"""CLIPSeg on a tiny random checkpoint (CPU, no downloads), and threshold calibration."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import forward_calls

from masklens.core.errors import ModelError
from masklens.core.models.base import SegmentRequest
from masklens.core.models.clipseg import DEFAULT_THRESHOLD, calibrate_threshold
from masklens.core.models.registry import backend_info, create_segmenter


def test_info_defaults():
    info = backend_info("clipseg")
    assert info.default_weights == "CIDAS/clipseg-rd64-refined"
    assert info.default_score_threshold == DEFAULT_THRESHOLD


def test_cached_activations_equal_the_full_forward(tiny_clipseg, rgb_image):
    import torch

    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu")
    seg.ensure_loaded()
    with seg.runtime.inference():
        probs = seg.probabilities(rgb_image, "red square")
    inputs = seg.processor(images=rgb_image, text=["red square"], padding=True, return_tensors="pt")
    with torch.inference_mode():
        out = seg.model(**inputs)
    assert float(probs.max() - probs.min()) > 1e-4  # a real map, not a constant
    np.testing.assert_allclose(
        probs.numpy(), torch.sigmoid(out.logits).reshape(probs.shape).numpy(), rtol=1e-5, atol=1e-6
    )


def test_one_instance_scored_by_max_probability(tiny_clipseg, rgb_image):
    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu", score_threshold=0.0)
    first = seg.segment(rgb_image, SegmentRequest("red square"))
    calls = forward_calls(seg.model.clip.vision_model)
    second = seg.segment(rgb_image, SegmentRequest("blue circle"))
    assert calls == []  # vision activations reused for the second prompt
    for res in (first, second):
        assert len(res.masks) == 1 and res.masks[0].shape == (48, 64)
        assert res.presence is None
    import torch

    with seg.runtime.inference():
        probs = seg.probabilities(rgb_image, "red square")
        full = torch.nn.functional.interpolate(probs[None, None], size=(48, 64), mode="bilinear")
    assert first.scores[0] == pytest.approx(float(full.max()))
    assert first.scores[0] <= float(probs.max()) + 1e-6
    assert first.provenance["mask_threshold"] == 0.0


def test_thresholds(tiny_clipseg, rgb_image):
    base = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu", score_threshold=0.0)
    score = base.segment(rgb_image, SegmentRequest("red square")).scores[0]
    # score == threshold: accepted (inclusive), and the mask is non-empty (≥ on probabilities)
    at = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu", score_threshold=score)
    res = at.segment(rgb_image, SegmentRequest("red square"))
    assert res.scores == [pytest.approx(score)] and res.masks[0].area >= 1
    above = create_segmenter(
        "clipseg", weights=str(tiny_clipseg), device="cpu", score_threshold=min(1.0, score + 1e-3)
    )
    assert above.segment(rgb_image, SegmentRequest("red square")).masks == []
    with pytest.raises(ModelError, match="empty prompt"):
        base.segment(rgb_image, SegmentRequest(""))


def test_calibrate_threshold_picks_the_best_iou():
    rng = np.random.default_rng(0)
    gts, maps = [], []
    for _ in range(5):
        gt = np.zeros((20, 20), bool)
        gt[5:15, 4:12] = True
        prob = np.where(gt, rng.uniform(0.55, 0.9, gt.shape), rng.uniform(0.0, 0.5, gt.shape))
        gts.append(gt)
        maps.append(prob)
    best, table = calibrate_threshold(maps, gts)
    assert best in (0.5, 0.55)  # the gap between background (< 0.5) and object (≥ 0.55)
    assert table[best] == pytest.approx(1.0)
    assert table[0.05] < 1.0 and table[0.95] == pytest.approx(0.0)
    with pytest.raises(ValueError):
        calibrate_threshold(maps[:2], gts[:1])


def test_long_prompt_and_fit_text(tiny_clipseg, rgb_image):
    import tiny

    from masklens.core.models.torch_runtime import fit_text

    seg = create_segmenter("clipseg", weights=str(tiny_clipseg), device="cpu", score_threshold=0.0)
    res = seg.segment(rgb_image, SegmentRequest(" ".join(["the red square"] * 20)))
    assert res.provenance["text_truncated"] is True and len(res.masks) == 1
    tok = tiny.clip_tokenizer()
    text, cut = fit_text(tok, "a red circle the blue square", 6)  # 4 one-token words + start, end
    assert (text, cut) == ("a red circle the", True)
    assert fit_text(tok, "a red circle", 6) == ("a red circle", False)

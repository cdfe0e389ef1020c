"""SAM 3 backend on a tiny random checkpoint loaded through the user's code path (CPU, no downloads)."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import forward_calls

from masklens.core.errors import ModelError
from masklens.core.models.base import SegmentRequest
from masklens.core.models.registry import backend_info, create_segmenter


def test_info_defaults():
    info = backend_info("sam3")
    assert info.default_weights == "facebook/sam3"
    assert info.default_score_threshold == 0.5


def test_segments_and_reuses_the_encoding(tiny_sam3, rgb_image):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    first = seg.segment(rgb_image, SegmentRequest("red square"))
    calls = forward_calls(seg.model.vision_encoder)
    second = seg.segment(rgb_image, SegmentRequest("blue circle"))
    third = seg.segment(rgb_image.copy(), SegmentRequest("a cat"))
    assert calls == []  # same image content: the vision encoder ran only for the first prompt
    seg.segment(rgb_image[::-1].copy(), SegmentRequest("a cat"))
    assert calls == [1]  # a new image is encoded once
    for res in (first, second, third):
        assert len(res.masks) == 6  # threshold 0 keeps every query of the tiny model
        assert all(m.shape == (48, 64) for m in res.masks)
        assert res.scores == sorted(res.scores, reverse=True)
        assert 0.0 <= res.presence <= 1.0
        # SAM 3 instance score = sigmoid(logit) * presence, so no score exceeds the presence
        assert max(res.scores) <= res.presence + 1e-6
    prov = first.provenance
    assert prov["model"] == "sam3" and prov["device"] == "cpu" and prov["dtype"] == "float32"
    assert prov["checkpoint_path"] == str(tiny_sam3.resolve())
    assert len(prov["checkpoint_sha256"]) == 64
    assert prov["score_threshold"] == 0.0 and prov["latency_ms"] > 0
    assert first.scores != second.scores  # the prompt matters


def test_scores_match_the_full_forward(tiny_sam3, rgb_image):
    """The cached-encoding path gives what a full forward pass gives (scores × presence)."""
    import torch

    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    res = seg.segment(rgb_image, SegmentRequest("red square"))
    inputs = seg.processor(images=rgb_image, text="red square", return_tensors="pt")
    inputs.pop("original_sizes")
    with torch.inference_mode():
        out = seg.model(**inputs)
    presence = torch.sigmoid(out.presence_logits[0]).item()
    expected = sorted((torch.sigmoid(out.pred_logits[0]) * presence).tolist(), reverse=True)
    np.testing.assert_allclose(res.scores, expected, rtol=1e-5, atol=1e-6)
    assert res.presence == pytest.approx(presence, rel=1e-5)


def test_threshold_is_inclusive_and_filters(tiny_sam3, rgb_image):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    all_scores = seg.segment(rgb_image, SegmentRequest("red square")).scores
    cut = all_scores[2]
    seg.score_threshold = cut
    kept = seg.segment(rgb_image, SegmentRequest("red square")).scores
    assert kept == all_scores[:3]


def test_boxes_prompt_and_unload(tiny_sam3, rgb_image):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    res = seg.segment(rgb_image, SegmentRequest("red square", boxes=[(20, 10, 44, 30)]))
    assert len(res.masks) == 6
    seg.unload()
    assert seg.model is None and len(seg.encodings) == 0
    again = seg.segment(rgb_image, SegmentRequest("red square", boxes=[(20, 10, 44, 30)]))
    assert again.scores == pytest.approx(res.scores)


def test_missing_checkpoint_folder(tmp_path, rgb_image):
    seg = create_segmenter("sam3", weights=str(tmp_path / "nope"), device="cpu")
    with pytest.raises(ModelError) as err:
        seg.segment(rgb_image, SegmentRequest("cat"))
    assert str(tmp_path / "nope") in str(err.value) and "not found" in str(err.value)


def test_hub_id_offline_not_cached(rgb_image, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(ModelError) as err:  # known absent: fails when created, not on first use
        create_segmenter("sam3", device="cpu")  # default: facebook/sam3
    text = str(err.value)
    assert "facebook/sam3" in text and "hf download facebook/sam3" in text
    assert "hf auth login" in text  # SAM 3 is gated


def test_unknown_option_is_refused():
    with pytest.raises(ModelError, match="unknown option"):
        create_segmenter("sam3", device="cpu", box_threshold=0.3)


def test_option_values_are_checked():
    with pytest.raises(ModelError, match="must be a number"):
        create_segmenter("sam3", device="cpu", mask_threshold="high")
    with pytest.raises(ModelError, match="outside"):
        create_segmenter("sam3", device="cpu", score_threshold=1.5)
    with pytest.raises(ModelError, match=r"nms_iou must be in \(0, 1\]"):
        create_segmenter("owlv2-sam2", device="cpu", nms_iou=0)


def test_long_prompt_is_truncated_not_fatal(tiny_sam3, rgb_image):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0)
    long_text = " ".join(["the red square"] * 20)  # far more than 32 tokens
    res = seg.segment(rgb_image, SegmentRequest(long_text))
    assert res.provenance["text_truncated"] is True and len(res.masks) == 6
    short = seg.segment(rgb_image, SegmentRequest("the red square"))
    assert "text_truncated" not in short.provenance


def test_segment_many_batches_text_prompts(tiny_sam3, rgb_image):
    """Batched prompts on one broadcast encoding give what one-by-one prompts give."""
    from masklens.core.masks import iou

    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu", score_threshold=0.0, batch_size=2)
    prompts = [
        SegmentRequest("red square"),
        SegmentRequest("blue circle"),
        SegmentRequest("red square", boxes=[(20, 10, 44, 30)]),  # runs on its own
        SegmentRequest(" ".join(["a cat"] * 30)),  # truncated
        SegmentRequest("the dog"),
    ]
    many = seg.segment_many(rgb_image, prompts)
    calls = forward_calls(seg.model.vision_encoder)
    single = [seg.segment(rgb_image, p) for p in prompts]
    assert calls == []  # one encoding served every prompt of both passes
    assert [r.provenance.get("batch") for r in many] == [2, 2, None, 2, 2]
    for a, b in zip(many, single, strict=True):
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-4, atol=1e-5)
        assert a.presence == pytest.approx(b.presence, rel=1e-4, abs=1e-5)
        assert all(iou(x, y) >= 0.98 for x, y in zip(a.masks, b.masks, strict=True))
        assert a.provenance.get("text_truncated") == b.provenance.get("text_truncated")
    assert many[3].provenance["text_truncated"] is True


def test_predict_then_score_through_the_cli(tiny_sam3, tmp_path, capsys):
    """`masklens predict cafe --model sam3` on the demo scenes writes what `masklens score` reads."""
    import json
    from pathlib import Path

    from masklens.core.cli import main

    demo = Path(__file__).resolve().parents[2] / "resources" / "demo" / "cafe"
    out = tmp_path / "pred.json"
    common = ["--ann", str(demo / "ann.json")]
    rc = main([
        "predict", "cafe", *common, "--images", str(demo / "images"), "--model", "sam3",
        "--weights", str(tiny_sam3), "--device", "cpu", "--score-threshold", "0",
        "--cache-dir", str(tmp_path / "cache"), "--quiet", "--out", str(out),
    ])
    assert rc == 0
    records = json.loads(out.read_text())
    assert records and all(0.0 <= r["score"] <= 1.0 for r in records)
    capsys.readouterr()
    assert main(["score", "cafe", *common, "--pred", str(out)]) == 0
    assert "AFPR" in capsys.readouterr().out
    import torch

    if not torch.cuda.is_available():  # one clear message and exit 2, no traceback
        assert main(["predict", "cafe", *common, "--model", "sam3", "--device", "cuda", "--out", str(out)]) == 2
        assert "CUDA is not available" in capsys.readouterr().err

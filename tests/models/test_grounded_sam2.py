"""Grounded SAM 2 on tiny random checkpoints: Grounding DINO boxes -> SAM 2 masks, through both
SAM 2 implementations (transformers folder, Meta .pt + config), CPU, no downloads."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import forward_calls

from masklens.core.errors import ModelError
from masklens.core.models.base import SegmentRequest
from masklens.core.models.grounded_sam2 import grounding_text
from masklens.core.models.registry import backend_info, create_segmenter


def test_info_defaults():
    info = backend_info("grounded-sam2")
    assert info.default_weights == "IDEA-Research/grounding-dino-base"
    assert info.default_score_threshold == 0.2


def test_prompt_convention():
    assert grounding_text("  A Red   Circle ") == "a red circle."
    assert grounding_text("cat.") == "cat."


def test_hf_sam2_path(tiny_grounding_dino, tiny_sam2_hf, rgb_image):
    import torch

    seg = create_segmenter(
        "grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(tiny_sam2_hf),
        device="cpu", score_threshold=0.0,
    )
    first = seg.segment(rgb_image, SegmentRequest("red square"))
    sam2_calls = forward_calls(seg.masker.model.vision_encoder)
    second = seg.segment(rgb_image, SegmentRequest("blue circle"))
    assert sam2_calls == []  # SAM 2 encoded the image once, for the first prompt
    for res in (first, second):
        assert 1 <= len(res.masks) <= 8
        assert all(m.shape == (48, 64) for m in res.masks)
        assert res.scores == sorted(res.scores, reverse=True)
        assert res.presence is None
        assert len(res.provenance["boxes"]) == len(res.masks)
    # scores are Grounding DINO's (max over the prompt's tokens), as transformers' post-processing
    inputs = seg.detector_processor(images=rgb_image, text="red square.", return_tensors="pt")
    with torch.inference_mode():
        out = seg.detector(**inputs)
    ref = seg.detector_processor.post_process_grounded_object_detection(
        out, inputs["input_ids"], threshold=-1.0, text_threshold=0.0, target_sizes=[(48, 64)]
    )[0]
    np.testing.assert_allclose(first.scores, sorted(ref["scores"].tolist(), reverse=True), rtol=1e-5)
    prov = first.provenance
    assert prov["model"] == "grounded-sam2" and prov["sam2_impl"] == "sam2-hf"
    assert prov["checkpoint_path"] == str(tiny_grounding_dino.resolve())
    assert prov["sam2_checkpoint_path"] == str(tiny_sam2_hf.resolve())
    assert len(prov["sam2_checkpoint_sha256"]) == 64


def test_threshold_filters_boxes(tiny_grounding_dino, tiny_sam2_hf, rgb_image):
    opts = dict(weights=str(tiny_grounding_dino), sam2_weights=str(tiny_sam2_hf), device="cpu")
    everything = create_segmenter("grounded-sam2", score_threshold=0.0, **opts)
    scores = everything.segment(rgb_image, SegmentRequest("red square")).scores
    cut = scores[len(scores) // 2]
    some = create_segmenter("grounded-sam2", score_threshold=cut, **opts)
    assert some.segment(rgb_image, SegmentRequest("red square")).scores == [s for s in scores if s >= cut]
    top = create_segmenter("grounded-sam2", score_threshold=1.0, **opts)  # saturated scores only
    res = top.segment(rgb_image, SegmentRequest("red square"))
    assert res.scores == [s for s in scores if s >= 1.0] and len(res.masks) == len(res.scores)


def test_meta_sam2_path(tiny_grounding_dino, tiny_sam2_meta, rgb_image):
    ckpt, config = tiny_sam2_meta
    seg = create_segmenter(
        "grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(ckpt),
        sam2_config=str(config), device="cpu", score_threshold=0.0,
    )
    first = seg.segment(rgb_image, SegmentRequest("red square"))
    calls = forward_calls(seg.masker.predictor.model.image_encoder)
    second = seg.segment(rgb_image, SegmentRequest("a cat"))
    assert calls == []  # the predictor's image features were reused
    seg.segment(rgb_image[::-1].copy(), SegmentRequest("a cat"))
    assert calls == [1]
    assert first.provenance["sam2_impl"] == "sam2-meta"
    assert first.provenance["sam2_checkpoint_sha256"] == first.provenance["sam2_checkpoint_sha256"]
    assert all(m.shape == (48, 64) for m in first.masks + second.masks)
    assert len(first.masks) >= 1


def test_meta_checkpoint_config_mismatch(tiny_grounding_dino, tiny_sam2_meta, rgb_image):
    ckpt, _ = tiny_sam2_meta
    seg = create_segmenter(
        "grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(ckpt),
        sam2_config="configs/sam2.1/sam2.1_hiera_t.yaml", device="cpu",
    )
    with pytest.raises(ModelError, match="do not match"):
        seg.segment(rgb_image, SegmentRequest("cat"))


def test_meta_checkpoint_needs_config(tiny_grounding_dino, tmp_path, rgb_image):
    odd = tmp_path / "my_sam.pt"
    odd.write_bytes(b"")
    seg = create_segmenter("grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(odd), device="cpu")
    with pytest.raises(ModelError, match="sam2_config"):
        seg.segment(rgb_image, SegmentRequest("cat"))


def test_missing_sam2_weights(tiny_grounding_dino, tmp_path, rgb_image):
    seg = create_segmenter(
        "grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(tmp_path / "sam2.pt"), device="cpu"
    )
    with pytest.raises(ModelError) as err:
        seg.segment(rgb_image, SegmentRequest("cat"))
    assert "sam2.pt" in str(err.value) and "SAM 2 weights not found" in str(err.value)


def test_click_points_go_to_sam2(tiny_grounding_dino, tiny_sam2_hf, tiny_sam2_meta, rgb_image):
    ckpt, config = tiny_sam2_meta
    for sam2 in (dict(sam2_weights=str(tiny_sam2_hf)), dict(sam2_weights=str(ckpt), sam2_config=str(config))):
        seg = create_segmenter(
            "grounded-sam2", weights=str(tiny_grounding_dino), device="cpu", score_threshold=0.0, **sam2
        )
        res = seg.segment(rgb_image, SegmentRequest("", points=[(30, 20, 1), (5, 5, 0)]))
        assert len(res.masks) == 1 and res.masks[0].shape == (48, 64)
        assert res.provenance["prompt"] == "points"
        assert 0.0 <= res.scores[0] <= 1.0  # SAM 2 predicted IoU (sigmoid output)
    with pytest.raises(ModelError, match="empty prompt"):
        seg.segment(rgb_image, SegmentRequest(""))


def test_sam3_refuses_points_only(tiny_sam3, rgb_image):
    seg = create_segmenter("sam3", weights=str(tiny_sam3), device="cpu")
    with pytest.raises(ModelError, match="not click points"):
        seg.segment(rgb_image, SegmentRequest("", points=[(3, 3, 1)]))


def test_meta_config_inferred_from_official_file_names(tmp_path):
    from masklens.core.models.sam2_masks import MetaSam2Masker, make_box_masker
    from masklens.core.models.torch_device import Runtime
    from masklens.core.models.weights import resolve_weights

    runtime = Runtime.create("cpu")
    for name, config in [
        ("sam2.1_hiera_large.pt", "configs/sam2.1/sam2.1_hiera_l.yaml"),
        ("sam2_hiera_base_plus.pt", "configs/sam2/sam2_hiera_b+.yaml"),
    ]:
        (tmp_path / name).write_bytes(b"")
        masker = make_box_masker(resolve_weights(tmp_path / name, backend="t"), None, runtime, "t")
        assert isinstance(masker, MetaSam2Masker) and masker.config == config
    (tmp_path / "weights.safetensors").write_bytes(b"")
    with pytest.raises(ModelError, match="original .pt"):
        make_box_masker(resolve_weights(tmp_path / "weights.safetensors", backend="t"), None, runtime, "t")


def test_long_prompt_is_cut_to_max_text_len(tiny_grounding_dino, tiny_sam2_hf, rgb_image):
    seg = create_segmenter(
        "grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(tiny_sam2_hf),
        device="cpu", score_threshold=0.0,
    )
    res = seg.segment(rgb_image, SegmentRequest(" ".join(["red square"] * 20)))
    assert res.provenance["text_truncated"] is True and len(res.masks) >= 1
    assert "text_truncated" not in seg.segment(rgb_image, SegmentRequest("red square")).provenance

"""grounded-sam2 and owlv2-sam2 vs the reference pipelines, on tiny checkpoints and real-looking
images: the detector's processor and ``post_process_*`` give the boxes and scores, then SAM 2 —
transformers ``Sam2Processor`` + ``Sam2Model`` + ``post_process_masks``, or Meta's
``SAM2ImagePredictor.predict`` with the same boxes — gives the masks. Scores, kept set and every
mask pixel are compared. Box NMS is off here (the reference post-processing has none)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import assert_same, reference_image
from tiny import SAM2_META_TINY_OVERRIDES

from masklens.core.models.base import SegmentRequest
from masklens.core.models.grounded_sam2 import grounding_text
from masklens.core.models.registry import create_segmenter

PROMPT = "red square"


@pytest.fixture(scope="module")
def hf_sam2(tiny_sam2_hf):
    from transformers import Sam2Model, Sam2Processor

    return Sam2Model.from_pretrained(tiny_sam2_hf).eval(), Sam2Processor.from_pretrained(tiny_sam2_hf)


@pytest.fixture(scope="module")
def meta_predictor(tiny_sam2_meta):
    """Meta's own builder (``build_sam2`` with the tiny overrides) and predictor."""
    from sam2.build_sam import build_sam2
    from sam2.sam2_image_predictor import SAM2ImagePredictor

    ckpt, _ = tiny_sam2_meta
    model = build_sam2(
        "configs/sam2.1/sam2.1_hiera_t.yaml", ckpt_path=str(ckpt), device="cpu",
        hydra_overrides_extra=SAM2_META_TINY_OVERRIDES,
    )
    predictor = SAM2ImagePredictor(model)
    size = int(model.image_size)  # the predictor hard-codes a 1024 px model's feature sizes
    predictor._bb_feat_sizes = [(size // 4, size // 4), (size // 8, size // 8), (size // 16, size // 16)]
    return predictor


def hf_sam2_masks(hf_sam2, image, boxes):
    import torch

    model, processor = hf_sam2
    if len(boxes) == 0:
        return np.zeros((0, image.size[1], image.size[0]), bool)
    inputs = processor(images=image, input_boxes=[[list(map(float, b)) for b in boxes]], return_tensors="pt")
    with torch.inference_mode():
        out = model(**inputs, multimask_output=False)
    return processor.post_process_masks(out.pred_masks, inputs["original_sizes"])[0][:, 0].numpy()


def meta_sam2_masks(predictor, image, boxes):
    if len(boxes) == 0:
        return np.zeros((0, image.size[1], image.size[0]), bool)
    predictor.set_image(np.asarray(image))
    masks, _, _ = predictor.predict(box=np.asarray(boxes, np.float32), multimask_output=False)
    return np.asarray(masks).reshape(len(boxes), image.size[1], image.size[0]) > 0


@pytest.fixture(scope="module")
def gdino(tiny_grounding_dino):
    from transformers import GroundingDinoForObjectDetection, GroundingDinoProcessor

    folder = tiny_grounding_dino
    return GroundingDinoForObjectDetection.from_pretrained(folder).eval(), GroundingDinoProcessor.from_pretrained(folder)


@pytest.fixture(scope="module")
def owlv2(tiny_owlv2):
    from transformers import Owlv2ForObjectDetection, Owlv2Processor

    return Owlv2ForObjectDetection.from_pretrained(tiny_owlv2).eval(), Owlv2Processor.from_pretrained(tiny_owlv2)


def grounding_dino_reference(gdino, image, text, threshold):
    import torch

    model, processor = gdino
    inputs = processor(images=image, text=grounding_text(text), return_tensors="pt")
    with torch.inference_mode():
        out = model(**inputs)
    det = processor.post_process_grounded_object_detection(
        out, inputs["input_ids"], threshold=threshold, text_threshold=max(threshold, 0.0),  # labels only
        target_sizes=[image.size[::-1]],
    )[0]
    return det["scores"].numpy(), det["boxes"].numpy()


def owlv2_reference(owlv2, image, text, threshold):
    import torch

    model, processor = owlv2
    inputs = processor(text=[[text]], images=image, return_tensors="pt")
    with torch.inference_mode():
        out = model(**inputs)
    det = processor.image_processor.post_process_object_detection(out, threshold=threshold, target_sizes=[image.size[::-1]])[0]
    return det["scores"].numpy(), det["boxes"].numpy()


def _inside(boxes, image):
    """Reference boxes with some area inside the image (masklens drops the others, documented)."""
    w, h = image.size
    clipped = np.asarray(boxes, np.float64).reshape(-1, 4).copy()
    clipped[:, [0, 2]] = clipped[:, [0, 2]].clip(0, w)
    clipped[:, [1, 3]] = clipped[:, [1, 3]].clip(0, h)
    return (clipped[:, 2] > clipped[:, 0]) & (clipped[:, 3] > clipped[:, 1])


def _compare(seg, detector_ref, sam2_ref, paths, thresholds, name):
    """For each image: the reference detector once at the lowest threshold and SAM 2 once on its
    boxes; each higher threshold keeps a subset of those (post-processing is a filter, SAM 2 masks
    each box on its own). masklens keeps score >= t, the reference score > t: the reference is asked
    for > (the float32 just below t)."""
    partly_outside = 0
    below = [float(np.nextafter(np.float32(t), np.float32(-1))) for t in thresholds]
    for path in paths:
        image = reference_image(path)
        w, h = image.size
        all_scores, all_boxes = detector_ref(image, PROMPT, min(below))
        inside = _inside(all_boxes, image)
        all_scores, all_boxes = all_scores[inside], all_boxes[inside]
        partly_outside += int(((all_boxes[:, :2] < 0) | (all_boxes[:, 2:] > [w, h])).any(axis=1).sum())
        all_masks = sam2_ref(image, all_boxes)
        for t, t_ref in zip(thresholds, below, strict=True):
            kept = all_scores > np.float32(t_ref)
            scores, boxes, masks = all_scores[kept], all_boxes[kept], all_masks[kept]
            seg.score_threshold = t
            res = seg.segment(str(path), SegmentRequest(PROMPT))
            label = f"{name} {path.name} t={t}"
            assert_same(res, scores, masks, label=label, atol=1e-5)
            got_boxes = np.asarray(res.provenance["boxes"], np.float64).reshape(-1, 4)
            want = boxes[np.argsort(-scores, kind="stable")].astype(np.float64)
            want[:, [0, 2]], want[:, [1, 3]] = want[:, [0, 2]].clip(0, w), want[:, [1, 3]].clip(0, h)
            np.testing.assert_allclose(got_boxes, want, atol=0.02, err_msg=label)  # clipped, rounded to 0.01
    return partly_outside


@pytest.mark.slow
def test_grounded_sam2_matches_the_reference(tiny_grounding_dino, tiny_sam2_hf, gdino, hf_sam2, reference_images):
    seg = create_segmenter(
        "grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(tiny_sam2_hf), device="cpu"
    )
    outside = _compare(
        seg,
        lambda image, text, t: grounding_dino_reference(gdino, image, text, t),
        lambda image, boxes: hf_sam2_masks(hf_sam2, image, boxes),
        reference_images[::3],
        (0.0, 0.3),
        "grounded-sam2",
    )
    assert outside > 0  # some boxes reach past the image: SAM 2 must get them unclipped


@pytest.mark.slow
def test_owlv2_sam2_matches_the_reference(tiny_owlv2, tiny_sam2_hf, owlv2, hf_sam2, reference_images):
    seg = create_segmenter(
        "owlv2-sam2", weights=str(tiny_owlv2), sam2_weights=str(tiny_sam2_hf), device="cpu", nms_iou=None
    )
    outside = _compare(
        seg,
        lambda image, text, t: owlv2_reference(owlv2, image, text, t),
        lambda image, boxes: hf_sam2_masks(hf_sam2, image, boxes),
        reference_images[1::2],
        (0.0, 0.35),
        "owlv2-sam2",
    )
    assert outside > 0


def test_meta_sam2_path_matches_the_predictor(
    tiny_grounding_dino, tiny_sam2_meta, gdino, meta_predictor, reference_images
):
    """The Meta ``.pt`` path: boxes alone (no detector) and the detector's boxes, against
    ``SAM2ImagePredictor.predict`` with the same boxes."""
    ckpt, config = tiny_sam2_meta
    seg = create_segmenter(
        "grounded-sam2", weights=str(tiny_grounding_dino), sam2_weights=str(ckpt), sam2_config=str(config),
        device="cpu", score_threshold=0.0,
    )
    for path in reference_images[:3]:
        image = reference_image(path)
        w, h = image.size
        boxes = [(0.1 * w, 0.2 * h, 0.6 * w, 0.9 * h), (0.5 * w, 0.05 * h, 1.2 * w, 0.5 * h)]  # one past the edge
        res = seg.segment(str(path), SegmentRequest("", boxes=boxes))
        assert_same(res, np.ones(2), meta_sam2_masks(meta_predictor, image, boxes), label=f"boxes {path.name}")
    _compare(
        seg,
        lambda image, text, t: grounding_dino_reference(gdino, image, text, t),
        lambda image, boxes: meta_sam2_masks(meta_predictor, image, boxes),
        reference_images[1:2],
        (0.0,),
        "grounded-sam2 (Meta SAM 2)",
    )

"""The weight-free `demo` segmenter on generated scenes: shapes, hypernyms, amodal phrasing, absence."""

from __future__ import annotations

import numpy as np
import pytest

from masklens.core.masks import Mask, iou
from masklens.core.models.base import SegmentRequest
from masklens.core.models.demo import parse_prompt
from masklens.core.models.registry import backend_info, create_segmenter


@pytest.fixture(scope="module")
def model():
    """Keeps low-scored instances too, so tests can see what the default threshold rejects."""
    return create_segmenter("demo", score_threshold=0.05)


@pytest.fixture(scope="module")
def scene(scenes):
    """Two occluded pairs, textured and glass shapes, a star, on a sky-over-grass background."""
    s = scenes
    shapes = [
        s.Shape("circle", "red", 70, 70, 34),                         # 0
        s.Shape("square", "white", 230, 70, 36, texture="stripes"),   # 1 zebra-like
        s.Shape("triangle", "green", 70, 250, 34, texture="spots"),   # 2
        s.Shape("star", "yellow", 250, 250, 40),                      # 3
        s.Shape("square", "blue", 150, 150, 32),                      # 4 occluded by 5
        s.Shape("circle", "orange", 182, 175, 24),                    # 5
        s.Shape("circle", "purple", 300, 160, 16, material="glass"),  # 6
    ]
    sc = s.Scene(384, 384, "horizon", shapes)
    return s.render(sc, seed=3)


def _ask(model, image, text, role=None):
    return model.segment(image, SegmentRequest(text=text, role=role))


def _best_iou(result, gt: np.ndarray) -> float:
    assert result.masks, "no instance returned"
    return iou(result.masks[0], Mask.from_array(gt))


def test_backend_is_registered_and_honest():
    info = backend_info("demo")
    assert info.needs_weights is False and info.default_score_threshold == 0.5
    assert "demo" in info.description.lower() and "not a real model" in info.description.lower()


@pytest.mark.parametrize(
    ("text", "index"),
    [("red circle", 0), ("striped square", 1), ("spotted triangle", 2), ("yellow star", 3),
     ("the visible part of the blue square", 4), ("the part of the blue square you can see", 4),
     ("orange circle", 5), ("glass circle", 6)],
)
def test_finds_the_named_shape(model, scene, text, index):
    res = _ask(model, scene.image, text)
    assert res.scores[0] >= 0.5
    assert _best_iou(res, scene.modal[index]) > 0.9
    assert res.presence == pytest.approx(max(res.scores))


def test_colour_and_shape_both_matter(model, scene):
    res = _ask(model, scene.image, "circle")
    accepted = [m for m, s in zip(res.masks, res.scores, strict=True) if s >= 0.5]
    gts = [Mask.from_array(scene.modal[i]) for i in (0, 5, 6)]
    assert len(accepted) == 3
    assert all(max(iou(m, g) for m in accepted) > 0.9 for g in gts)
    blue_circle = _ask(model, scene.image, "blue circle")
    assert all(s < 0.5 for s in blue_circle.scores)


def test_amodal_phrasing_completes_the_hidden_part(model, scene):
    amodal, modal = scene.amodal[4], scene.modal[4]
    assert modal.sum() < 0.85 * amodal.sum()  # really occluded
    whole = _ask(model, scene.image, "the whole blue square, including the hidden part")
    assert _best_iou(whole, amodal) > 0.95
    assert _best_iou(whole, amodal) > _best_iou(whole, modal)
    visible = _ask(model, scene.image, "the visible part of the blue square")
    assert _best_iou(visible, modal) > 0.95
    # the role alone also asks for the complete shape
    by_role = _ask(model, scene.image, "blue square", role="amodal")
    assert _best_iou(by_role, amodal) > 0.95


def test_amodal_circle_is_fitted(model, scenes):
    sc = scenes.Scene(320, 320, "plain", [scenes.Shape("circle", "green", 140, 150, 50),
                                          scenes.Shape("square", "red", 200, 150, 40)])
    r = scenes.render(sc)
    res = _ask(model, r.image, "the entire green circle, even the occluded part")
    assert _best_iou(res, r.amodal[0]) > 0.95 > iou(Mask.from_array(r.modal[0]),
                                                    Mask.from_array(r.amodal[0]))


def test_hypernyms_cover_everything_with_falling_confidence(model, scene):
    shape = _ask(model, scene.image, "shape")
    obj = _ask(model, scene.image, "object")
    assert len(shape.masks) == 7
    assert all(s >= 0.5 for s in shape.scores)
    assert max(obj.scores) < max(shape.scores)
    assert min(obj.scores) < 0.5  # small things drop out of "object" at t = 0.5
    polygon = _ask(model, scene.image, "polygon")
    hits = {int(np.argmax([iou(m, Mask.from_array(g)) for g in scene.modal]))
            for m, s in zip(polygon.masks, polygon.scores, strict=True) if s >= 0.5}
    assert hits == {1, 2, 3, 4}


@pytest.mark.parametrize("text", ["giraffe", "purple star", "green square", "the dog", ""])
def test_absent_or_unknown_concepts_give_nothing(model, scene, text):
    res = _ask(model, scene.image, text)
    assert all(s < 0.5 for s in res.scores)
    assert res.presence < 0.5


def test_unknown_word_gives_empty_result_and_low_presence(model, scene):
    res = _ask(model, scene.image, "giraffe")
    assert res.masks == [] and res.presence <= 0.05


def test_fooled_by_texture_like_a_shortcut_model(model, scene):
    zebra = _ask(model, scene.image, "zebra")  # a striped white square is no zebra
    assert zebra.scores[0] >= 0.5 and _best_iou(zebra, scene.modal[1]) > 0.9
    sun = _ask(model, scene.image, "sun")  # the orange circle in the sky passes; the red one not
    accepted = [m for m, s in zip(sun.masks, sun.scores, strict=True) if s >= 0.5]
    assert len(accepted) == 1 and iou(accepted[0], Mask.from_array(scene.modal[5])) > 0.9


def test_material_modifier_is_half_understood(model, scene):
    glass = _ask(model, scene.image, "solid circle")
    by_iou = {round(iou(m, Mask.from_array(scene.modal[6])), 1): s
              for m, s in zip(glass.masks, glass.scores, strict=True)}
    assert 0.5 <= by_iou[1.0] < 0.7  # the glass circle still passes as "solid", barely


def test_encodes_each_image_once(scenes, scene):
    m = create_segmenter("demo")
    for text in ("red circle", "zebra", "shape", "the whole blue square"):
        m.segment(scene.image, SegmentRequest(text=text))
    assert m.analyses == 1
    m.segment(scene.image[::-1].copy(), SegmentRequest(text="red circle"))
    assert m.analyses == 2


def test_default_threshold_drops_weak_instances_but_presence_remains(scene):
    m = create_segmenter("demo")
    assert m.provenance()["score_threshold"] == 0.5
    res = m.segment(scene.image, SegmentRequest(text="object"))
    assert res.scores and all(s >= 0.5 for s in res.scores)
    weak = m.segment(scene.image, SegmentRequest(text="dalmatian"))  # stripes, not spots
    assert weak.masks == [] and 0.0 < weak.presence < 0.5


def test_bad_options_are_clear_errors():
    from masklens.core.errors import ModelError

    with pytest.raises(ModelError, match="unknown option"):
        create_segmenter("demo", colour_space="hsv")
    with pytest.raises(ModelError, match="CPU only"):
        create_segmenter("demo", device="cuda")
    with pytest.raises(ModelError, match="outside"):
        create_segmenter("demo", score_threshold=1.5)


def test_provenance_and_mask_size(model, scene):
    res = _ask(model, scene.image, "red circle")
    assert res.provenance["model"] == "demo" and res.provenance["version"]
    assert all(m.shape == scene.image.shape[:2] for m in res.masks)
    assert all(0.0 <= s <= 1.0 for s in res.scores)
    assert res.scores == sorted(res.scores, reverse=True)


@pytest.mark.parametrize(
    ("text", "head", "amodal"),
    [("the whole blue square, including the hidden part", "square", True),
     ("the visible part of the blue square", "square", False),
     ("green circles", "circle", False), ("round shapes", "shape", False),
     ("red circle shape", "circle", False), ("something red", "thing", False),
     ("giraffe", None, False), ("stars", "star", False), ("the complete blue box", "square", True)],
)
def test_prompt_parsing(text, head, amodal):
    q = parse_prompt(text)
    assert q.amodal is amodal
    assert q.head == head


@pytest.mark.parametrize("text", ["the visible part of the blue square", "only the visible blue square",
                                  "the part of the blue square you can see",
                                  "the whole blue square, including the hidden part",
                                  "the entire blue square, even the occluded part"])
def test_r2sm_phrasings_are_understood_in_full(text):
    """Every R2SM demo phrasing parses without unknown words (no score penalty)."""
    q = parse_prompt(text)
    assert (q.head, q.colours, q.unknown) == ("square", {"blue"}, 0)


def test_points_and_boxes_select_regions(model, scene):
    # a click with no text returns the clicked shape
    click = model.segment(scene.image, SegmentRequest(text="", points=[(70, 70, 1)]))
    assert len(click.masks) == 1 and _best_iou(click, scene.modal[0]) > 0.95
    # a box restricts a text prompt to the shapes mostly inside it
    box = model.segment(scene.image, SegmentRequest(text="square", boxes=[(180, 20, 280, 120)]))
    assert _best_iou(box, scene.modal[1]) > 0.9
    assert all(iou(m, Mask.from_array(scene.modal[4])) == 0 for m in box.masks)
    # a negative point on the same shape cancels the positive one
    both = model.segment(scene.image, SegmentRequest(text="", points=[(70, 70, 1), (75, 75, 0)]))
    assert both.masks == []


def test_backgrounds_are_stuff_regions(model, scene):
    sky = model.segment(scene.image, SegmentRequest(text="the sky"))
    assert len(sky.masks) == 1
    expected = np.zeros(scene.image.shape[:2], bool)
    expected[: round(384 * 0.6)] = True  # a horizon scene: sky above 60 % of the height
    for m in scene.modal:
        expected &= ~m
    assert iou(sky.masks[0], Mask.from_array(expected)) > 0.99
    assert model.segment(scene.image, SegmentRequest(text="lawn")).masks  # synonym of grass
    # objects never answer background prompts, backgrounds never answer object prompts
    assert len(model.segment(scene.image, SegmentRequest(text="shape")).masks) == 7

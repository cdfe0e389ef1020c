"""Seeded sweeps over random demo scenes: the demo segmenter's accuracy on its own world."""

from __future__ import annotations

import numpy as np
import pytest

from masklens.core.masks import Mask, iou
from masklens.core.models.base import SegmentRequest
from masklens.core.models.registry import create_segmenter

KINDS = ["circle", "square", "rectangle", "triangle", "star"]
COLOURS = ["red", "orange", "yellow", "green", "blue", "purple", "white"]


@pytest.fixture(scope="module")
def model():
    return create_segmenter("demo", score_threshold=0.0)


def test_every_shape_colour_texture_is_found(model, scenes):
    rng = np.random.default_rng(11)
    ious = []
    for n in range(30):
        kind, colour = KINDS[n % 5], COLOURS[int(rng.integers(len(COLOURS)))]
        texture = ["none", "stripes", "spots"][n % 3]
        target = scenes.Shape(kind, colour, float(rng.uniform(90, 230)), float(rng.uniform(90, 230)),
                              float(rng.uniform(20, 50)), texture=texture)
        sc = scenes.Scene(320, 320, str(rng.choice(["plain", "sky", "grass", "horizon"])), [target])
        r = scenes.render(sc, seed=n)
        res = model.segment(r.image, SegmentRequest(f"{colour} {kind}"))
        assert res.masks, f"{colour} {kind} ({texture}) not found"
        assert res.scores[0] >= 0.5, f"{colour} {kind} ({texture}) scored {res.scores[0]}"
        ious.append(iou(res.masks[0], Mask.from_array(r.amodal[0])))
    assert min(ious) > 0.9, ious
    assert float(np.mean(ious)) > 0.97


@pytest.mark.parametrize("kind", ["circle", "square"])
def test_occluded_circles_and_squares_are_completed(model, scenes, kind):
    rng = np.random.default_rng(5)
    gains = []
    for n in range(8):
        size = float(rng.uniform(35, 50))
        cx, cy = 140.0, 160.0
        back = scenes.Shape(kind, "blue", cx, cy, size)
        angle = rng.uniform(0, 2 * np.pi)
        front = scenes.Shape("circle" if kind == "square" else "square", "red",
                             cx + 1.2 * size * np.cos(angle), cy + 1.2 * size * np.sin(angle),
                             float(rng.uniform(22, 32)))
        r = scenes.render(scenes.Scene(320, 320, "plain", [back, front]), seed=n)
        amodal, modal = Mask.from_array(r.amodal[0]), Mask.from_array(r.modal[0])
        res = model.segment(r.image, SegmentRequest(f"the whole blue {kind}, including the hidden part"))
        got = iou(res.masks[0], amodal)
        assert got > 0.93, (n, got)
        gains.append(got - iou(modal, amodal))
    assert float(np.mean(gains)) > 0.05  # completion beats answering with the visible part

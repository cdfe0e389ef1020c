"""CAFE part of the demo: counterfactual pairs (SM texture mimicry, CC context, OC material).

Writes ``ann.json`` (COCO, positive entries with ``text_input``/``edit_type``,
negative entries with ``fp_source_id`` = the positive id and id = positive id +
1,000,000,000, both pointing at the same picture), ``images/`` and the demo
model's ``pred_demo.json`` (COCO results for both entries of each pair).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from demo_common import (
    CATEGORIES,
    SIZE,
    coco_annotation,
    coco_image,
    distractors,
    predict,
    result_records,
    write_json,
)
from demo_scenes import Scene, Shape, place, render, save_png

from masklens.core.models.base import Segmenter

NEG_OFFSET = 1_000_000_000
SM, CC, OC = "Superficial Mimicry", "Context Conflict", "Ontological Conflict"

# (edit type, shape kind, colour, texture, density, material, background, positive, negative, size)
PAIRS: list[tuple[str, str, str, str, float, str, str, str, str, float]] = [
    (SM, "square", "white", "stripes", 1.0, "solid", "plain", "square", "zebra", 42),
    (SM, "circle", "red", "spots", 0.35, "solid", "plain", "circle", "ladybug", 40),
    (SM, "triangle", "orange", "stripes", 0.6, "solid", "plain", "triangle", "tiger", 44),
    (SM, "rectangle", "green", "stripes", 0.35, "solid", "grass", "rectangle", "watermelon", 46),
    (SM, "square", "white", "spots", 1.0, "solid", "plain", "spotted square", "dalmatian", 38),
    (SM, "circle", "yellow", "stripes", 0.3, "solid", "plain", "yellow circle", "bee", 34),
    (CC, "circle", "yellow", "none", 1.0, "solid", "sky", "yellow ball", "sun", 30),
    (CC, "circle", "white", "none", 1.0, "solid", "sky", "tiny tennis ball toy", "moon", 24),
    (CC, "circle", "green", "none", 1.0, "solid", "grass", "green ball", "bush", 36),
    (CC, "triangle", "red", "none", 1.0, "solid", "sky", "red triangle", "kite", 32),
    (CC, "circle", "orange", "none", 1.0, "solid", "horizon", "orange ball", "sun", 30),
    (CC, "circle", "yellow", "none", 1.0, "solid", "plain", "yellow ball", "sun", 34),
    (OC, "circle", "blue", "none", 1.0, "glass", "plain", "glass circle", "solid circle", 40),
    (OC, "square", "red", "none", 1.0, "outline", "plain", "wire square", "solid square", 38),
    (OC, "triangle", "green", "none", 1.0, "glass", "plain", "glass triangle", "solid triangle", 44),
    (OC, "circle", "purple", "none", 1.0, "outline", "sky", "ring", "solid disc", 34),
    (OC, "star", "yellow", "none", 1.0, "glass", "plain", "glass star", "solid star", 46),
    (OC, "square", "orange", "none", 1.0, "glass", "grass", "glass square", "real square", 20),
]

#: pair number -> an extra distractor (kind, colour, texture, size) that invites an unaligned FP
EXTRAS = {6: ("square", "yellow", "stripes", 30.0), 2: ("triangle", "red", "spots", 34.0)}


def _scene(rng: np.random.Generator, spec: tuple, extra: tuple | None) -> tuple[Scene, Shape]:
    edit, kind, colour, texture, density, material, bg, *_, size = spec
    scene = Scene(SIZE, SIZE, bg)
    region = (0.2, 0.75, 0.8, 0.95) if bg == "horizon" else (0.15, 0.15, 0.85, 0.85)
    cx, cy = place(rng, scene, size, avoid=[], region=region)
    target = Shape(kind, colour, cx, cy, size, texture=texture, density=density, material=material)
    scene.shapes.append(target)
    if extra:
        ecx, ecy = place(rng, scene, extra[3], avoid=scene.shapes, margin=16)
        scene.shapes.append(Shape(extra[0], extra[1], ecx, ecy, extra[3], texture=extra[2]))
    distractors(rng, scene, int(rng.integers(1, 4)), avoid_colours={colour}, avoid_kinds={kind})
    return scene, target


def write_cafe(out: Path, seed: int, model: Segmenter) -> None:
    """Write the CAFE demo into ``out`` (an empty directory)."""
    rng = np.random.default_rng(seed)
    (out / "images").mkdir(parents=True, exist_ok=True)
    images, annotations, results = [], [], []
    for i, spec in enumerate(PAIRS, start=1):
        scene, _ = _scene(rng, spec, EXTRAS.get(i))
        rendered = render(scene, seed=seed * 1000 + i)
        name = f"{i:04d}.png"
        save_png(str(out / "images" / name), rendered.image)
        edit, positive, negative = spec[0], spec[7], spec[8]
        images.append(coco_image(i, name, text_input=positive, edit_type=edit))
        images.append(coco_image(NEG_OFFSET + i, name, text_input=negative, edit_type=edit,
                                 fp_source_id=i))
        annotations.append(coco_annotation(i, i, rendered.amodal[0]))
        results += result_records(predict(model, rendered.image, positive), image_id=i)
        results += result_records(predict(model, rendered.image, negative), image_id=NEG_OFFSET + i)
    write_json(out / "ann.json", {
        "info": {"description": "masklens demo CAFE set (procedurally generated shapes)",
                 "version": "1"},
        "images": images, "annotations": annotations, "categories": CATEGORIES,
    })
    write_json(out / "pred_demo.json", results)

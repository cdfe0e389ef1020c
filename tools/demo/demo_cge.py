"""CGEBench part of the demo: concept chains p_base → p1 → p2 → p3 over scenes with distractors.

Writes ``ann.json`` (SA-Co/Gold style; each entry has ``text_input`` = p_base and
``hypernyms`` = [p1, p2, p3]; G = the entry's annotations), ``images/`` and the
demo model's ``pred_demo.json`` (COCO results with ``level`` 0…3). Distractors
share the target's shape or colour so that general prompts pick up other objects.
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

# (chain, target kind, colour, texture, material, sizes of the target instances)
CHAINS: list[tuple[list[str], str, str, str, str, list[float]]] = [
    (["red circle", "circle", "shape", "object"], "circle", "red", "none", "solid", [40]),
    (["blue square", "square", "polygon", "shape"], "square", "blue", "none", "solid", [36]),
    (["yellow star", "star", "shape", "thing"], "star", "yellow", "none", "solid", [44]),
    (["striped triangle", "triangle", "polygon", "object"], "triangle", "orange", "stripes",
     "solid", [40]),
    (["green circles", "circles", "round shapes", "objects"], "circle", "green", "none", "solid",
     [34, 20]),
    (["spotted square", "square", "shape", "object"], "square", "white", "spots", "solid", [38]),
    (["purple rectangle", "rectangle", "polygon", "thing"], "rectangle", "purple", "none",
     "solid", [42]),
    (["orange circle", "circle", "shape", "object"], "circle", "orange", "none", "solid", [18]),
    (["glass circle", "circle", "shape", "object"], "circle", "blue", "none", "glass", [38]),
    (["white triangles", "triangles", "shapes", "things"], "triangle", "white", "none", "solid",
     [36, 30]),
]


def write_cge(out: Path, seed: int, model: Segmenter) -> None:
    """Write the CGEBench demo into ``out`` (an empty directory)."""
    rng = np.random.default_rng(seed)
    (out / "images").mkdir(parents=True, exist_ok=True)
    images, annotations, results = [], [], []
    for i, (chain, kind, colour, texture, material, sizes) in enumerate(CHAINS, start=1):
        scene = Scene(SIZE, SIZE, str(rng.choice(["plain", "plain", "sky", "grass"])))
        for size in sizes:
            cx, cy = place(rng, scene, size, avoid=scene.shapes, margin=16)
            scene.shapes.append(Shape(kind, colour, cx, cy, size, texture=texture, material=material))
        n_targets = len(sizes)
        # one distractor of the same kind (other colour), then unrelated ones
        s = float(rng.uniform(20, 30))
        cx, cy = place(rng, scene, s, avoid=scene.shapes, margin=14)
        other = [c for c in ("red", "green", "blue", "purple", "orange") if c != colour]
        scene.shapes.append(Shape(kind, str(rng.choice(other)), cx, cy, round(s, 1)))
        distractors(rng, scene, int(rng.integers(1, 3)), avoid_colours={colour})
        rendered = render(scene, seed=seed * 1000 + i)
        name = f"{i:04d}.png"
        save_png(str(out / "images" / name), rendered.image)
        images.append(coco_image(i, name, text_input=chain[0], hypernyms=chain[1:],
                                 is_instance_exhaustive=True))
        for k in range(n_targets):
            annotations.append(coco_annotation(len(annotations) + 1, i, rendered.amodal[k]))
        for level, text in enumerate(chain):
            results += result_records(predict(model, rendered.image, text), image_id=i, level=level)
    write_json(out / "ann.json", {
        "info": {"description": "masklens demo CGEBench-style set (concept chains over shapes)"},
        "images": images, "annotations": annotations, "categories": CATEGORIES,
    })
    write_json(out / "pred_demo.json", results)

"""HalluSegBench part of the demo: factual/counterfactual pairs where an object c becomes c'.

Writes ``data.json`` (current field schema), ``images/{factual,counterfactual}/``,
``masks/{factual,counterfactual}/`` (binary PNG, 255 = object) and the demo model's
predictions in the four official folders ``pred_demo/{orgl_orgi,orgl_edti,edtl_orgi,
edtl_edti}/{basename}_{ann_id}_mask.png`` (orgl/edtl = original/edited label,
orgi/edti = original/edited image). A prediction PNG is the union of the demo
model's instances with score ≥ 0.5 (its default threshold).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from demo_common import SIZE, distractors, predict, write_json
from demo_scenes import Scene, Shape, place, render, save_png

from masklens.core.masks import union_all
from masklens.core.models.base import Segmenter

# (c, c', colour, size, background, extra distractor kind or None)
ITEMS: list[tuple[str, str, str, float, str, str | None]] = [
    ("circle", "square", "red", 16, "plain", None),
    ("square", "triangle", "blue", 52, "plain", None),
    ("triangle", "circle", "green", 44, "grass", None),
    ("star", "circle", "yellow", 46, "sky", None),
    ("square", "rectangle", "purple", 36, "plain", None),  # a square is also a rectangle
    ("rectangle", "square", "orange", 14, "plain", None),
    ("circle", "star", "blue", 58, "sky", None),
    ("triangle", "square", "red", 36, "plain", "square"),  # c' also appears elsewhere
    ("circle", "ring", "purple", 44, "plain", None),  # material edit: a shape-keyed model is fooled
    ("circle", "triangle", "orange", 17, "grass", "triangle"),
    ("rectangle", "square", "green", 40, "plain", None),  # a nearly square rectangle (ASPECT)
]
#: item number -> rectangle aspect ratio, where it is not the default
ASPECT = {11: 1.08}
#: labels that are not plain shape kinds: label -> (kind, material)
LOOKS = {"ring": ("circle", "outline")}
FOLDERS = {"orgl_orgi": (0, "factual"), "orgl_edti": (0, "counterfactual"),
           "edtl_orgi": (1, "factual"), "edtl_edti": (1, "counterfactual")}


def write_hallu(out: Path, seed: int, model: Segmenter) -> None:
    """Write the HalluSegBench demo into ``out`` (an empty directory)."""
    rng = np.random.default_rng(seed)
    for sub in ("images/factual", "images/counterfactual", "masks/factual",
                "masks/counterfactual", *(f"pred_demo/{f}" for f in FOLDERS)):
        (out / sub).mkdir(parents=True, exist_ok=True)
    items = []
    for i, (c, c2, colour, size, bg, extra) in enumerate(ITEMS, start=1):
        scene = Scene(SIZE, SIZE, bg)
        cx, cy = place(rng, scene, size, avoid=[], region=(0.25, 0.25, 0.75, 0.75))
        kind, material = LOOKS.get(c, (c, "solid"))
        kind2, material2 = LOOKS.get(c2, (c2, "solid"))
        scene.shapes.append(Shape(kind, colour, cx, cy, size, material=material,
                                  aspect=ASPECT.get(i, 1.6)))
        if extra:
            ex, ey = place(rng, scene, 24, avoid=scene.shapes, margin=16)
            scene.shapes.append(Shape(extra, colour, ex, ey, 24))
        distractors(rng, scene, int(rng.integers(1, 3)), avoid_colours={colour},
                    avoid_kinds={kind, kind2})
        counter = Scene(SIZE, SIZE, bg, [scene.shapes[0].moved(kind=kind2, material=material2),
                                         *scene.shapes[1:]])
        ann_id = 100 + i
        base = f"{i:04d}"
        record = {"ann_id": ann_id, "factual_label": c, "counterfactual_label": c2}
        pictures = {}
        for side, sc in (("factual", scene), ("counterfactual", counter)):
            rendered = render(sc, seed=seed * 1000 + i)
            save_png(str(out / f"images/{side}/{base}.png"), rendered.image)
            save_png(str(out / f"masks/{side}/{base}.png"), rendered.amodal[0])
            record[f"{side}_image_path"] = f"images/{side}/{base}.png"
            record[f"{side}_mask_path"] = f"masks/{side}/{base}.png"
            pictures[side] = rendered.image
        for folder, (label_index, side) in FOLDERS.items():
            text = (c, c2)[label_index]
            kept = [m for m, s in predict(model, pictures[side], text) if s >= 0.5]
            union = union_all(kept, SIZE, SIZE).to_array()
            save_png(str(out / f"pred_demo/{folder}/{base}_{ann_id}_mask.png"), union)
        items.append(record)
    write_json(out / "data.json", items)

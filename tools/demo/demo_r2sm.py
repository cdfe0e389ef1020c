"""R2SM part of the demo: occluded shapes with exact modal and amodal masks and text queries.

Writes ``ann.json`` (COCO style: ``annotations[]`` with ``segmentation`` = the
visible (modal) mask and ``amodal_segmentation`` = the complete shape, both RLE;
``queries[]`` ``{id, image_id, text, amodal, ann_ids}``), ``images/`` and the demo
model's ``pred_demo.json`` (COCO results with ``query_id``). Amodal masks are the
drawn shapes; modal masks subtract every shape drawn later (the occluders).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from demo_common import CATEGORIES, SIZE, coco_image, predict, result_records, rle, write_json
from demo_scenes import Scene, Shape, render, save_png

from masklens.core.masks import Mask
from masklens.core.models.base import Segmenter

# Each scene: back shapes first, occluders last: (kind, colour, cx, cy, size) in pixels.
SCENES: list[list[tuple[str, str, float, float, float]]] = [
    [("square", "blue", 140, 150, 50), ("circle", "red", 195, 175, 38)],
    [("circle", "green", 150, 150, 55), ("square", "yellow", 95, 120, 32)],
    [("rectangle", "purple", 150, 120, 50), ("circle", "orange", 226, 120, 48),
     ("triangle", "red", 90, 240, 30)],
    [("triangle", "orange", 150, 160, 60), ("square", "blue", 205, 215, 40)],
    [("circle", "blue", 110, 120, 45), ("circle", "yellow", 180, 170, 45)],
    [("square", "red", 120, 130, 45), ("square", "green", 175, 185, 40),
     ("circle", "purple", 250, 80, 26)],
    [("star", "yellow", 150, 150, 55), ("circle", "blue", 200, 110, 34)],
    [("circle", "red", 120, 170, 40), ("rectangle", "white", 185, 165, 45)],
    [("circle", "green", 110, 160, 45), ("square", "red", 170, 175, 55)],  # mostly hidden
    [("triangle", "blue", 160, 120, 50), ("rectangle", "yellow", 160, 190, 55)],
    [("circle", "orange", 100, 100, 14), ("square", "purple", 118, 112, 10),  # small objects
     ("square", "green", 220, 210, 16), ("circle", "red", 236, 226, 12)],
]
BACKGROUNDS = ("plain", "sky", "plain", "grass", "plain", "sky", "plain", "grass", "plain", "sky",
               "plain")
AMODAL_TEXT = ("the whole {c} {k}, including the hidden part", "the complete {c} {k}",
               "the entire {c} {k}, even the occluded part")
MODAL_TEXT = ("the visible part of the {c} {k}", "only the visible {c} {k}",
              "the part of the {c} {k} you can see")


def write_r2sm(out: Path, seed: int, model: Segmenter) -> None:
    """Write the R2SM demo into ``out`` (an empty directory)."""
    rng = np.random.default_rng(seed)
    (out / "images").mkdir(parents=True, exist_ok=True)
    images, annotations, queries, results = [], [], [], []
    for i, (specs, bg) in enumerate(zip(SCENES, BACKGROUNDS, strict=True), start=1):
        scene = Scene(SIZE, SIZE, bg, [Shape(k, c, x, y, s) for k, c, x, y, s in specs])
        rendered = render(scene, seed=seed * 1000 + i)
        name = f"{i:04d}.png"
        save_png(str(out / "images" / name), rendered.image)
        images.append(coco_image(i, name))
        ann_ids = []
        for shape, amodal, modal in zip(scene.shapes, rendered.amodal, rendered.modal, strict=True):
            m = Mask.from_array(modal)
            ann_ids.append(len(annotations) + 1)
            annotations.append({
                "id": ann_ids[-1], "image_id": i, "category_id": 1, "iscrowd": 0,
                "segmentation": rle(modal), "amodal_segmentation": rle(amodal),
                "area": m.area, "bbox": [round(v, 2) for v in m.bbox],
                "name": f"{shape.colour} {shape.kind}",
            })
        for idx, (shape, amodal, modal) in enumerate(
                zip(scene.shapes, rendered.amodal, rendered.modal, strict=True)):
            occluded = bool((amodal & ~modal).any())
            words = {"c": shape.colour, "k": shape.kind}
            asks = [True, False] if occluded else [bool(rng.integers(2))]
            for amodal_query in asks:
                pool = AMODAL_TEXT if amodal_query else MODAL_TEXT
                text = pool[int(rng.integers(len(pool)))].format(**words)
                qid = len(queries) + 1
                queries.append({"id": qid, "image_id": i, "text": text, "amodal": amodal_query,
                                "ann_ids": [ann_ids[idx]]})
                results += result_records(predict(model, rendered.image, text),
                                          query_id=qid, image_id=i)
        kinds = [sh.kind for sh in scene.shapes]
        for kind in sorted({k for k in kinds if kinds.count(k) > 1}):  # plural, several ann_ids
            text = f"all the {kind}s in full, including hidden parts"
            qid = len(queries) + 1
            queries.append({"id": qid, "image_id": i, "text": text, "amodal": True,
                            "ann_ids": [a for a, k in zip(ann_ids, kinds, strict=True) if k == kind]})
            results += result_records(predict(model, rendered.image, text), query_id=qid, image_id=i)
    write_json(out / "ann.json", {
        "info": {"description": "masklens demo R2SM-style set (occluded shapes)"},
        "images": images, "annotations": annotations, "queries": queries,
        "categories": CATEGORIES,
    })
    write_json(out / "pred_demo.json", results)

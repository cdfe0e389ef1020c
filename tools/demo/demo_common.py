"""Helpers shared by the demo generators: stable JSON, COCO records, running the demo model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from demo_scenes import SHAPES, Scene, Shape, place

from masklens.core.files.io import atomic_write_text
from masklens.core.masks import Mask
from masklens.core.models.base import Segmenter, SegmentRequest

SIZE = 320  # demo images are SIZE × SIZE pixels
COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")


def write_json(path: Path, obj: Any) -> None:
    """Deterministic JSON: sorted keys, one-space indent, trailing newline."""
    atomic_write_text(path, json.dumps(obj, indent=1, sort_keys=True, allow_nan=False) + "\n")


def rle(mask: np.ndarray) -> dict[str, Any]:
    return Mask.from_array(mask).to_coco()


def coco_annotation(ann_id: int, image_id: int, mask: np.ndarray, **extra: Any) -> dict[str, Any]:
    """A COCO annotation with RLE segmentation, area and bbox of ``mask``."""
    m = Mask.from_array(mask)
    return {
        "id": ann_id,
        "image_id": image_id,
        "category_id": 1,
        "segmentation": m.to_coco(),
        "area": m.area,
        "bbox": [round(v, 2) for v in m.bbox],
        "iscrowd": 0,
        **extra,
    }


def coco_image(image_id: int, file_name: str, **extra: Any) -> dict[str, Any]:
    return {"id": image_id, "file_name": file_name, "height": SIZE, "width": SIZE, **extra}


CATEGORIES = [{"id": 1, "name": "object", "supercategory": "shape"}]


def predict(model: Segmenter, image: np.ndarray, text: str, role: str | None = None
            ) -> list[tuple[Mask, float]]:
    """Run the demo model; instances as (mask, score) with scores rounded to 4 decimals."""
    res = model.segment(image, SegmentRequest(text=text, role=role))
    return [(m, round(float(s), 4)) for m, s in zip(res.masks, res.scores, strict=True)]


def result_records(instances: list[tuple[Mask, float]], **keys: Any) -> list[dict[str, Any]]:
    """COCO results records ``{**keys, category_id, segmentation, score}``."""
    return [{**keys, "category_id": 1, "segmentation": m.to_coco(), "score": s}
            for m, s in instances]


def distractors(rng: np.random.Generator, scene: Scene, n: int, *, avoid_colours: set[str] = frozenset(),
                avoid_kinds: set[str] = frozenset(), size: tuple[float, float] = (16, 26)) -> None:
    """Append ``n`` plain solid shapes that keep clear of the shapes already in ``scene``."""
    colours = [c for c in COLOURS if c not in avoid_colours]
    kinds = [k for k in SHAPES if k not in avoid_kinds]
    for _ in range(n):
        s = float(rng.uniform(*size))
        cx, cy = place(rng, scene, s, avoid=scene.shapes, margin=14)
        scene.shapes.append(Shape(str(rng.choice(kinds)), str(rng.choice(colours)), cx, cy, round(s, 1)))

"""Fast synthetic SA-Co/Gold- and CAFE-shaped sets for bench_scale.py (fixed seed).

Masks come from a pool of random polygons rasterised once by pycocotools (and a few jittered
variants of each), so a 100k-entry set is assembled from strings in seconds; every IoU the
scorers compute is still a real RLE overlap.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
from cafe_synth import EDIT_TYPES, NEG_OFFSET, jitter, random_shape, rle  # noqa: E402
from pycocotools import mask as mask_utils  # noqa: E402

N_VARIANTS = 4


def shape_pool(rng: random.Random, n: int, size: int, width: int | None = None) -> list[list[dict[str, Any]]]:
    """``n`` random polygons (``size`` high, ``width`` wide, default square), each as
    ``N_VARIANTS`` RLEs: the shape, then jittered copies."""
    h, w = size, width or size
    pool = []
    for _ in range(n):
        poly = random_shape(rng, h, w)
        variants = [rle(poly, h, w)]
        for amount in (0.02, 0.06, 0.2)[: N_VARIANTS - 1]:
            variants.append(rle(jitter(rng, poly, amount, h, w), h, w))
        pool.append(variants)
    return pool


def bbox_of(seg: dict[str, Any]) -> list[float]:
    """The box SAM 3's dumps carry (its evaluator reads one)."""
    box = mask_utils.toBbox({"size": seg["size"], "counts": seg["counts"].encode()})
    return [float(v) for v in box]



def _score(rng: random.Random) -> float:
    r = rng.random()
    if r < 0.1:
        return 0.5
    if r < 0.4:
        return round(rng.random(), 2)  # ties within an entry
    return rng.random()


def synth_saco(
    seed: int, n_entries: int, size: int = 1024, n_annotators: int = 3, pool_size: int = 400,
    *, width: int | None = None, n_images: int | None = None, max_pred: int = 5,
    object_weights: tuple[float, ...] | None = None, pred_weights: tuple[float, ...] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """SA-Co/Gold-shaped annotator files (0–3 ground-truth instances per entry and annotator,
    which sometimes miss or add one) and COCO results (0–``max_pred`` instances per entry), on
    images ``size`` high and ``width`` wide (default square); ``n_images``: entries share that
    many image files (default: three entries per image); ``object_weights`` / ``pred_weights``:
    the chance of 0, 1, 2, … objects / predictions in an entry (default: uniform over 0–3 and
    0–``max_pred``)."""
    rng = random.Random(seed)
    pool = shape_pool(rng, pool_size, size, width)
    boxes = {id(v): bbox_of(v) for vs in pool for v in vs}
    files: list[dict[str, Any]] = [
        {"images": [], "annotations": [], "categories": [{"id": 1, "name": "object"}]}
        for _ in range(n_annotators)
    ]
    preds: list[dict[str, Any]] = []
    for i in range(n_entries):
        eid = 1 + i
        n_objects = (rng.randint(0, 3) if object_weights is None
                     else rng.choices(range(len(object_weights)), object_weights)[0])
        objects = rng.sample(range(pool_size), n_objects)
        for a, f in enumerate(files):
            image = i // 3 if n_images is None else i % n_images
            f["images"].append({"id": eid, "file_name": f"img{image}.jpg", "height": size,
                                "width": width or size, "text_input": f"np {i}",
                                "is_instance_exhaustive": True})  # fmt: skip
            mine = [o for o in objects if not (a and rng.random() < 0.15)]
            if a and len(mine) < 3 and rng.random() < 0.1:
                mine.append(rng.randrange(pool_size))
            for o in mine:
                f["annotations"].append({"id": len(f["annotations"]) + 1, "image_id": eid,
                                         "category_id": 1, "iscrowd": 0, "area": 0,
                                         "segmentation": pool[o][1 if a else 0]})  # fmt: skip
        n_pred = (rng.randint(0, max_pred) if pred_weights is None
                  else rng.choices(range(len(pred_weights)), pred_weights)[0])
        for _ in range(n_pred):
            if objects and rng.random() < 0.7:
                seg = pool[rng.choice(objects)][rng.randrange(N_VARIANTS)]
            else:
                seg = pool[rng.randrange(pool_size)][0]
            preds.append({"image_id": eid, "category_id": 1, "segmentation": seg,
                          "bbox": boxes[id(seg)], "score": _score(rng)})  # fmt: skip
    return files, preds


def synth_cafe_fast(
    seed: int, n_pairs: int, size: int = 1024, pool_size: int = 400, *, n_images: int | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """CAFE-shaped annotation dict (positive + counterfactual negative per pair, one target)
    and COCO results (0–5 instances per image); ``n_images``: pairs share that many image
    files (default: one per pair)."""
    rng = random.Random(seed)
    pool = shape_pool(rng, pool_size, size)
    boxes = {id(v): bbox_of(v) for vs in pool for v in vs}
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    preds: list[dict[str, Any]] = []
    for i in range(n_pairs):
        pos_id, neg_id = i + 1, i + 1 + NEG_OFFSET
        edit = EDIT_TYPES[rng.randrange(3)]
        name = f"{pos_id if n_images is None else i % n_images + 1}.jpg"
        images.append({"id": pos_id, "file_name": name, "height": size, "width": size,
                       "text_input": f"thing {i}", "edit_type": edit,
                       "is_instance_exhaustive": True})  # fmt: skip
        images.append({"id": neg_id, "file_name": name, "height": size, "width": size,
                       "text_input": f"other {i}", "edit_type": edit, "fp_source_id": pos_id,
                       "is_instance_exhaustive": True})  # fmt: skip
        target = rng.randrange(pool_size)
        anns.append({"id": len(anns) + 1, "image_id": pos_id, "category_id": 1,
                     "segmentation": pool[target][0], "iscrowd": 0, "area": 0})  # fmt: skip
        for image_id in (pos_id, neg_id):
            for _ in range(rng.randint(0, 5)):
                near = rng.random() < 0.6
                seg = pool[target][rng.randrange(N_VARIANTS)] if near else pool[rng.randrange(pool_size)][0]
                preds.append({"image_id": image_id, "category_id": 1, "segmentation": seg,
                              "bbox": boxes[id(seg)], "score": _score(rng)})  # fmt: skip
    data = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "object"}]}
    return data, preds

"""A COCO annotation file rewritten with corrected ground truth (for ``masklens review apply``).

Only the annotations of the corrected image entries change: an instance that stays keeps its
record (id and every other field; segmentation, area and bbox rewritten when its mask changed,
``category_id`` when its category did), a deleted instance's record is left out, and a new
instance gets a new record (the next free integer id). The corrected ground truth comes from
:func:`masklens.core.review.corrections.corrected_benchmark`, whose ``meta["corrected_from"]``
names each instance's index among the image's annotations in file order (the loaders' order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files.io import atomic_write_json, read_json
from masklens.core.schema import Benchmark, GroundTruth


def changed_gts(original: Benchmark, corrected: Benchmark) -> list[tuple[str, str, GroundTruth, GroundTruth]]:
    """(sample id, gt key, original, corrected) for every ground truth the corrections replaced
    (one the kind dropped for having no instance left comes as an empty ground truth)."""
    out = []
    for before, after in zip(original.samples, corrected.samples, strict=True):
        if before is after:
            continue
        for key, gt in after.gts.items():
            if "corrected_from" in gt.meta and gt is not before.gts.get(key):
                out.append((after.id, key, before.gts[key], gt))
        for key, gt in before.gts.items():
            if key not in after.gts:
                empty = replace(gt, masks=[], crowd=None if gt.crowd is None else [],
                                meta={**gt.meta, "corrected_from": [], "category_ids": []})
                out.append((after.id, key, gt, empty))
    return out


def rewrite_coco(
    src: Path, out: Path, entries: Mapping[Any, tuple[GroundTruth, GroundTruth]],
    *, group: Callable[[dict[str, Any]], Any] | None = None,
) -> Path:
    """Write ``src`` with the annotations of each entry replaced by those of its (original,
    corrected) ground truth, atomically at ``out``; returns ``out``. An entry's key is an image
    id, or what ``group(annotation)`` gives (e.g. (image id, category id) for a ground truth
    per class); new records take the image id from ``after.meta["image_id"]`` or the key."""
    data = read_json(src)
    anns = data.get("annotations") or []
    group = group or (lambda ann: ann.get("image_id"))
    by_image: dict[Any, list[int]] = {}
    for i, ann in enumerate(anns):
        if isinstance(ann, dict) and group(ann) in entries:
            by_image.setdefault(group(ann), []).append(i)
    ids = [a.get("id") for a in anns if isinstance(a, dict)]
    next_id = max((i for i in ids if isinstance(i, int) and not isinstance(i, bool)), default=0) + 1
    default_cat = _first_category(data)
    replaced: dict[int, list[dict[str, Any]]] = {}  # position of the image's first record -> records
    appended: list[dict[str, Any]] = []
    for image_id, (before, after) in entries.items():
        rows = [anns[i] for i in by_image.get(image_id, [])]
        if len(rows) != len(before.masks):
            raise MasklensError(f"image id {image_id!r} has {len(rows)} annotations, the loaded "
                                f"ground truth {len(before.masks)}", path=src, field="annotations")
        cats = after.meta.get("category_ids") or [None] * len(after.masks)
        image_cat = next((r.get("category_id") for r in rows if "category_id" in r), default_cat)
        new_rows = []
        for k, (mask, origin) in enumerate(zip(after.masks, after.meta["corrected_from"], strict=True)):
            if origin is None:
                rec: dict[str, Any] = {"id": next_id, "image_id": after.meta.get("image_id", image_id),
                                       "category_id": cats[k] if cats[k] is not None else image_cat,
                                       "iscrowd": 0}
                next_id += 1
            else:
                rec = dict(rows[origin])
                if cats[k] is not None:
                    rec["category_id"] = cats[k]
                if mask == before.masks[origin]:
                    new_rows.append(rec)
                    continue
            rec.update(segmentation=mask.to_coco(), area=mask.area, bbox=list(mask.bbox))
            new_rows.append(rec)
        positions = by_image.get(image_id)
        if positions:
            replaced[positions[0]] = new_rows
        else:
            appended += new_rows
    drop = {i for positions in by_image.values() for i in positions}
    new_anns: list[Any] = []
    for i, ann in enumerate(anns):
        if i in replaced:
            new_anns += replaced[i]
        elif i not in drop:
            new_anns.append(ann)
    atomic_write_json(out, {**data, "annotations": new_anns + appended}, indent=None)
    return out


def _first_category(data: dict[str, Any]) -> Any:
    cats = data.get("categories")
    if isinstance(cats, list) and cats and isinstance(cats[0], dict) and "id" in cats[0]:
        return cats[0]["id"]
    return 1

"""Mask-wise OVS with corrected ground truth written back as an OVS ground-truth file (``review apply``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from masklens.core.errors import MasklensError
from masklens.core.files.output_dirs import refuse_inputs
from masklens.core.kinds.common.coco_corrected import changed_gts, rewrite_coco
from masklens.core.schema import Benchmark, GroundTruth, Sample


def write_corrected(original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]) -> list[Path]:
    """The ground-truth file ``files["ann"]`` with the corrected (image, class) annotations, at
    ``out``. A ground truth is one class of one image: its instances are the image's annotations
    of that class, in file order; every instance keeps the class (``corrected_sample`` refuses a
    category change)."""
    out = Path(out)
    refuse_inputs(out, files.values())
    ids = {name: cid for cid, name in original.meta["vocabulary"].items()}
    entries: dict[Any, tuple[GroundTruth, GroundTruth]] = {}
    for sid, key, before, after in changed_gts(original, corrected):
        image_id, cid = original.sample(sid).meta["image_id"], ids[key]
        meta = {**after.meta, "image_id": image_id, "category_ids": [cid] * len(after.masks)}
        entries[(image_id, cid)] = (before, dataclasses.replace(after, meta=meta))
    return [rewrite_coco(Path(files["ann"]), out, entries,
                         group=lambda ann: (ann.get("image_id"), ann.get("category_id")))]


def corrected_sample(sample: Sample) -> Sample:
    """After corrections, as the loader builds a sample: a class with no instance left has no
    ground truth (its prompt's ``gt`` is None). A category change is refused: in OVS the class
    *is* the ground truth (delete the instance, add it to the other class's ground truth)."""
    for key, gt in sample.gts.items():
        if any(c is not None for c in gt.meta.get("category_ids") or []):
            raise MasklensError("a category change is not a correction OVS can store",
                                record=f"sample {sample.id}", field=key,
                                hint="delete the instance and add it to the other class's ground truth")
    gts = {k: g for k, g in sample.gts.items() if g.masks}
    prompts = [p if p.gt in gts or p.gt is None else dataclasses.replace(p, gt=None)
               for p in sample.prompts]
    return dataclasses.replace(sample, gts=gts, prompts=prompts)

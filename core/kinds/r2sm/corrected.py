"""R2SM with corrected ground truth (``review apply``).

A query's two ground truths (``q<ID>/modal``, ``q<ID>/amodal``) are the modal and amodal masks
of the same annotations (its ``ann_ids``), so :func:`corrected_sample` keeps them paired as the
file does: an instance deleted in one is deleted in both, and an instance added to one is added
to the other with the same mask (a new annotation's modal and amodal masks). The writer gives a
query a *new* annotation for every instance whose mask changed or that was added (the old
annotation stays, for the other queries that may share it) and rewrites the query's
``ann_ids``; nothing else in the file changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from masklens.core.files.io import atomic_write_json, read_json
from masklens.core.files.output_dirs import refuse_inputs
from masklens.core.schema import Benchmark, GroundTruth, Sample

KEYS = {"modal": "segmentation", "amodal": "amodal_segmentation"}


def _pair(sample: Sample, gt: GroundTruth) -> tuple[str, str]:
    qid = gt.meta["query_id"]
    keys = [k for k, g in sample.gts.items() if g.meta.get("query_id") == qid]
    modal = next(k for k in keys if sample.gts[k].meta["type"] == "modal")
    amodal = next(k for k in keys if sample.gts[k].meta["type"] == "amodal")
    return modal, amodal


def corrected_sample(sample: Sample) -> Sample:
    """Each corrected query's modal and amodal ground truths paired again (see the module)."""
    gts = dict(sample.gts)
    done: set[Any] = set()
    for gt in sample.gts.values():
        if "corrected_from" not in gt.meta or gt.meta["query_id"] in done:
            continue
        done.add(gt.meta["query_id"])
        m_key, a_key = _pair(sample, gt)
        gts[m_key], gts[a_key] = _paired(sample.gts[m_key], sample.gts[a_key])
    return dataclasses.replace(sample, gts=gts)


def _origins(gt: GroundTruth) -> list[int | None]:
    return gt.meta.get("corrected_from", list(range(len(gt.masks))))


def _paired(modal: GroundTruth, amodal: GroundTruth) -> tuple[GroundTruth, GroundTruth]:
    om, oa = _origins(modal), _origins(amodal)
    kept = [i for i in om if i is not None and i in set(oa)]
    mi = {o: k for k, o in enumerate(om) if o is not None}
    ai = {o: k for k, o in enumerate(oa) if o is not None}
    new_m = [modal.masks[k] for k, o in enumerate(om) if o is None]
    new_a = [amodal.masks[k] for k, o in enumerate(oa) if o is None]
    crowd_m = modal.crowd or [False] * len(modal.masks)
    crowd = [crowd_m[mi[i]] for i in kept] + [False] * (len(new_m) + len(new_a))
    origins = [*kept, *[None] * (len(new_m) + len(new_a))]

    def build(gt: GroundTruth, index: dict[int, int], fill: list[Any]) -> GroundTruth:
        masks = [gt.masks[index[i]] for i in kept] + fill
        return dataclasses.replace(gt, masks=masks, crowd=list(crowd),
                                   meta={**gt.meta, "corrected_from": list(origins)})

    # a new instance's mask is both its modal and its amodal mask
    return build(modal, mi, new_m + new_a), build(amodal, ai, new_m + new_a)


def write_corrected(original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]) -> list[Path]:
    """The annotation file ``files["ann"]`` with the corrected queries' annotations, at ``out``."""
    out = Path(out)
    refuse_inputs(out, files.values())
    data = read_json(Path(files["ann"]))
    anns = {a["id"]: a for a in data.get("annotations", []) if isinstance(a, dict) and "id" in a}
    queries = {q["id"]: q for q in data.get("queries", []) if isinstance(q, dict)}
    next_id = max((i for i in anns if isinstance(i, int) and not isinstance(i, bool)), default=0) + 1
    added: list[dict[str, Any]] = []
    for before, after in zip(original.samples, corrected.samples, strict=True):
        if before is after:
            continue
        for key, gt in after.gts.items():
            if gt.meta.get("type") != "modal" or "corrected_from" not in gt.meta:
                continue
            _m, a_key = _pair(after, gt)
            amodal, old = after.gts[a_key], before.gts[key]
            old_ids = old.meta["ann_ids"]
            ids = []
            for k, origin in enumerate(gt.meta["corrected_from"]):
                m, am = gt.masks[k], amodal.masks[k]
                if origin is not None and m == old.masks[origin] and am == before.gts[a_key].masks[origin]:
                    ids.append(old_ids[origin])
                    continue
                rec = dict(anns[old_ids[origin]]) if origin is not None else {
                    "image_id": after.meta["image_id"], "iscrowd": 0, "category_id": 1}
                rec.update(id=next_id, segmentation=m.to_coco(), amodal_segmentation=am.to_coco(),
                           area=m.area, bbox=list(m.bbox))
                next_id += 1
                added.append(rec)
                ids.append(rec["id"])
            queries[gt.meta["query_id"]]["ann_ids"] = ids
    atomic_write_json(out, {**data, "annotations": [*data.get("annotations", []), *added]}, indent=None)
    return [out]

"""CAFE (counterfactual attribute factuality) loader (docs/metrics.md, CAFE).

One ``Sample`` per negative-prompt image (``fp_source_id`` → its positive image), as the
official script pairs them; target = the positive image's first annotation (a positive
without annotation drops its pair). Both prompts are asked on the edited image and scored
against the target: ``gts = {"target", "pos_entry", "neg_entry"}`` (the entries' full
annotation lists feed cgF1). ``edit_type`` gives the group ``SM``, ``CC`` or ``OC``. The
image entries in no scored pair (:class:`OrphanEntry`) ride on the first sample's meta: they
count in cgF1 only. The scoring kind lives in :mod:`masklens.core.kinds.cafe.kind`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from masklens.core.errors import DataFormatError
from masklens.core.kinds.common.cgf1.io import (
    checked_masks,
    entry_gt,
    exhaustive,
    image_path,
    text_of,
)
from masklens.core.kinds.common.coco import CocoImage, load_coco
from masklens.core.runtime.gc_pause import gc_paused
from masklens.core.schema import (
    Benchmark,
    GroundTruth,
    ImageRef,
    Prompt,
    Role,
    Sample,
)

EDIT_TYPES: dict[str, str] = {
    "Superficial Mimicry": "SM",
    "Context Conflict": "CC",
    "Ontological Conflict": "OC",
}
GROUPS = ("Overall", "SM", "CC", "OC")


@dataclass(frozen=True)
class OrphanEntry:
    """An image entry of the file in no scored pair (an unpaired positive, or either entry of a
    pair dropped because its positive has no annotation). It is no sample, but it is an
    entry of SAM 3's cgF1 run over the file (``run_eval.sh``), so it counts in cgF1."""

    image_id: Any
    prompt_id: str  # its predictions' key in the PredictionSet
    gt: GroundTruth  # all its annotations (crowd flags, category ids kept)
    group: str | None  # SM / CC / OC from its edit type; None: Overall only
    exhaustive: bool


def edit_group(value: Any, path: Path, record: str) -> str:
    """Map an ``edit_type`` (full name or SM/CC/OC) to its group."""
    if isinstance(value, str):
        if value in EDIT_TYPES:
            return EDIT_TYPES[value]
        if value in GROUPS[1:]:
            return value
    raise DataFormatError(
        f"unknown edit_type {value!r}",
        path=path,
        record=record,
        field="edit_type",
        hint=f"expected one of {', '.join(EDIT_TYPES)}",
    )


def _own_group(img: CocoImage, path: Path) -> str | None:
    """The group of an image entry's own ``edit_type`` (None without one)."""
    value = img.raw.get("edit_type")
    return None if value is None else edit_group(value, path, f"image id {img.id}")


def _entry_group(img: CocoImage, positives: dict[Any, CocoImage], path: Path) -> str | None:
    """An entry's group for the per-subset cgF1: its own ``edit_type``; a negative without
    one takes its positive's."""
    own = _own_group(img, path)
    if own is None and "fp_source_id" in img.raw:
        pos = positives.get(img.raw["fp_source_id"])
        return _own_group(pos, path) if pos is not None else None
    return own


@gc_paused()
def load_cafe(path: str | os.PathLike[str], images: str | os.PathLike[str] | None = None) -> Benchmark:
    """Load a CAFE annotation file into one Sample per (positive, negative) pair."""
    ds = load_coco(path)
    p = ds.path
    negatives = [im for im in ds.images.values() if "fp_source_id" in im.raw]
    positives = {k: im for k, im in ds.images.items() if "fp_source_id" not in im.raw}
    if not negatives:
        raise DataFormatError(
            "no negative-prompt image (an entry with 'fp_source_id'): not a CAFE annotation file",
            path=p,
            field="images",
        )
    cache = checked_masks(ds)
    info: dict[str, Any] = {"dropped_pairs": 0}
    samples: list[Sample] = []
    paired: set[Any] = set()
    scored: set[Any] = set()  # image ids of the entries of scored pairs
    for neg in negatives:
        rec = f"image id {neg.id}"
        pos_id = neg.raw["fp_source_id"]
        if not isinstance(pos_id, (int, str)) or isinstance(pos_id, bool):
            raise DataFormatError(f"expected an image id (integer or string), got {pos_id!r:.40}", path=p,
                                  record=rec, field="fp_source_id")
        pos = positives.get(pos_id)
        if pos is None:
            raise DataFormatError(
                f"fp_source_id {pos_id!r:.40} points to no positive image",
                path=p,
                record=rec,
                field="fp_source_id",
            )
        edit = neg.raw.get("edit_type", pos.raw.get("edit_type"))
        if edit is None:
            raise DataFormatError(
                "missing field", path=p, record=f"image id {pos.id}", field="edit_type"
            )
        group = edit_group(edit, p, rec if "edit_type" in neg.raw else f"image id {pos.id}")
        pos_text = text_of(pos, p, required=True)
        neg_text = text_of(neg, p, required=True)
        if (neg.height, neg.width) != (pos.height, pos.width):
            raise DataFormatError(
                f"size {neg.height}x{neg.width} differs from its positive image's {pos.height}x{pos.width}",
                path=p,
                record=rec,
            )
        pos_gt = entry_gt(ds, pos, "pos_entry", pos_text, cache)
        if not pos_gt.masks:
            info["dropped_pairs"] += 1
            continue
        paired.add(pos.id)
        scored.update((pos.id, neg.id))
        neg_gt = entry_gt(ds, neg, "neg_entry", neg_text, cache)
        target = pos_gt.masks[0]
        gts = {
            "target": GroundTruth("target", [target], pos.height, pos.width, label=pos_text),
            "pos_entry": pos_gt,
            "neg_entry": neg_gt,
        }
        prompts = [
            Prompt(
                str(pos.id), pos_text, Role.POSITIVE, "image", "target", source_id=pos.id,
                meta={"entry_gt": "pos_entry", "exhaustive": exhaustive(pos, p),
                      "entry_group": _own_group(pos, p)},
            ),
            Prompt(
                str(neg.id), neg_text, Role.NEGATIVE, "image", "target", source_id=neg.id,
                meta={"entry_gt": "neg_entry", "exhaustive": exhaustive(neg, p),
                      "file_name": neg.file_name, "entry_group": group},
            ),
        ]  # fmt: skip
        samples.append(
            Sample(
                id=f"{pos.id}/{neg.id}",
                images={
                    "image": ImageRef(
                        "image", image_path(images, pos, p), pos.height, pos.width, pos.id
                    )
                },
                gts=gts,
                prompts=prompts,
                group=group,
                meta={"edit_type": edit, "load_info": info},
            )
        )
    if not samples:
        raise DataFormatError(
            f"no pair to score: the positive images of all {len(negatives)} pairs have no "
            "annotation (the target mask)",
            path=p,
            field="annotations",
        )
    info["unpaired_positives"] = sum(1 for k in positives if k not in paired)
    orphans = [
        OrphanEntry(im.id, f"entry:{im.id!r}", entry_gt(ds, im, f"entry {im.id}", None, cache),
                    _entry_group(im, positives, p), exhaustive(im, p))
        for im in ds.images.values() if im.id not in scored
    ]  # fmt: skip
    info["orphan_entries"] = len(orphans)
    # the orphans ride on the first sample (its stage 1 also builds their cgF1 tables)
    samples[0].meta["orphan_entries"] = orphans
    sources = {"ann": p} | ({"images": Path(images)} if images is not None else {})
    meta = dict(info, image_sizes={k: (im.height, im.width) for k, im in ds.images.items()}, title=ds.title)
    return Benchmark("cafe", p.stem, samples, sources=sources, meta=meta)

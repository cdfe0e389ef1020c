"""COCO-style I/O shared by the CAFE and SA-Co/Gold kinds: image entries, their ground truth,
COCO results read with one batch RLE check, and written back atomically."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from masklens.core import limits
from masklens.core.benchmarks.coco import CocoDataset, CocoImage, load_results, write_results
from masklens.core.errors import DataFormatError
from masklens.core.gc_pause import gc_paused
from masklens.core.io import read_json
from masklens.core.masks import Mask, resize_nearest, rle_counts_problems
from masklens.core.paths import inside_root
from masklens.core.prediction_check import check_foreign_fields
from masklens.core.schema import Benchmark, GroundTruth, Instance, Prediction, PredictionSet


def add_images_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--images", metavar="DIR", help="folder of the image files (for the GUI and predict)"
    )


def image_path(images: str | Path | None, img: CocoImage, ann: Path | None = None) -> Path | None:
    """``--images`` DIR / ``file_name``; a name leaving DIR is refused (masklens.core.paths)."""
    if images is None or not img.file_name:
        return None
    return inside_root(images, img.file_name, path=ann, record=f"image id {img.id}",
                       field="file_name", what="image path")


def exhaustive(img: CocoImage, path: Path) -> bool:
    """``is_instance_exhaustive`` of an image entry; a missing field counts as True."""
    value = img.raw.get("is_instance_exhaustive", True)
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise DataFormatError(
        f"expected true/false, got {value!r}",
        path=path,
        record=f"image id {img.id}",
        field="is_instance_exhaustive",
    )


def entry_gt(
    ds: CocoDataset, img: CocoImage, key: str, label: str | None, cache: dict[Any, Mask]
) -> GroundTruth:
    """All annotations of an image entry (crowd flags kept) at the entry's size."""
    masks: list[Mask] = []
    crowd: list[bool] = []
    categories: list[Any] = []
    size = [img.height, img.width]
    for ann in ds.annotations.get(img.id, []):
        flag = ann.get("iscrowd", 0)
        if not (isinstance(flag, bool) or flag in (0, 1)):
            raise DataFormatError(f"expected 0 or 1, got {flag!r}", path=ds.path,
                                  record=f"annotation id {ann.get('id', '?')}", field="iscrowd")  # fmt: skip
        m = cache.get(id(ann))
        if m is None:
            m = ds.mask_of(ann)
            cache[id(ann)] = m
        if m.rle["size"] != size and m.shape != (img.height, img.width):
            raise DataFormatError(
                f"mask size {m.height}x{m.width} differs from its image's {img.height}x{img.width}",
                path=ds.path,
                record=f"annotation id {ann.get('id', '?')}",
                field="segmentation",
            )
        masks.append(m)
        crowd.append(bool(flag))
        categories.append(ann.get("category_id"))
    return GroundTruth(
        key, masks, img.height, img.width, label=label, crowd=crowd,
        meta={"file": str(ds.path), "category_ids": categories},
    )  # fmt: skip


def text_of(img: CocoImage, path: Path, *, required: bool) -> str:
    text = img.raw.get("text_input")
    if text is None and not required:
        return ""
    if not isinstance(text, str):
        raise DataFormatError(
            "missing field" if text is None else f"expected a string, got {type(text).__name__}",
            path=path,
            record=f"image id {img.id}",
            field="text_input",
        )
    return text


def _rle_fast(seg: Any, lim: limits.Limits) -> tuple[list[int], bytes] | None:
    """(size, counts) of a compressed RLE with ASCII str counts and a non-empty size within the
    limits, else None (the slow path then reports what is wrong)."""
    if type(seg) is dict and type(seg.get("counts")) is str and seg["counts"].isascii():
        size = seg.get("size")
        if (
            type(size) is list
            and len(size) == 2
            and type(size[0]) is int
            and type(size[1]) is int
            and 0 < size[0] <= lim.max_mask_side
            and 0 < size[1] <= lim.max_mask_side
            and size[0] * size[1] <= lim.max_mask_pixels
        ):
            return size, seg["counts"].encode("ascii")
    return None


def read_results(
    path: str | Path, sizes: Mapping[Any, tuple[int, int]]
) -> list[tuple[Any, Mask, float, Any]]:
    """COCO results as (image_id, mask at its image's size, score, category_id or None): the
    compressed RLE of all
    records is checked in one batch. On any problem the file is read again by
    :func:`~masklens.core.benchmarks.coco.load_results`, whose error names file, record and field."""
    p = Path(path)
    lim = limits.current()

    def size_of(rec: dict[str, Any]) -> tuple[int, int] | None:
        key = rec.get("image_id")
        return sizes.get(key) if type(key) in (int, str) else None

    def slow() -> list[tuple[Any, Mask, float, Any]]:
        recs = load_results(p, key_fields=("image_id",), size_of=size_of)
        return [(r.keys["image_id"], r.mask, r.score, r.raw.get("category_id")) for r in recs]

    data = read_json(p)
    if isinstance(data, dict) and isinstance(data.get("annotations"), list):
        data = data["annotations"]
    if not isinstance(data, list):
        return slow()
    check_foreign_fields(p, data, ("image_id",))
    out: list[tuple[Any, Mask, float, Any]] = []
    counts_list: list[bytes] = []
    pixels: list[int] = []
    resize = False
    for i, rec in enumerate(data):
        size = size_of(rec) if type(rec) is dict else None
        score = rec.get("score") if size is not None else None
        if not limits.is_finite_number(score):
            return slow()
        seg = rec.get("segmentation")
        fast = _rle_fast(seg, lim)
        if fast is not None:  # its counts are checked below, with all the others at once
            rle_size, counts = fast
            counts_list.append(counts)
            pixels.append(rle_size[0] * rle_size[1])
            out.append((rec["image_id"], Mask({"size": rle_size, "counts": counts}), float(score),
                        rec.get("category_id")))  # fmt: skip
            resize = resize or rle_size[0] != size[0] or rle_size[1] != size[1]
            continue
        where = f"[{i}] (image_id={rec['image_id']!r})"
        mask = (
            Mask.from_coco(seg, size[0], size[1], path=p, record=where) if seg is not None else None
        )
        if mask is None or (mask.shape != tuple(size) and 0 in mask.shape):
            return slow()
        out.append((rec["image_id"], mask, float(score), rec.get("category_id")))
        resize = resize or mask.shape != tuple(size)
    if any(rle_counts_problems(counts_list, pixels)):
        return slow()
    if not resize:
        return out
    result = []
    for key, mask, score, category in out:
        h, w = sizes[key]
        result.append((key, resize_nearest(mask, h, w), score, category))
    return result


@gc_paused()
def load_coco_predictions(
    path: str | Path,
    benchmark: Benchmark,
    *,
    ignorable: Mapping[Any, tuple[int, int]] | None = None,
    extra: Mapping[Any, tuple[str, tuple[int, int]]] | None = None,
) -> PredictionSet:
    """COCO results keyed by ``image_id`` = a prompt's ``source_id``; every prompt gets a
    Prediction (no record = no instance). ``extra`` adds image ids that are no prompt of a
    sample: image id -> (prediction key, (height, width)). Records of ``ignorable`` image ids
    are read and validated, then dropped (counted in ``provenance['ignored_records']``)."""
    p = Path(path)
    sizes: dict[Any, tuple[int, int]] = dict(ignorable or {})
    prompt_of: dict[Any, str] = {}
    preds = PredictionSet(name=p.stem, provenance={"file": str(p)})
    for sample in benchmark.samples:
        for prompt in sample.prompts:
            img = sample.images[prompt.image]
            sizes[prompt.source_id] = (img.height, img.width)
            prompt_of[prompt.source_id] = prompt.id
            preds.by_prompt.setdefault(prompt.id, Prediction(prompt.id, []))
    for key, (pid, size) in (extra or {}).items():
        sizes[key] = size
        prompt_of[key] = pid
        preds.by_prompt.setdefault(pid, Prediction(pid, []))
    ignored = 0
    for key, mask, score, category in read_results(p, sizes):
        pid = prompt_of.get(key)
        if pid is None:
            ignored += 1
            continue
        preds.by_prompt[pid].instances.append(Instance(mask, score, category=category))
    preds.provenance["ignored_records"] = ignored
    return preds


def checked_masks(ds: CocoDataset) -> dict[int, Mask]:
    """Masks of the dataset's compressed-RLE annotations whose counts pass one batch check,
    keyed by ``id(annotation)``; the others are left to :meth:`CocoDataset.mask_of` (which
    raises the error naming the record)."""
    picked = []
    lim = limits.current()
    for anns in ds.annotations.values():
        for ann in anns:
            fast = _rle_fast(ann.get("segmentation"), lim)
            if fast is not None:
                picked.append((ann, *fast))
    problems = rle_counts_problems([c for _, _, c in picked], [s[0] * s[1] for _, s, _ in picked])
    return {
        id(ann): Mask({"size": size, "counts": counts})
        for (ann, size, counts), bad in zip(picked, problems, strict=True)
        if bad is None
    }


def write_coco_results(
    benchmark: Benchmark, predictions: PredictionSet, out: Path, default_name: str
) -> list[Path]:
    """Write predictions as COCO results keyed by ``image_id`` (:func:`coco.write_results`): to
    ``out``, or to ``out/default_name`` when ``out`` is an existing folder."""
    return write_results(benchmark, predictions, out, lambda s, pr: {"image_id": pr.source_id}, default_name)


def instances_of(
    prediction: Prediction | None, height: int, width: int
) -> tuple[list[Mask], tuple[float, ...]]:
    """Masks (resized to the ground truth's size, nearest) and scores of a prediction."""
    if prediction is None or not prediction.instances:
        return [], ()
    insts = prediction.instances
    masks = [i.mask for i in insts]
    for k, m in enumerate(masks):
        size = m.rle["size"]
        if size[0] != height or size[1] != width:
            masks[k] = resize_nearest(m, height, width)
    return masks, tuple([float(i.score) for i in insts])


def non_crowd(gt: GroundTruth) -> list[Mask]:
    return [m for i, m in enumerate(gt.masks) if not (gt.crowd and gt.crowd[i])]


def non_crowd_categories(gt: GroundTruth) -> list[Any]:
    """``category_id`` of each :func:`non_crowd` instance (None where unknown)."""
    cats = gt.meta.get("category_ids") or [None] * len(gt.masks)
    return [c for i, c in enumerate(cats) if not (gt.crowd and gt.crowd[i])]


def categories_of(prediction: Prediction | None) -> list[Any]:
    """``category_id`` of each predicted instance (None for instances without one)."""
    return [i.category for i in prediction.instances] if prediction is not None else []

"""COCO-style I/O shared by the CAFE and SA-Co/Gold kinds: image entries, their ground truth,
COCO results read with one batch RLE check, and written back atomically."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.errors import DataFormatError, MasklensError
from masklens.core.files import limits
from masklens.core.files.io import read_json
from masklens.core.files.paths import RootGuard, inside_root
from masklens.core.files.rle_validation import rle_counts_problems
from masklens.core.kinds.common.coco import CocoDataset, CocoImage, load_results, write_results
from masklens.core.masks import Mask, resize_nearest
from masklens.core.runtime.gc_pause import gc_paused
from masklens.core.schema import Benchmark, GroundTruth, Instance, Prediction, PredictionSet
from masklens.core.scoring.prediction_check import SAMPLE_RECORDS, check_foreign_fields


def add_images_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--images", metavar="DIR", help="folder of the image files (for the GUI and predict)"
    )


def image_path(images: str | os.PathLike[str] | None, img: CocoImage, ann: Path | None = None,
               guard: RootGuard | None = None) -> Path | None:
    """``--images`` DIR / ``file_name``; a name leaving DIR is refused (masklens.core.files.paths).
    ``guard``: this load's :class:`~masklens.core.files.paths.RootGuard` of DIR (entries share
    images: SA-Co/Gold has about eleven noun phrases per image)."""
    if images is None or not img.file_name:
        return None
    record = f"image id {img.id}"
    if guard is not None:
        return guard.inside(img.file_name, path=ann, record=record, field="file_name", what="image path")
    return inside_root(images, img.file_name, path=ann, record=record, field="file_name", what="image path")


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
    ds: CocoDataset, img: CocoImage, key: str, label: str | None, cache: dict[Any, list[Mask | None]]
) -> GroundTruth:
    """All annotations of an image entry (crowd flags kept) at the entry's size. ``cache``
    (:func:`checked_masks`) holds, per image id, the masks already built, in annotation order;
    a gap is filled by :meth:`CocoDataset.mask_of` (which names a faulty record)."""
    h, w = img.height, img.width
    anns = ds.annotations.get(img.id, ())
    n = len(anns)  # lists of exactly n items (appending would over-allocate: 100k entries hold 900k)
    masks: list[Mask] = [None] * n  # type: ignore[list-item]
    crowd: list[bool] = [False] * n
    categories: list[Any] = [None] * n
    built = cache.get(img.id)
    for i, ann in enumerate(anns):
        flag = ann.get("iscrowd", 0)
        if not (isinstance(flag, bool) or flag in (0, 1)):
            raise DataFormatError(f"expected 0 or 1, got {flag!r}", path=ds.path,
                                  record=f"annotation id {ann.get('id', '?')}", field="iscrowd")  # fmt: skip
        m = built[i] if built is not None else None
        if m is None:
            m = ds.mask_of(ann)
            if built is not None:
                built[i] = m
        if m.height != h or m.width != w:
            raise DataFormatError(
                f"mask size {m.height}x{m.width} differs from its image's {h}x{w}",
                path=ds.path,
                record=f"annotation id {ann.get('id', '?')}",
                field="segmentation",
            )
        masks[i] = m
        crowd[i] = bool(flag)
        categories[i] = ann.get("category_id")
    return GroundTruth(
        key, masks, h, w, label=label, crowd=crowd,
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


def _compressed_rles(
    segs: list[Any], lim: limits.Limits
) -> tuple[list[int], list[list[int]], list[bytes], list[int]]:
    """(positions, sizes, counts, pixels) of the ``segs`` that are compressed RLE with ASCII
    ``str`` counts and a non-empty size within the limits — exactly what :meth:`Mask.from_coco`
    builds as ``{"size": [h, w], "counts": counts}`` once the counts pass the check; the others
    are left to it (it reports what is wrong). Equal sizes share one ``[h, w]`` list."""
    side, most = lim.max_mask_side, lim.max_mask_pixels
    shared: dict[tuple[int, int], list[int]] = {}
    picked: list[int] = []
    sizes: list[list[int]] = []
    counts: list[bytes] = []
    pixels: list[int] = []
    for i, seg in enumerate(segs):
        if type(seg) is not dict:
            continue
        c, size = seg.get("counts"), seg.get("size")
        if type(c) is not str or type(size) is not list or len(size) != 2 or not c.isascii():
            continue
        h, w = size
        if type(h) is not int or type(w) is not int or not (0 < h <= side and 0 < w <= side) \
                or h * w > most:  # fmt: skip
            continue
        hw = shared.get((h, w))
        if hw is None:
            hw = shared[(h, w)] = [h, w]
        picked.append(i)
        sizes.append(hw)
        counts.append(c.encode("ascii"))
        pixels.append(h * w)
    return picked, sizes, counts, pixels


def read_results(
    path: str | Path, sizes: Mapping[Any, tuple[int, int]], *, digest: ResultsDigest | None = None
) -> list[tuple[Any, Mask, float, Any]]:
    """COCO results as (image_id, mask at its image's size, score, category_id or None): the
    file's :func:`results_digest` (every record's RLE checked in one batch) bound to the image
    sizes. On any problem the file is read again by
    :func:`~masklens.core.kinds.common.coco.load_results` (so the result, or the error naming
    file, record and field, is always the plain reading's).

    ``digest``: the same file's digest, read beforehand (in a worker process, while the
    benchmark loaded); without it the digest is read here."""
    p = Path(path)

    def size_of(rec: dict[str, Any]) -> tuple[int, int] | None:
        key = rec.get("image_id")
        return sizes.get(key) if type(key) in (int, str) else None

    def slow() -> list[tuple[Any, Mask, float, Any]]:
        recs = load_results(p, key_fields=("image_id",), size_of=size_of)
        return [(r.keys["image_id"], r.mask, r.score, r.raw.get("category_id")) for r in recs]

    if digest is None:
        digest = results_digest(p)
    if digest is None:
        return slow()
    check_foreign_fields(p, [dict.fromkeys(names) for names in digest.head_fields], ("image_id",))
    bound = _bind(digest, sizes)
    if bound is None:
        return slow()
    out, resize = bound
    if not resize:
        return out
    result = []
    for key, mask, score, category in out:
        h, w = sizes[key]
        result.append((key, resize_nearest(mask, h, w), score, category))
    return result


@dataclass(eq=False)
class ResultsDigest:
    """A COCO results file that :func:`read_results` reads without a problem whatever the
    benchmark, as :func:`results_digest` hands it back: per record (file order) its image id,
    score, category id (None where absent) and RLE size, and its RLE counts (``lengths`` bytes
    each, one after another in ``counts``); the field names of its first records, which
    :func:`~masklens.core.scoring.prediction_check.check_foreign_fields` looks at."""

    path: Path
    head_fields: list[list[str]]
    ids: list[Any]
    scores: np.ndarray
    categories: list[Any]
    heights: np.ndarray
    widths: np.ndarray
    counts: bytes
    lengths: np.ndarray


@gc_paused()
def results_digest(path: str | os.PathLike[str]) -> ResultsDigest | None:
    """The file as :func:`read_results` reads it before it looks at an image's size: a digest
    when every record is an ``image_id`` (an integer or a string), a finite score and
    compressed RLE with a size within the limits, and the batch check finds no problem in any
    counts; None otherwise (:func:`read_results` then reads the file the plain way, which
    says what is wrong). Each record is dropped from the parsed file once read, so the parsed
    text and the counts are not all held at once."""
    p = Path(path)
    lim = limits.current()
    side, most = lim.max_mask_side, lim.max_mask_pixels
    try:
        data = read_json(p)
        if isinstance(data, dict) and isinstance(data.get("annotations"), list):
            data = data["annotations"]
    except MasklensError:
        return None
    if not isinstance(data, list):
        return None
    n = len(data)
    head_fields = [list(rec) for rec in data[:SAMPLE_RECORDS] if type(rec) is dict]
    ids: list[Any] = [None] * n
    scores: list[float] = [0.0] * n
    categories: list[Any] = [None] * n
    heights: list[int] = [0] * n
    widths: list[int] = [0] * n
    counts: list[bytes] = [b""] * n
    for i, rec in enumerate(data):
        if type(rec) is not dict:
            return None
        key = rec.get("image_id")
        if type(key) is not int and type(key) is not str:
            return None
        score = rec.get("score")
        if not (type(score) is float and -_INF < score < _INF) and not limits.is_finite_number(score):
            return None
        seg = rec.get("segmentation")
        if type(seg) is not dict:
            return None
        c, rle_size = seg.get("counts"), seg.get("size")
        if not (type(c) is str and type(rle_size) is list and len(rle_size) == 2 and c.isascii()):
            return None
        h, w = rle_size
        if not (type(h) is int and type(w) is int and 0 < h <= side and 0 < w <= side and h * w <= most):
            return None
        ids[i], scores[i], categories[i] = key, float(score), rec.get("category_id")
        heights[i], widths[i], counts[i] = h, w, c.encode("ascii")
        data[i] = None
    hs, ws = np.array(heights, dtype=np.int64), np.array(widths, dtype=np.int64)
    if any(rle_counts_problems(counts, (hs * ws).tolist())):
        return None
    lengths = np.fromiter(map(len, counts), dtype=np.int64, count=n)
    return ResultsDigest(p, head_fields, ids, np.array(scores, dtype=np.float64), categories, hs, ws, b"".join(counts), lengths)


def _bind(
    digest: ResultsDigest, sizes: Mapping[Any, tuple[int, int]]
) -> tuple[list[tuple[Any, Mask, float, Any]], bool] | None:
    """(the records with their masks at the RLE's size, whether any image's size differs) of a
    digest; None when a record's image id has no size."""
    ids, counts = digest.ids, digest.counts
    out: list[tuple[Any, Mask, float, Any]] = [None] * len(ids)  # type: ignore[list-item]
    shared: dict[tuple[int, int], list[int]] = {}
    resize = False
    start = 0
    for i, (key, score, category, h, w, end) in enumerate(zip(
            ids, digest.scores.tolist(), digest.categories, digest.heights.tolist(), digest.widths.tolist(),
            np.cumsum(digest.lengths).tolist(), strict=True)):  # fmt: skip
        size = sizes.get(key)
        if size is None:
            return None
        hw = shared.get((h, w))
        if hw is None:
            hw = shared[(h, w)] = [h, w]
        out[i] = (key, Mask({"size": hw, "counts": counts[start:end]}), score, category)
        resize = resize or h != size[0] or w != size[1]
        start = end
    return out, resize


_INF = float("inf")


@gc_paused()
def load_coco_predictions(
    path: str | os.PathLike[str],
    benchmark: Benchmark,
    *,
    ignorable: Mapping[Any, tuple[int, int]] | None = None,
    extra: Mapping[Any, tuple[str, tuple[int, int]]] | None = None,
    digest: ResultsDigest | None = None,
) -> PredictionSet:
    """COCO results keyed by ``image_id`` = a prompt's ``source_id``; every prompt gets a
    Prediction (no record = no instance). ``extra`` adds image ids that are no prompt of a
    sample: image id -> (prediction key, (height, width)). Records of ``ignorable`` image ids
    are read and validated, then dropped (counted in ``provenance['ignored_records']``).
    ``digest``: the file's :func:`results_digest`, read ahead (:func:`read_results`)."""
    p = Path(path)
    sizes: dict[Any, tuple[int, int]] = dict(ignorable or {})
    prompt_of: dict[Any, str] = {}
    preds = PredictionSet(name=p.stem, provenance={"file": str(p)})
    by_prompt = preds.by_prompt
    for sample in benchmark.samples:
        for prompt in sample.prompts:
            img = sample.images[prompt.image]
            sizes[prompt.source_id] = (img.height, img.width)
            prompt_of[prompt.source_id] = pid = prompt.id
            if pid not in by_prompt:
                by_prompt[pid] = Prediction(pid, [])
    for key, (pid, size) in (extra or {}).items():
        sizes[key] = size
        prompt_of[key] = pid
        preds.by_prompt.setdefault(pid, Prediction(pid, []))
    instances_of_key = {key: preds.by_prompt[pid].instances for key, pid in prompt_of.items()}
    ignored = 0
    for key, mask, score, category in read_results(p, sizes, digest=digest):
        instances = instances_of_key.get(key)
        if instances is None:
            ignored += 1
            continue
        instances.append(Instance(mask, score, None, category))
    preds.provenance["ignored_records"] = ignored
    return preds


def checked_masks(ds: CocoDataset) -> dict[Any, list[Mask | None]]:
    """Per image id, the masks of its annotations (in ``ds.annotations`` order) whose
    compressed RLE passes one batch check; None where the annotation is left to
    :meth:`CocoDataset.mask_of` (which raises the error naming the record). The parsed
    ``segmentation`` of each mask built is dropped from its annotation (the loaders read
    ``ds`` only through :func:`entry_gt`), so the text is not held twice."""
    flat = [ann for anns in ds.annotations.values() for ann in anns]
    picked, sizes, counts, pixels = _compressed_rles([a.get("segmentation") for a in flat], limits.current())
    masks: list[Mask | None] = [None] * len(flat)
    for i, size, c, problem in zip(picked, sizes, counts, rle_counts_problems(counts, pixels), strict=True):
        if problem is None:
            masks[i] = Mask({"size": size, "counts": c})
            del flat[i]["segmentation"]
    out: dict[Any, list[Mask | None]] = {}
    start = 0
    for img_id, anns in ds.annotations.items():
        out[img_id] = masks[start : start + len(anns)]
        start += len(anns)
    return out


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

"""COCO-style JSON shared by the CAFE, SA-Co/Gold, CGEBench and R2SM loaders.

Validates as it indexes, so a malformed file fails with one message naming the
file, the record and the field.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masklens.core.errors import DataFormatError, Where
from masklens.core.files.io import atomic_write_json, read_json
from masklens.core.files.limits import check_mask_size, exists, is_finite_number
from masklens.core.files.paths import inside_root, short_name
from masklens.core.masks import Mask
from masklens.core.schema import Benchmark, Instance, Prediction, PredictionSet, Prompt, Sample
from masklens.core.scoring.prediction_check import check_foreign_fields, unmatched_message


@dataclass
class CocoImage:
    id: int | str
    file_name: str | None
    height: int
    width: int
    raw: dict[str, Any]


@dataclass
class CocoDataset:
    """A validated COCO annotation file: images by id, annotations grouped by image id."""

    path: Path
    images: dict[int | str, CocoImage]
    annotations: dict[int | str, list[dict[str, Any]]] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """What the file calls itself: COCO's ``info.description``, else its folder and name
        (``cafe/ann.json``: a file stem alone, "ann", says little)."""
        info = self.raw.get("info")
        described = info.get("description") if isinstance(info, dict) else None
        if isinstance(described, str) and described.strip():
            return described.strip()
        return short_name(self.path)

    def mask_of(self, ann: dict[str, Any], key: str = "segmentation") -> Mask:
        """Decode an annotation's mask field (RLE or polygons) at its image's size."""
        img = self.images[ann["image_id"]]
        return Mask.from_coco(
            ann.get(key),
            img.height,
            img.width,
            path=self.path,
            record=f"annotation id {ann.get('id', '?')}",
            field=key,
        )

    def image_mask(self, ann: dict[str, Any], key: str = "segmentation") -> Mask:
        """:meth:`mask_of`, and a DataFormatError when the mask is not its image's size."""
        mask = self.mask_of(ann, key)
        img = self.images[ann["image_id"]]
        if mask.shape != (img.height, img.width):
            raise DataFormatError(
                f"mask size {mask.height}x{mask.width} differs from the image size {img.height}x{img.width}",
                path=self.path, record=f"annotation id {ann.get('id', '?')} (image_id={ann['image_id']!r})",
                field=key)
        return mask


def _require(obj: dict[str, Any], key: str, types: type | tuple[type, ...], *, path: Path, record: str) -> Any:
    if key not in obj:
        raise DataFormatError("missing field", path=path, record=record, field=key)
    value = obj[key]
    if not isinstance(value, types) or isinstance(value, bool):
        raise DataFormatError(
            f"expected {' or '.join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))}, "
            f"got {type(value).__name__}",
            path=path,
            record=record,
            field=key,
        )
    return value


def load_coco(path: str | os.PathLike[str]) -> CocoDataset:
    """Read and index a COCO annotation file (``images`` required, ``annotations`` optional)."""
    p = Path(path)
    data = read_json(p)
    if not isinstance(data, dict):
        raise DataFormatError("expected a JSON object with 'images' and 'annotations'", path=p)
    images_raw = data.get("images")
    if not isinstance(images_raw, list):
        raise DataFormatError("missing or non-list field", path=p, field="images")
    images: dict[int | str, CocoImage] = {}
    for i, img in enumerate(images_raw):
        if type(img) is dict:  # the common, well-formed record: no per-field calls
            img_id, h, w, fn = img.get("id"), img.get("height"), img.get("width"), img.get("file_name")
            if (type(img_id) is int or type(img_id) is str) and type(h) is int and type(w) is int \
                    and (fn is None or type(fn) is str) and img_id not in images:  # fmt: skip
                images[img_id] = CocoImage(img_id, fn, h, w, img)
                continue
        rec = f"images[{i}]"
        if not isinstance(img, dict):
            raise DataFormatError("expected an object", path=p, record=rec)
        img_id = _require(img, "id", (int, str), path=p, record=rec)
        rec = f"image id {img_id}"
        h = _require(img, "height", int, path=p, record=rec)
        w = _require(img, "width", int, path=p, record=rec)
        check_mask_size(h, w, path=p, record=rec, field="height, width", what="image")
        if img_id in images:
            raise DataFormatError("duplicate image id", path=p, record=rec, field="id")
        if not isinstance(img.get("file_name"), (str, type(None))):
            raise DataFormatError(f"expected a file name (string), got {img['file_name']!r:.40}", path=p,
                                  record=rec, field="file_name")
        images[img_id] = CocoImage(img_id, img.get("file_name"), h, w, img)
    anns: dict[int | str, list[dict[str, Any]]] = defaultdict(list)
    anns_raw = data.get("annotations", [])
    if not isinstance(anns_raw, list):
        raise DataFormatError("expected a list", path=p, field="annotations")
    for i, ann in enumerate(anns_raw):
        if type(ann) is dict:
            img_id = ann.get("image_id")
            if (type(img_id) is int or type(img_id) is str) and img_id in images:
                anns[img_id].append(ann)
                continue
        rec = f"annotations[{i}]"
        if not isinstance(ann, dict):
            raise DataFormatError("expected an object", path=p, record=rec)
        img_id = _require(ann, "image_id", (int, str), path=p, record=rec)
        if img_id not in images:
            raise DataFormatError(
                f"image_id {img_id!r} points to no image", path=p, record=rec, field="image_id"
            )
        anns[img_id].append(ann)
    return CocoDataset(p, images, dict(anns), data)


@dataclass
class ResultRecord:
    """One COCO-results record: the keys it was filed under, its mask and score."""

    index: int
    keys: dict[str, Any]
    mask: Mask
    score: float
    raw: dict[str, Any]


def load_results(
    path: str | Path,
    *,
    key_fields: Iterable[str] = ("image_id",),
    size_of: Callable[[dict[str, Any]], tuple[int, int] | None],
    score_required: bool = True,
) -> list[ResultRecord]:
    """Read COCO results ``[{image_id, segmentation, score, …}]``.

    ``size_of(record)`` returns the ground-truth (height, width) the record refers
    to, or None when its keys point nowhere (an error naming the record).
    Predictions of another size are resized with nearest neighbour.
    """
    p = Path(path)
    data = read_json(p)
    if isinstance(data, dict) and isinstance(data.get("annotations"), list):
        data = data["annotations"]  # tolerate {"annotations": [...]} wrappers
    if not isinstance(data, list):
        raise DataFormatError("expected a JSON list of result records", path=p)
    keys = tuple(key_fields)
    check_foreign_fields(p, data, keys)
    out: list[ResultRecord] = []
    for i, rec in enumerate(data):
        where = f"[{i}]"
        if not isinstance(rec, dict):
            raise DataFormatError("expected an object", path=p, record=where)
        found = {}
        for k in keys:
            if k not in rec:
                raise DataFormatError("missing field", path=p, record=where, field=k)
            if type(rec[k]) not in (int, str):  # true or 1.0 would find the id 1 in a dict
                raise DataFormatError(f"expected an integer or string id, got {rec[k]!r:.40}", path=p,
                                      record=where, field=k)
            found[k] = rec[k]
        where = f"[{i}] ({', '.join(f'{k}={v!r}' for k, v in found.items())})"
        size = size_of(rec)
        if size is None:
            raise DataFormatError(
                "points to no image or prompt of the benchmark", path=p, record=where, field=keys[0],
                hint=unmatched_message(data, lambda r: all(k in r for k in keys) and size_of(r) is not None),
            )
        score = rec.get("score")
        if score is None and not score_required:
            score = 1.0
        if not is_finite_number(score):
            raise DataFormatError(f"score must be a finite number, got {score!r}", path=p, record=where, field="score")
        seg = rec.get("segmentation")
        if seg is None:
            raise DataFormatError("missing field", path=p, record=where, field="segmentation")
        mask = Mask.from_coco(seg, size[0], size[1], path=p, record=where)
        if mask.shape != tuple(size):
            if mask.height == 0 or mask.width == 0:
                raise DataFormatError(
                    f"mask of size {mask.height}x{mask.width} cannot be resized to the image's "
                    f"{size[0]}x{size[1]}",
                    path=p,
                    record=where,
                    field="segmentation",
                )
            mask = mask.resized(size[0], size[1])
        out.append(ResultRecord(i, found, mask, float(score), rec))
    return out


def collect_predictions(
    path: str | Path,
    records: Iterable[ResultRecord],
    prompt_ids: Iterable[str],
    prompt_of: Callable[[dict[str, Any]], str],
) -> PredictionSet:
    """The prediction set of ``records`` (read from ``path``): an empty Prediction for every id in
    ``prompt_ids``, then each record's instance appended under ``prompt_of(record.keys)``."""
    p = Path(path)
    out = PredictionSet(name=p.stem, provenance={"file": str(p)})
    for pid in prompt_ids:
        out.add(Prediction(pid, []))
    for r in records:
        out.by_prompt[prompt_of(r.keys)].instances.append(
            Instance(r.mask, r.score, category=r.raw.get("category_id"))
        )
    return out


def resolve_image_path(ann_path: Path, images_dir: str | os.PathLike[str] | None, file_name: Any,
                       *, record: str | None = None) -> Path | None:
    """Where an image file would be: ``--images`` DIR, else ``images/`` or the folder beside the
    JSON; a ``file_name`` leaving that folder is refused (:func:`masklens.core.files.paths.inside_root`)."""
    if not isinstance(file_name, str) or not file_name:
        return None
    where: Where = {"path": ann_path, "record": record, "field": "file_name"}
    if images_dir is not None:
        return inside_root(images_dir, file_name, what="image path", **where)
    for base in (ann_path.parent / "images", ann_path.parent):
        candidate = inside_root(base, file_name, what="image path", **where)
        if exists(candidate):
            return candidate
    return None


def results_target(out: str | Path, default_name: str = "pred.json") -> Path:
    """Where a prediction writer writes: ``out`` itself, or ``out/default_name`` when ``out`` is
    an existing folder (so ``predict --out X`` then ``score --pred X`` always agree)."""
    p = Path(out)
    return p / default_name if p.is_dir() else p


def write_results(
    benchmark: Benchmark,
    predictions: PredictionSet,
    out: str | Path,
    keys_of: Callable[[Sample, Prompt], dict[str, Any]],
    default_name: str = "pred.json",
) -> list[Path]:
    """Write every prompt's instances as COCO results ``{**keys_of(sample, prompt), category_id: 1,
    segmentation, score}`` (atomically) to :func:`results_target`; returns the file written. A
    prompt shared by several samples (a CAFE positive in two pairs) is written once."""
    records = []
    seen: set[str] = set()
    for sample in benchmark.samples:
        for prompt in sample.prompts:
            if prompt.id in seen:
                continue
            seen.add(prompt.id)
            pred = predictions.get(prompt.id)
            for inst in pred.instances if pred else []:
                cat = 1 if inst.category is None else inst.category
                records.append({**keys_of(sample, prompt), "category_id": cat,
                                "segmentation": inst.mask.to_coco(), "score": float(inst.score)})
    target = results_target(out, default_name)
    atomic_write_json(target, records, indent=None)
    return [target]

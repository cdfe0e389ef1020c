"""COCO JSON out of a benchmark and its prediction sets.

``ground_truth.json`` is a COCO dataset: one ``images[]`` entry per image, one category per
distinct prompt text, one annotation per ground-truth instance a prompt should find (a negative
prompt has none). ``predictions/<label>.json`` are COCO results files (what
``pycocotools.coco.COCO.loadRes`` reads) with one record per predicted instance. Every record
carries ``sample_id``, ``prompt_id``, ``role``, the sample's group (named as the kind names it,
:attr:`~masklens.core.scoring.contract.BenchmarkKind.group_name`: ``group``, CAFE ``edit_type``;
on the images too), the reviewers' ``verdicts`` and its outcome at
(t, τ) (:mod:`~masklens.core.interop.outcomes`): ``eval`` (tp/fp/below_t), ``eval_iou``,
``eval_gt_id`` and ``aligned`` on predictions; ``eval_<label>`` (tp/fn) and ``eval_<label>_iou``
on ground truth, per prediction set. A benchmark with several annotators (SA-Co/Gold) also gets
``annotators/<key>.json`` per further annotator (same images and categories; each annotation
names its ``annotator``) and, on predictions, ``eval_<key>``/``eval_<key>_iou`` against each.
See docs/interop.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from masklens.core.files.io import atomic_write_json
from masklens.core.interop.outcomes import gt_masks
from masklens.core.interop.table import ExportTable, ImageEntry
from masklens.core.masks import Mask
from masklens.core.schema import Prompt, Sample


def prompt_fields(table: ExportTable, sample: Sample, prompt: Prompt) -> dict[str, Any]:
    """The prompt's own fields, on every annotation and result record."""
    out: dict[str, Any] = {"sample_id": sample.id, "prompt_id": prompt.id, "prompt": prompt.text,
                           "role": prompt.role.value, table.kind.group_name: sample.group or ""}
    if prompt.level is not None:
        out["level"] = prompt.level
    out["verdicts"] = table.verdicts_of(sample.id, prompt.id)
    return out


def _segment(mask: Mask, height: int, width: int, *, bbox: bool = True) -> dict[str, Any]:
    """``segmentation`` (RLE), ``area`` (the mask's) and, unless ``bbox`` is False, ``bbox``."""
    if mask.shape != (height, width):
        mask = mask.resized(height, width)
    out = {"segmentation": mask.to_coco(), "area": int(mask.area)}
    if bbox:
        out["bbox"] = list(mask.bbox)
    return out


def _absolute(path: str | Path) -> Path:
    """``path`` made absolute without following links: an image of a Hugging Face cache keeps
    its name in the snapshot, not the hash of the blob its link points to."""
    return Path(os.path.abspath(path))


def file_name(entry: ImageEntry, root: Path | None) -> str:
    """The image's path relative to ``root`` (the images' common folder), else a stand-in name."""
    if entry.ref.path is None:
        return f"{entry.sample_id}_{entry.ref.key}.png"
    path = _absolute(entry.ref.path)
    return path.relative_to(root).as_posix() if root is not None else path.name


def image_root(table: ExportTable) -> Path | None:
    """The deepest folder holding every image of the benchmark (None without image paths)."""
    paths = [str(_absolute(e.ref.path).parent) for e in table.images if e.ref.path is not None]
    return Path(os.path.commonpath(paths)) if paths else None


@dataclass(frozen=True)
class CocoLayout:
    """How the prompts become COCO images and categories."""

    #: the COCO images, in id order
    images: list[ImageEntry]
    #: prompt id -> its COCO image
    entry_of: dict[str, ImageEntry]
    categories: list[dict[str, Any]]
    #: prompt id -> its category id
    category_of: dict[str, int]
    #: COCO image id -> the prompt it is (one image per prompt only)
    prompt_of: dict[int, str]


def coco_layout(table: ExportTable, *, per_prompt: bool = True) -> CocoLayout:
    """One COCO image per image and one category per prompt text; or, for a kind whose AP
    evaluates each prompt apart (:meth:`~masklens.core.scoring.contract.BenchmarkKind.coco_units`,
    R2SM's queries) and ``per_prompt``, one image per prompt in the kind's order and one category,
    so that plain ``COCOeval`` evaluates what the kind's AP evaluates."""
    units = table.kind.coco_units(table.prompts) if per_prompt else None
    if units is None:
        return CocoLayout(
            table.images, {p.id: table.image_of[(s.id, p.image)] for s, p in table.prompts},
            [{"id": cid, "name": text, "supercategory": "prompt"} for text, cid in table.category_of.items()],
            {p.id: table.category_of[p.text] for _, p in table.prompts}, {})
    entries = {p.id: ImageEntry(n, table.image_of[(s.id, p.image)].ref, s.id)
               for n, (s, p) in enumerate(units, start=1)}
    return CocoLayout(list(entries.values()), entries,
                      [{"id": 1, "name": "object", "supercategory": "prompt"}],
                      dict.fromkeys(entries, 1), {e.id: pid for pid, e in entries.items()})


def info(table: ExportTable) -> dict[str, Any]:
    from masklens.core import __version__

    root = image_root(table)
    return {
        "description": f"{table.kind.title or table.kind.name} ({table.benchmark.name}) exported by masklens",
        "version": __version__,
        "date_created": datetime.now(UTC).isoformat(timespec="seconds"),
        "masklens": {
            "kind": table.kind.name,
            "benchmark": table.benchmark.name,
            "sources": {k: str(v) for k, v in table.benchmark.sources.items()},
            "image_root": str(root) if root is not None else None,
            "params": table.params,
            "score_threshold": table.t,
            "iou_threshold": table.tau,
            "prediction_sets": [run.label for run in table.runs],
            "annotators": {k: str(table.benchmark.sources.get(k, "")) for k in table.annotators},
        },
    }


def ground_truth(table: ExportTable, names: dict[int, str] | None = None,
                 annotator: str | None = None,
                 placeholders: frozenset[int] = frozenset(),
                 layout: CocoLayout | None = None) -> dict[str, Any]:
    """The COCO dataset dict of the prompts' own ground truth, or of ``annotator``'s (a key of
    ``table.annotators``). ``names`` overrides images' ``file_name`` by image id; the images
    whose ids are in ``placeholders`` get ``placeholder: true``."""
    layout = layout or coco_layout(table)
    root = image_root(table)
    images = [
        {"id": e.id, "file_name": (names or {}).get(e.id) or file_name(e, root),
         "height": e.ref.height, "width": e.ref.width, "sample_id": e.sample_id,
         "image_key": e.ref.key,
         table.kind.group_name: table.benchmark.sample(e.sample_id).group or "",
         "verdicts": table.verdicts_of(e.sample_id),
         **({"prompt_id": layout.prompt_of[e.id]} if e.id in layout.prompt_of else {}),
         **({"placeholder": True} if e.id in placeholders else {})}
        for e in layout.images
    ]
    annotations: list[dict[str, Any]] = []
    for sample, prompt in table.prompts_of(annotator):
        entry = layout.entry_of[prompt.id]
        masks, crowd = gt_masks(sample, prompt)
        for i, mask in enumerate(masks):
            ann = {"id": len(annotations) + 1, "image_id": entry.id,
                   "category_id": layout.category_of[prompt.id], "iscrowd": int(crowd[i]),
                   **_segment(mask, entry.ref.height, entry.ref.width),
                   **prompt_fields(table, sample, prompt)}
            if table.annotators:
                ann["annotator"] = prompt.gt
            for run in table.runs:
                outcome = table.outcomes_of(run, annotator)[prompt.id].gts[i]
                ann[f"eval_{run.attr}"] = outcome.eval or "crowd"
                ann[f"eval_{run.attr}_iou"] = outcome.iou
            annotations.append(ann)
    return {"info": info(table), "images": images, "categories": layout.categories,
            "annotations": annotations}


def results(table: ExportTable, run_index: int, *, bbox: bool = False,
            layout: CocoLayout | None = None) -> list[dict[str, Any]]:
    """One prediction set as a COCO results list (``image_id``, ``category_id``,
    ``segmentation``, ``score`` and the attributes above).

    Without ``bbox`` (the default) the records carry no ``bbox``, as detectron2 writes segm
    results: ``COCO.loadRes`` sets ``area`` from the box of any results list whose first record
    has one, which puts instances in the wrong small/medium/large range; without it, loadRes
    takes the mask's area and derives the box. FiftyOne's importer needs the box (``bbox=True``).
    """
    layout = layout or coco_layout(table)
    run = table.runs[run_index]
    gt_ids = _gt_annotation_ids(table)
    others = {key: _gt_annotation_ids(table, key) for key in table.annotators[1:]}
    records = []
    for sample, prompt in table.prompts:
        pred = run.predictions.get(prompt.id)
        if pred is None:
            continue
        entry = layout.entry_of[prompt.id]
        outcomes = run.outcomes[prompt.id].predictions
        for k, (inst, outcome) in enumerate(zip(pred.instances, outcomes, strict=True)):
            gt_id = gt_ids[prompt.id][outcome.gt_index] if outcome.gt_index is not None else None
            records.append({
                "image_id": entry.id, "category_id": layout.category_of[prompt.id],
                **_segment(inst.mask, entry.ref.height, entry.ref.width, bbox=bbox),
                "score": float(inst.score),
                "eval": outcome.eval, "eval_iou": outcome.iou, "eval_gt_id": gt_id,
                "aligned": outcome.aligned,
                **_by_annotator(table, run, prompt.id, k, others),
                **prompt_fields(table, sample, prompt),
            })
    return records


def _by_annotator(table: ExportTable, run: Any, prompt_id: str, k: int,
                  ids: dict[str, dict[str, list[int]]]) -> dict[str, Any]:
    """The ``k``-th instance's outcome against each further annotator's ground truth (the
    matched annotation's id in ``annotators/<key>.json``)."""
    out: dict[str, Any] = {}
    for key in table.annotators[1:]:
        o = run.by_annotator[key][prompt_id].predictions[k]
        out[f"eval_{key}"], out[f"eval_{key}_iou"] = o.eval, o.iou
        out[f"eval_{key}_gt_id"] = ids[key][prompt_id][o.gt_index] if o.gt_index is not None else None
    return out


def _gt_annotation_ids(table: ExportTable, annotator: str | None = None) -> dict[str, list[int]]:
    """prompt id -> the annotation ids of its ground-truth instances (as :func:`ground_truth`
    numbers them, for the prompts' own ground truth or ``annotator``'s)."""
    out: dict[str, list[int]] = {}
    next_id = 1
    for sample, prompt in table.prompts_of(annotator):
        n = len(gt_masks(sample, prompt)[0])
        out[prompt.id] = list(range(next_id, next_id + n))
        next_id += n
    return out


def annotator_files(table: ExportTable, out: Path, names: dict[int, str] | None = None,
                    placeholders: frozenset[int] = frozenset(),
                    layout: CocoLayout | None = None) -> list[Path]:
    """``out/annotators/<key>.json``: each further annotator's ground truth as a COCO dataset."""
    written = []
    for key in table.annotators[1:]:
        path = out / ANNOTATORS_DIR / f"{key}.json"
        atomic_write_json(path, ground_truth(table, names, key, placeholders, layout), indent=None)
        written.append(path)
    return written


#: the folder of the further annotators' ground-truth files
ANNOTATORS_DIR = "annotators"


def write_coco(table: ExportTable, out: Path) -> list[Path]:
    """``out/ground_truth.json``, ``out/predictions/<label>.json`` and, with several
    annotators, ``out/annotators/<key>.json`` (``out`` is a fresh folder; the caller replaces
    the target atomically)."""
    layout = coco_layout(table)
    written = [out / "ground_truth.json"]
    atomic_write_json(written[0], ground_truth(table, layout=layout), indent=None)
    for i, run in enumerate(table.runs):
        path = out / "predictions" / f"{run.attr}.json"
        atomic_write_json(path, results(table, i, layout=layout), indent=None)
        written.append(path)
    return written + annotator_files(table, out, layout=layout)

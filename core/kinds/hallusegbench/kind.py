"""HalluSegBench: ``data.json`` (current and older field schema), PNG masks, four prediction folders.

One :class:`Sample` per item, with images ``factual`` (I) / ``counterfactual`` (I'),
ground truths ``factual`` (M_c) / ``counterfactual`` (M'_c') and four prompts, one
per official prediction folder (see :mod:`masklens.core.kinds.hallusegbench.metrics`).
Predictions are PNGs ``DIR/{folder}/{factual image stem}_{ann_id}_mask.png``; every mask PNG
(ground truth too) is read as the official scripts read it, ``cv2.imread(path, 0) > 0``;
a missing PNG is recorded in ``PredictionSet.missing`` and skipped by the metrics
that need it. Predictions of another size are resized to their ground truth with
``cv2.INTER_NEAREST`` as the official scripts do.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np

from masklens.core.errors import DataFormatError
from masklens.core.files.io import atomic_write_bytes, read_json
from masklens.core.files.limits import exists
from masklens.core.files.paths import inside_root, safe_name, short_name
from masklens.core.kinds.hallusegbench import metrics as hallu
from masklens.core.kinds.hallusegbench.leakage import META_KEY as LEAKAGE_KEY
from masklens.core.masks import Mask, intersect_all, resize_nearest_floor, union_all
from masklens.core.schema import (
    Benchmark,
    GroundTruth,
    ImageRef,
    Instance,
    Prediction,
    PredictionSet,
    Prompt,
    Role,
    Sample,
)
from masklens.core.scoring.contract import BenchmarkKind, ParamSpec, PathLike, Value

#: field names per schema: role -> (current name, older name)
FIELDS: Mapping[str, tuple[str, str]] = {
    "factual_image": ("factual_image_path", "image_file"),
    "factual_mask": ("factual_mask_path", "mask_file"),
    "counterfactual_image": ("counterfactual_image_path", "edited_image_path"),
    "counterfactual_mask": ("counterfactual_mask_path", "new_mask_path"),
    "factual_label": ("factual_label", "original_label"),
    "counterfactual_label": ("counterfactual_label", "new_label"),
}
#: folder -> (label key, image key, role)
QUERIES: Mapping[str, tuple[str, str, Role]] = {
    "orgl_orgi": ("factual_label", "factual", Role.POSITIVE),
    "edtl_orgi": ("counterfactual_label", "factual", Role.NEGATIVE),
    "orgl_edti": ("factual_label", "counterfactual", Role.NEGATIVE),
    "edtl_edti": ("counterfactual_label", "counterfactual", Role.POSITIVE),
}


def _field(item: dict[str, Any], role: str, schema: int, *, path: Path, record: str, required: bool = True) -> Any:
    name = FIELDS[role][schema]
    value = item.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise DataFormatError(
            "missing field" if value is None else f"expected a non-empty string, got {value!r}",
            path=path,
            record=record,
            field=name,
        )
    return value


def _label(item: dict[str, Any], role: str, schema: int, *, path: Path, record: str) -> str:
    """The class text; scoring does not need it, so a missing label falls back (other
    schema's name, then ``label`` for c) and finally to an empty string."""
    for name in (FIELDS[role][schema], FIELDS[role][1 - schema], "label" if role == "factual_label" else ""):
        value = item.get(name) if name else None
        if value is not None:
            if not isinstance(value, str):
                raise DataFormatError(f"expected a string, got {value!r}", path=path, record=record, field=name)
            return value
    return ""


def _load_mask(root: Path, rel: str, *, path: Path, record: str, field: str) -> Mask:
    f = inside_root(root, rel, path=path, record=record, field=field, what="mask path")
    try:
        return Mask.from_png(f, grey=True)  # cv2.imread(p, 0) > 0, as the official scripts
    except DataFormatError as exc:
        raise DataFormatError(
            f"{exc.detail}: {f}", path=path, record=record, field=field,
            hint="paths in data.json are relative to --root",
        ) from None


def prediction_stem(factual_image: str, ann_id: Any) -> str:
    """``{factual image basename without extension}_{ann_id}`` (official generate_json.py), with
    path separators and control characters of ``ann_id`` replaced (:func:`safe_name`) so the
    prediction file stays inside its folder."""
    return f"{Path(factual_image).stem}_{safe_name(str(ann_id))}"


def _refuse_collision(stems: dict[str, tuple[int, Any]], stem: str, ann_id: Any, index: int, *,
                      path: Path, record: str) -> None:
    """Two different ``ann_id``s of one factual image whose prediction files would be one file
    (``a/b`` and ``a_b`` after :func:`safe_name`, or ``1`` and ``"1"``) are an error naming
    both: ``predict`` would write that file twice and ``score`` read it for both."""
    first = stems.setdefault(stem, (index, ann_id))
    if first[1] != ann_id or type(first[1]) is not type(ann_id):
        raise DataFormatError(
            f"ann_id {ann_id!r} and ann_id {first[1]!r} (record [{first[0]}]) of the same factual "
            f"image share one prediction file name, {stem}_mask.png",
            path=path, record=record, field="ann_id",
            hint="give every item of an image an ann_id that stays distinct once '/', '\\' and "
                 "control characters become '_'")


def load_hallusegbench(data: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> Benchmark:
    """Read ``data.json`` (either schema) and the ground-truth PNGs under ``root``."""
    p = Path(data)
    base = Path(root) if root is not None else p.parent
    raw = read_json(p)
    if not isinstance(raw, list):
        raise DataFormatError("expected a JSON list of items", path=p)
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    stems: dict[str, tuple[int, Any]] = {}
    for i, item in enumerate(raw):
        record = f"[{i}]"
        if not isinstance(item, dict):
            raise DataFormatError("expected an object", path=p, record=record)
        schema = 0 if "factual_image_path" in item else 1 if "image_file" in item else None
        if schema is None:
            raise DataFormatError(
                "missing field", path=p, record=record, field="factual_image_path",
                hint="items need factual_image_path (or image_file in the older schema)",
            )
        ann_id = item.get("ann_id")
        if not isinstance(ann_id, (int, str)) or isinstance(ann_id, bool) or ann_id == "":
            raise DataFormatError(
                "missing field" if ann_id is None else f"expected an integer or string, got {ann_id!r}",
                path=p, record=record, field="ann_id",
            )
        record = f"[{i}] (ann_id={ann_id!r})"
        f_img = _field(item, "factual_image", schema, path=p, record=record)
        cf_img = _field(item, "counterfactual_image", schema, path=p, record=record, required=False)
        labels = {k: _label(item, k, schema, path=p, record=record) for k in ("factual_label", "counterfactual_label")}
        masks = {
            key: _load_mask(base, _field(item, f"{key}_mask", schema, path=p, record=record),
                            path=p, record=record, field=FIELDS[f"{key}_mask"][schema])
            for key in ("factual", "counterfactual")
        }
        stem = prediction_stem(f_img, ann_id)
        _refuse_collision(stems, stem, ann_id, i, path=p, record=record)
        seen[stem] = seen.get(stem, 0) + 1
        sid = stem if seen[stem] == 1 else f"{stem}#{seen[stem]}"
        image_paths = {
            key: inside_root(base, rel, path=p, record=record, field=FIELDS[f"{key}_image"][schema],
                             what="image path") if rel else None
            for key, rel in (("factual", f_img), ("counterfactual", cf_img))
        }
        images = {
            "factual": ImageRef("factual", image_paths["factual"], *masks["factual"].shape),
            "counterfactual": ImageRef(
                "counterfactual", image_paths["counterfactual"], *masks["counterfactual"].shape
            ),
        }
        gts = {
            key: GroundTruth(key, [m], m.height, m.width, label=labels[f"{key}_label"])
            for key, m in masks.items()
        }
        prompts = [
            Prompt(
                id=f"{sid}:{folder}", text=labels[label_key], role=role, image=image_key,
                gt=hallu.GT_OF_FOLDER[folder], source_id=f"{folder}/{stem}_mask.png",
                meta={"folder": folder},
            )
            for folder, (label_key, image_key, role) in QUERIES.items()
        ]
        samples.append(Sample(
            id=sid, images=images, gts=gts, prompts=prompts,
            group=hallu.size_group(masks["factual"].area),
            meta={"ann_id": ann_id, "stem": stem, "index": i, "schema": ("current", "older")[schema]},
        ))
    return Benchmark("hallusegbench", p.stem, samples, sources={"data": p, "root": base},
                     meta={"title": short_name(p)})


def load_prediction_dir(benchmark: Benchmark, pred_dir: str | os.PathLike[str]) -> PredictionSet:
    """Read the four folders; a missing PNG goes to ``missing`` (skipped, not scored 0)."""
    d = Path(pred_dir)
    if not d.is_dir():
        raise DataFormatError("prediction directory not found", path=d)
    if not any((d / f).is_dir() for f in hallu.FOLDERS):
        raise DataFormatError(
            "none of the prediction folders found", path=d,
            hint=f"expected sub-folders {', '.join(hallu.FOLDERS)}",
        )
    out = PredictionSet(name=d.name, provenance={"pred_dir": str(d)})
    for sample in benchmark:
        for prompt in sample.prompts:
            f = inside_root(d, str(prompt.source_id), path=d, record=f"sample {sample.id}",
                            field=str(prompt.meta.get("folder", "")) or None, what="prediction file")
            if not exists(f):
                out.missing.add(prompt.id)
                continue
            mask = Mask.from_png(f, grey=True)
            gt = sample.gts[str(prompt.gt)]
            original = mask.shape
            mask = resize_nearest_floor(mask, gt.height, gt.width)
            out.add(Prediction(prompt.id, [Instance(mask=mask, score=1.0)], provenance={"file": str(f), "size": list(original)}))
    if out.missing and not out.by_prompt:  # not one file matched: a naming or folder mistake
        example = next(str(p.source_id) for s in benchmark for p in s.prompts)
        found = sorted(str(f.relative_to(d)) for f in d.glob("*/*.png"))[:2]
        raise DataFormatError(
            f"none of the {len(out.missing)} expected prediction PNGs is there", path=d,
            hint=f"expected names like {example} (official {{basename}}_{{ann_id}}_mask.png)"
            + (f"; found e.g. {', '.join(found)}" if found else ""),
        )
    return out


def write_prediction_dir(benchmark: Benchmark, predictions: PredictionSet, out: Path) -> list[Path]:
    """Write each prediction (union of its instances) as a 0/255 PNG in the official layout."""
    import cv2

    written: list[Path] = []
    for sample in benchmark:
        for prompt in sample.prompts:
            pred = predictions.get(prompt.id)
            if pred is None:
                continue
            gt = sample.gts[str(prompt.gt)]
            masks = [resize_nearest_floor(i.mask, gt.height, gt.width) for i in pred.instances]
            arr = union_all(masks, gt.height, gt.width).to_array().astype(np.uint8) * 255
            ok, buf = cv2.imencode(".png", arr)
            if not ok:  # pragma: no cover - cv2 always encodes uint8
                raise DataFormatError("cannot encode PNG", path=out / str(prompt.source_id))
            # never outside --out, whatever the policy for reading
            target = inside_root(out, str(prompt.source_id), record=f"sample {sample.id}",
                                 what="prediction file", allow=False)
            atomic_write_bytes(target, buf.tobytes())
            written.append(target)
    return written


class _HalluRecordKeys(TypedDict):
    id: str
    ann_id: int | str | None
    factual_label: str
    counterfactual_label: str
    size: str
    area_factual: int
    area_counterfactual: int
    IoU_fact: float | None
    IoU_textual: float | None
    IoU_visual: float | None
    IoU_counterfact: float | None
    dIoU_textual: float | None
    dIoU_visual: float | None
    CMS_fact: float | None
    CMS_counterfact: float | None
    CCMS_item: float | None
    missing: list[str]  # prediction folders without this item's PNG


class HalluRecord(_HalluRecordKeys, total=False):
    """One item's record (docs/metrics.md, HalluSegBench); a None value's reason is in
    ``null_reasons``."""

    null_reasons: dict[str, str]
    edit_leakage: float | None  # measured by the window from the pixels
    edit_leak_px: int | None


class HalluSegBenchKind(BenchmarkKind[hallu.ItemOverlaps]):
    name = "hallusegbench"
    title = "HalluSegBench"
    groups = ("all", *hallu.SIZE_GROUPS)
    scored_predictions = False  # one mask PNG per prompt: the model's threshold decides
    params = (
        ParamSpec("alpha", "--alpha", 3.0, 0.5, 10.0,
                  help="CMS weight α of the confusing region (α|C| + |N|) / (α|M|)", symbol="α"),
    )
    metric_help = {
        "IoU_fact": "IoU of c on I against M_c (orgl_orgi)",
        "IoU_textual": "IoU of c' on I against M_c (edtl_orgi)",
        "IoU_visual": "IoU of c on I' against M'_c' (orgl_edti)",
        "IoU_counterfact": "IoU of c' on I' against M'_c' (edtl_edti; not in the paper)",
        "dIoU_textual": "mean over items with both predictions of IoU_fact − IoU_textual",
        "dIoU_visual": "mean over items with both predictions of IoU_fact − IoU_visual",
        "CMS_fact": "(α|C| + |N|)/(α|M_c|) of c' on I, C = P ∩ M_c, N = P \\ M_c; 0 when |M_c| = 0",
        "CMS_counterfact": "(α|C| + |N|)/(α|M'_c'|) of c on I'; 0 when |M'_c'| = 0",
        "CCMS": "mean CMS_fact / mean CMS_counterfact (paper tables)",
        "CCMS_item_mean": "official get_hallucination.py: mean of per-item ratios of the CMS rounded to 4 decimals, "
                          "items whose rounded CMS_counterfact is 0 dropped",
        "CCMS_item_n": "items that enter CCMS_item_mean",
        "edit_leakage": "share of the pixels changed between I and I′ (max |ΔR|,|ΔG|,|ΔB| > 24) that lie outside "
                        "M_c ∪ M′_c′; null when nothing changed (measured in the window, from the images)",
        "edit_leak_px": "pixels changed between I and I′ outside M_c ∪ M′_c′",
        "N": "items in the group (S/M/L: factual mask area < 32², < 96², else)",
    }

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data", required=True, help="data.json (current or older field schema)")
        parser.add_argument("--root", default=None, help="base folder of the paths in data.json (default: its folder)")
        parser.add_argument("--pred-dir", required=True, help="folder holding orgl_orgi, edtl_orgi, orgl_edti, edtl_edti")

    def load_benchmark(self, *, data: PathLike, root: PathLike | None = None, **_: Any) -> Benchmark:
        return load_hallusegbench(data, root)

    def load_predictions(self, benchmark: Benchmark, /, *, pred_dir: PathLike, **_: Any) -> PredictionSet:
        return load_prediction_dir(benchmark, pred_dir)

    def write_predictions(self, benchmark: Benchmark, predictions: PredictionSet, out: Path) -> list[Path]:
        return write_prediction_dir(benchmark, predictions, out)

    def corrected_sample(self, sample: Sample) -> Sample:
        """After ground-truth corrections: each ground truth is one mask PNG, so its instances
        (an added one included) are united, and the size group follows the factual mask."""
        gts = {k: replace(g, masks=[union_all(g.masks, g.height, g.width)]) for k, g in sample.gts.items()}
        return replace(sample, gts=gts, group=hallu.size_group(gts["factual"].masks[0].area))

    def write_corrected(
        self, original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]
    ) -> list[Path]:
        from masklens.core.kinds.hallusegbench.corrected import write_corrected

        return write_corrected(original, corrected, out, files)

    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> hallu.ItemOverlaps:
        gts = {k: g.union() for k, g in sample.gts.items()}
        preds: dict[str, tuple[int, int] | None] = {}
        resized: list[str] = []
        for prompt in sample.prompts:
            pred = predictions.get(prompt.id)
            folder = prompt.meta["folder"]
            if pred is None:
                preds[folder] = None
                continue
            gt = gts[str(prompt.gt)]
            size = pred.provenance.get("size")
            if any(i.mask.shape != gt.shape for i in pred.instances) or (size and tuple(size) != gt.shape):
                resized.append(folder)
            masks = [resize_nearest_floor(i.mask, gt.height, gt.width) for i in pred.instances]
            p = union_all(masks, gt.height, gt.width)
            preds[folder] = (p.area, intersect_all([p, gt]).area)
        return hallu.ItemOverlaps({k: g.area for k, g in gts.items()}, preds, tuple(resized))

    def sample_readout(self, sample: Sample, overlaps: hallu.ItemOverlaps, params: Mapping[str, float]) -> HalluRecord:
        alpha = float(params["alpha"])
        if not alpha > 0:
            raise DataFormatError(f"alpha must be positive, got {alpha:g}", field="--alpha")
        values, why = hallu.item_metrics(overlaps, alpha)
        rec: dict[str, Any] = {
            "id": sample.id,
            "ann_id": sample.meta.get("ann_id"),
            "factual_label": sample.gts["factual"].label,
            "counterfactual_label": sample.gts["counterfactual"].label,
            "size": sample.group,
            "area_factual": overlaps.gt_area["factual"],
            "area_counterfactual": overlaps.gt_area["counterfactual"],
            **values,
            "missing": [f for f in hallu.FOLDERS if overlaps.pred(f) is None],
        }
        if why:
            rec["null_reasons"] = why
        leakage = sample.meta.get(LEAKAGE_KEY)  # measured from the pixels by the window only
        if leakage is not None:
            rec["edit_leakage"] = leakage.get("edit_leakage")
            rec["edit_leak_px"] = leakage.get("edit_leak_px")
        return cast(HalluRecord, rec)  # the metric keys come from item_metrics

    def summarize(self, samples: Sequence[Sample], overlaps: Sequence[hallu.ItemOverlaps],
                  readouts: Sequence[Mapping[str, Any]],
                  params: Mapping[str, float]) -> dict[str, dict[str, Value]]:
        out = {"all": hallu.summarize_items(readouts)}
        for g in hallu.SIZE_GROUPS:
            out[g] = hallu.summarize_items([r for r in readouts if r["size"] == g])
        return out

    def notes(self, samples: Sequence[Sample], overlaps: Sequence[hallu.ItemOverlaps]) -> list[str]:
        notes = []
        counts = {f: sum(1 for o in overlaps if o.pred(f) is None) for f in hallu.FOLDERS}
        missing = {f: n for f, n in counts.items() if n}
        if missing:
            text = ", ".join(f"{f}: {n}" for f, n in missing.items())
            notes.append(f"missing prediction PNGs (skipped by the metrics that need them) — {text}")
        n_resized = sum(len(o.resized) for o in overlaps)
        if n_resized:
            notes.append(f"{n_resized} predictions had another size and were resized to their ground truth "
                         "(cv2 INTER_NEAREST, as the official scripts)")
        return notes


KIND = HalluSegBenchKind()

"""`masklens export pcs` carries every SA-Co/Gold annotator's ground truth, not only the first:
``annotators/gt<k>.json`` (COCO datasets real pycocotools reads, the same images and categories),
an ``annotator`` field on every ground-truth annotation, each prediction's outcome against every
annotator, and per-annotator TP/FP/FN columns in the CSV — checked against the annotator files
themselves and against the kind's official counts for the annotator its oracle picked."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

import masklens.core as ml
from masklens.core.cli import main

D = Path(__file__).resolve().parents[2] / "resources" / "demo" / "pcs"
GTS = [D / f"gold_annotator_{i}.json" for i in (1, 2, 3)]
PRED = D / "pred_demo.json"


def _export(to: str, out: Path, *extra: str) -> None:
    argv = ["export", "pcs", *(x for g in GTS for x in ("--gt", str(g))), "--pred", str(PRED),
            "--to", to, "--out", str(out), *extra]
    assert main(argv) == 0


def _masks_by_image(coco: COCO, crowd: bool = False) -> dict[int, list[np.ndarray]]:
    out: dict[int, list[np.ndarray]] = {}
    for ann in coco.dataset["annotations"]:
        if bool(ann.get("iscrowd", 0)) == crowd:
            out.setdefault(ann["image_id"], []).append(coco.annToMask(ann))
    return out


def _same_masks(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    key = lambda m: (int(m.sum()), m.tobytes())  # noqa: E731 - order-free comparison
    return sorted(map(key, a)) == sorted(map(key, b))


def test_coco_export_has_every_annotator_s_ground_truth(tmp_path, capsys):
    out = tmp_path / "coco"
    _export("coco", out)
    capsys.readouterr()
    keys = ["gt0", "gt1", "gt2"]
    files = {"gt0": out / "ground_truth.json", **{k: out / "annotators" / f"{k}.json" for k in keys[1:]}}
    manifest = json.loads((out / "masklens-export.json").read_text())
    assert manifest["files"] == ["ground_truth.json", "predictions/pred_demo.json",
                                 "annotators/gt1.json", "annotators/gt2.json"]
    first = json.loads(files["gt0"].read_text())
    assert first["info"]["masklens"]["annotators"] == {k: str(g) for k, g in zip(keys, GTS, strict=True)}
    results = out / "predictions" / "pred_demo.json"
    for key, source in zip(keys, GTS, strict=True):
        exported = COCO(str(files[key]))
        raw = COCO(str(source))  # the annotator's own file: entry id = image id = sample id
        assert exported.dataset["images"] == first["images"]
        assert exported.dataset["categories"] == first["categories"]
        assert {a["annotator"] for a in exported.dataset["annotations"]} == {key}
        ours, theirs = _masks_by_image(exported), _masks_by_image(raw)
        by_sample = {img["id"]: int(img["sample_id"]) for img in exported.dataset["images"]}
        assert {by_sample[i] for i in ours} == set(theirs)  # every entry this annotator drew on
        for image_id, masks in ours.items():
            assert _same_masks(masks, theirs[by_sample[image_id]]), (key, image_id)
        ev = COCOeval(exported, exported.loadRes(str(results)), "segm")  # the official evaluation
        ev.evaluate()
        ev.accumulate()
        assert ev.eval["precision"].shape[0] == 10
    # each prediction's outcome against every annotator, naming the matched annotation
    anns = {k: {a["id"]: a for a in json.loads(f.read_text())["annotations"]} for k, f in files.items()}
    records = json.loads(results.read_text())
    differs = 0
    for r in records:
        for key in keys:
            ev_key, gt_id = ("eval", "eval_gt_id") if key == "gt0" else (f"eval_{key}", f"eval_{key}_gt_id")
            iou = r["eval_iou"] if key == "gt0" else r[f"eval_{key}_iou"]
            assert r[ev_key] in ("tp", "fp", "below_t")
            if r[ev_key] == "tp":
                gt = anns[key][r[gt_id]]
                assert gt["image_id"] == r["image_id"] and gt["annotator"] == key
                assert mask_utils.iou([r["segmentation"]], [gt["segmentation"]], [0])[0][0] == pytest.approx(iou)
        differs += len({r["eval"], r["eval_gt1"], r["eval_gt2"]}) > 1
    assert differs > 0  # the annotators disagree somewhere: the outcomes are not copies


def test_csv_counts_per_annotator_equal_the_official_ones_of_the_oracle_s_pick(tmp_path, capsys):
    _export("csv", tmp_path / "csv", "--score-threshold", "0.4")
    capsys.readouterr()
    rows = list(csv.DictReader((tmp_path / "csv" / "samples.csv").open()))
    bench = ml.load_benchmark("pcs", gt=[str(g) for g in GTS])
    r = ml.score("pcs", bench, ml.load_predictions("pcs", bench, pred=str(PRED)), score_threshold=0.4)
    picked = set()
    for row, rec in zip(rows, r.samples, strict=True):
        a = rec.get("annotator")
        if a is None:  # not scored (a non-exhaustive entry)
            continue
        prefix = "" if a == 0 else f"gt{a}."
        counts = tuple(int(row[f"{prefix}{c}"]) for c in ("tp", "fp", "fn"))
        assert counts == (rec["TP@0.5"], rec["FP@0.5"], rec["FN@0.5"]), (rec["id"], a)
        picked.add(a)
    assert picked - {0}  # the oracle picked a further annotator somewhere: that one is checked too


def test_fiftyone_directory_has_every_annotator_s_labels(tmp_path, capsys):
    out = tmp_path / "fo"
    _export("fiftyone", out)
    capsys.readouterr()
    labels = json.loads((out / "labels.json").read_text())
    for key in ("gt1", "gt2"):
        other = json.loads((out / "annotators" / f"{key}.json").read_text())
        assert other["images"] == labels["images"]  # file names in data/, as FiftyOne's importer reads
        assert other["annotations"] and {a["annotator"] for a in other["annotations"]} == {key}
        assert all("bbox" in a and "segmentation" in a for a in other["annotations"])

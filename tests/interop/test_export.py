"""`masklens export` / ``export()``: COCO that real pycocotools reads (ground truth and results
files), per-instance TP/FP/FN that agree with each kind's own readouts, verdicts as attributes,
per-sample CSV, a FiftyOne directory, and an output folder written whole or not at all."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

import masklens.core as ml
from masklens.core.cli import main
from masklens.core.errors import MasklensError
from masklens.core.files.output_dirs import MARKER
from masklens.core.interop.export import MANIFEST, export
from masklens.core.interop.outcomes import gt_masks
from masklens.core.review.locations import benchmark_key
from masklens.core.review.store import Role, open_store

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "resources" / "demo"

#: kind -> its demo files as the export's keywords
FILES = {
    "cafe": {"ann": f"{D}/cafe/ann.json", "pred": f"{D}/cafe/pred_demo.json", "images": f"{D}/cafe/images"},
    "pcs": {"gt": [f"{D}/pcs/gold_annotator_{i}.json" for i in (1, 2, 3)], "pred": f"{D}/pcs/pred_demo.json"},
    "hallusegbench": {"data": f"{D}/hallusegbench/data.json", "pred_dir": f"{D}/hallusegbench/pred_demo"},
    "cgebench": {"ann": f"{D}/cgebench/ann.json", "pred": f"{D}/cgebench/pred_demo.json"},
    "r2sm": {"ann": f"{D}/r2sm/ann.json", "pred": f"{D}/r2sm/pred_demo.json"},
    "ovs": {"ann": f"{D}/ovs/ann.json", "pred": f"{D}/ovs/pred.json"},
}


def _load(kind):
    files = FILES[kind]
    bench = ml.load_benchmark(kind, **files)
    return bench, ml.load_predictions(kind, bench, **files)


@pytest.mark.parametrize("kind", sorted(FILES))
def test_coco_ground_truth_and_results_load_in_pycocotools(kind, tmp_path):
    bench, preds = _load(kind)
    written = export(kind, "coco", tmp_path / "out", **FILES[kind])
    # SA-Co/Gold's further annotators get a ground-truth file each (tests/interop/test_annotators.py)
    further = [f"gt{i}.json" for i in range(1, len(FILES[kind]["gt"]))] if kind == "pcs" else []
    assert [p.name for p in written] == ["ground_truth.json", Path(FILES[kind].get("pred") or
                                         FILES[kind]["pred_dir"]).stem + ".json", *further]
    gt = COCO(str(written[0]))
    prompts = {p.id: (s, p) for s in bench.samples for p in s.prompts}
    assert len(gt.getAnnIds()) == sum(len(gt_masks(s, p)[0]) for s, p in prompts.values())
    # a category per prompt text; R2SM: one, each query an image of its own (see below)
    assert {c["name"] for c in gt.loadCats(gt.getCatIds())} == (
        {"object"} if kind == "r2sm" else {p.text for _, p in prompts.values()})
    dt = gt.loadRes(str(written[1]))
    n_instances = sum(len(pr.instances) for pid, pr in preds.by_prompt.items() if pid in prompts)
    assert len(dt.getAnnIds()) == n_instances
    for ann in dt.loadAnns(dt.getAnnIds()):  # every record is on its prompt's image and category
        s, p = prompts[ann["prompt_id"]]
        assert gt.imgs[ann["image_id"]]["sample_id"] in {x.id for x in bench.samples}
        assert ann["prompt"] == p.text
        assert gt.cats[ann["category_id"]]["name"] == ("object" if kind == "r2sm" else p.text)
        assert ann["eval"] in ("tp", "fp", "below_t")
    ev = COCOeval(gt, dt, "segm")  # the official evaluation runs on the pair
    ev.evaluate()
    ev.accumulate()
    assert ev.eval["precision"].shape[0] == 10


def _outcomes_by_prompt(results_path):
    by = {}
    for r in json.loads(Path(results_path).read_text()):
        by.setdefault(r["prompt_id"], []).append(r)
    return by


@pytest.mark.parametrize(("t", "tau"), [(0.5, 0.3), (0.7, 0.6), (0.2, 0.9)])
def test_cafe_instance_outcomes_agree_with_the_pair_classes(t, tau, tmp_path):
    bench, preds = _load("cafe")
    r = ml.score("cafe", bench, preds, score_threshold=t, iou_threshold=tau)
    written = export("cafe", "coco", tmp_path / "o", bench, preds, score_threshold=t, iou_threshold=tau)
    by = _outcomes_by_prompt(written[1])
    for sample, rec in zip(bench.samples, r.samples, strict=True):
        pos, neg = sample.prompts
        pos_tp = any(x["eval"] == "tp" for x in by.get(pos.id, []))
        assert pos_tp == (rec["pos_class"] == "TA-TP"), sample.id
        neg_fp = [x for x in by.get(neg.id, []) if x["eval"] == "fp"]
        assert all(x["eval"] != "tp" for x in by.get(neg.id, []))  # nothing is right on a negative
        expected = "TA-FP" if any(x["aligned"] for x in neg_fp) else "UA-FP" if neg_fp else "TN"
        assert rec["neg_class"] == expected, sample.id
        for x in by.get(pos.id, []) + by.get(neg.id, []):
            assert (x["eval"] == "below_t") == (x["score"] < t)


def test_pcs_instance_counts_equal_the_official_counts_at_iou_05(tmp_path):
    bench, preds = _load("pcs")
    r = ml.score("pcs", bench, preds, score_threshold=0.4)
    export("pcs", "csv", tmp_path / "o", bench, preds, score_threshold=0.4)
    rows = list(csv.DictReader((tmp_path / "o" / "samples.csv").open()))
    checked = 0
    for row, rec in zip(rows, r.samples, strict=True):
        if rec.get("annotator") not in (0, None):  # the oracle picked another annotator's file
            continue
        assert (int(row["tp"]), int(row["fp"]), int(row["fn"])) == (
            rec["TP@0.5"], rec["FP@0.5"], rec["FN@0.5"]), rec["id"]
        checked += 1
    assert checked >= len(rows) // 2


def test_verdicts_become_attributes_and_a_csv_column(tmp_path):
    bench, preds = _load("cafe")
    db = tmp_path / "reviews.sqlite"
    s0, s1, s2 = bench.samples[:3]
    with open_store(db, Role.WRITE, reviewer="ana") as store:
        store.record(benchmark_key(bench), s0.id, "model_wrong")
        store.record(benchmark_key(bench), s1.id, "prompt_ambiguous", prompt_id=s1.prompts[1].id)
        store.record(benchmark_key(bench), s1.id, "fine", reviewer="bo")
        store.record(benchmark_key(bench), s2.id, "fine", reviewer="=HYPERLINK(\"x\")")
    written = export("cafe", "coco", tmp_path / "coco", bench, preds, reviews=[db])
    gt = json.loads(written[0].read_text())
    image = next(i for i in gt["images"] if i["sample_id"] == s0.id)
    assert image["verdicts"] == "ana:model_wrong"
    results = json.loads(written[1].read_text())
    on_neg = {r["verdicts"] for r in results if r["prompt_id"] == s1.prompts[1].id}
    on_pos = {r["verdicts"] for r in results if r["prompt_id"] == s1.prompts[0].id}
    assert on_neg == {f"ana:prompt_ambiguous@{s1.prompts[1].id}; bo:fine"}
    assert on_pos == {"bo:fine"}  # the prompt-level verdict stays on its prompt
    export("cafe", "csv", tmp_path / "csv", bench, preds, reviews=[db])
    text = (tmp_path / "csv" / "samples.csv").read_text()
    rows = list(csv.DictReader(text.splitlines()))
    assert rows[0]["verdicts"] == "ana:model_wrong"
    assert rows[2]["verdicts"] == "'=HYPERLINK(\"x\"):fine"  # a formula is neutralised
    assert all(line.startswith('"') for line in text.splitlines())  # every cell quoted


def test_csv_has_a_row_per_set_and_sample_with_the_readouts(tmp_path):
    files = {**FILES["r2sm"], "pred": [FILES["r2sm"]["pred"]] * 2}
    export("r2sm", "csv", tmp_path / "o", label=["a", "b"], **files)
    rows = list(csv.DictReader((tmp_path / "o" / "samples.csv").open()))
    bench = ml.load_benchmark("r2sm", **FILES["r2sm"])
    assert len(rows) == 2 * len(bench.samples)
    assert [r["model"] for r in rows] == ["a"] * len(bench.samples) + ["b"] * len(bench.samples)
    assert rows[0]["sample_id"] == bench.samples[0].id and "tp" in rows[0]


def test_fiftyone_directory_layout(tmp_path):
    written = export("cafe", "fiftyone", tmp_path / "fo", **FILES["cafe"])
    out = tmp_path / "fo"
    labels = json.loads((out / "labels.json").read_text())
    for image in labels["images"]:
        assert (out / "data" / image["file_name"]).is_file()  # a link to the benchmark's image
    preds = json.loads(written[1].read_text())
    assert preds["images"] == labels["images"] and all("score" in a and "bbox" in a
                                                       for a in preds["annotations"])
    copied = export("cafe", "fiftyone", tmp_path / "fo2", copy_images=True, **FILES["cafe"])
    first = tmp_path / "fo2" / "data" / labels["images"][0]["file_name"]
    assert copied and first.is_file() and not first.is_symlink()


def _csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _review_store(tmp_path, bench):
    db = tmp_path / "reviews.sqlite"
    with open_store(db, Role.WRITE, reviewer="ana") as store:
        store.record(benchmark_key(bench), bench.samples[0].id, "model_wrong")
        store.record(benchmark_key(bench), bench.samples[-1].id, "fine", reviewer="bo")
    return db


def test_cafe_names_its_group_edit_type_in_every_export(tmp_path):
    bench, _ = _load("cafe")
    db = _review_store(tmp_path, bench)
    export("cafe", "csv", tmp_path / "csv", reviews=[db], **FILES["cafe"])
    rows = _csv_rows(tmp_path / "csv" / "samples.csv")
    assert "edit_type" in rows[0] and "group" not in rows[0]
    assert "readout.edit_type" not in rows[0]  # the record's edit_type is the same column
    assert [r["edit_type"] for r in rows] == [s.group for s in bench.samples]
    written = export("cafe", "coco", tmp_path / "coco", reviews=[db], **FILES["cafe"])
    gt = json.loads(written[0].read_text())
    assert [im["edit_type"] for im in gt["images"]] == [s.group for s in bench.samples]
    results = json.loads(written[1].read_text())
    for record in gt["annotations"] + results:
        assert "group" not in record and record["edit_type"] == bench.sample(record["sample_id"]).group
    # another kind keeps the generic name
    export("r2sm", "csv", tmp_path / "r2sm", **FILES["r2sm"])
    assert "group" in _csv_rows(tmp_path / "r2sm" / "samples.csv")[0]
    written = export("r2sm", "coco", tmp_path / "r2sm-coco", **FILES["r2sm"])
    assert all("group" in im and "edit_type" not in im
               for im in json.loads(written[0].read_text())["images"])


@pytest.mark.parametrize("kind", ["cafe", "pcs"])
def test_fiftyone_samples_csv_has_the_image_level_fields(kind, tmp_path):
    bench, _ = _load(kind)
    db = _review_store(tmp_path, bench)
    written = export(kind, "fiftyone", tmp_path / "fo", reviews=[db], **FILES[kind])
    out = tmp_path / "fo"
    assert out / "samples.csv" in written
    rows = _csv_rows(out / "samples.csv")
    group = "edit_type" if kind == "cafe" else "group"
    assert list(rows[0]) == ["filepath", "sample_id", group, "verdicts"]
    # exactly the images of data/, named as FiftyOne's CSV importer looks them up there
    assert sorted(r["filepath"] for r in rows) == sorted(p.name for p in (out / "data").iterdir())
    labels = json.loads((out / "labels.json").read_text())
    assert [r["filepath"] for r in rows] == [im["file_name"] for im in labels["images"]]
    # each row's fields are those of the per-sample CSV export
    export(kind, "csv", tmp_path / "csv", reviews=[db], **FILES[kind])
    by_sample = {r["sample_id"]: r for r in _csv_rows(tmp_path / "csv" / "samples.csv")}
    assert sorted(r["sample_id"] for r in rows) == sorted(s.id for s in bench.samples)  # none shared
    for row in rows:
        expected = by_sample[row["sample_id"]]
        assert (row[group], row["verdicts"]) == (expected[group], expected["verdicts"])
    assert rows[0]["verdicts"] == "ana:model_wrong" and rows[-1]["verdicts"] == "bo:fine"


def test_fiftyone_samples_csv_joins_the_samples_sharing_an_image(tmp_path):
    """A CAFE positive image with a second misleading prompt of another edit type: two samples,
    one image, one FiftyOne sample."""
    ann = json.loads(Path(FILES["cafe"]["ann"]).read_text())
    first = ann["images"][0]
    ann["images"].append({**first, "id": 1000000099, "fp_source_id": first["id"], "text_input": "kite",
                          "edit_type": "Ontological Conflict"})
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(ann))
    files = {**FILES["cafe"], "ann": str(path)}
    bench = ml.load_benchmark("cafe", **files)
    shared = [s for s in bench.samples if s.images["image"].source_id == first["id"]]
    assert [s.group for s in shared] == ["SM", "OC"]
    db = _review_store(tmp_path, bench)
    export("cafe", "fiftyone", tmp_path / "fo", reviews=[db], **files)
    rows = _csv_rows(tmp_path / "fo" / "samples.csv")
    assert len(rows) == len(bench.samples) - 1 == len(list((tmp_path / "fo" / "data").iterdir()))
    row = next(r for r in rows if shared[0].id in r["sample_id"])
    assert row["sample_id"] == f"{shared[0].id};{shared[1].id}"
    assert row["edit_type"] == "SM;OC"
    assert bench.samples[-1] is shared[1]  # the store's verdicts: one on each of the two
    assert row["verdicts"] == "ana:model_wrong; bo:fine"


def test_fiftyone_imports_the_directory_with_its_csv_and_coco_importers(tmp_path):
    fo = pytest.importorskip(
        "fiftyone", reason="fiftyone is not installed (not a masklens dependency); "
                           "`pip install fiftyone` to run this check")
    from fiftyone import ViewField as F

    try:
        fo.Dataset()
    except Exception as exc:  # noqa: BLE001 - FiftyOne without its database (no mongod)
        pytest.skip(f"fiftyone is installed but cannot start its database: {exc}")
    bench, preds = _load("cafe")
    db = _review_store(tmp_path, bench)
    export("cafe", "fiftyone", tmp_path / "fo", reviews=[db], **FILES["cafe"])
    ds = fo.Dataset.from_dir(dataset_dir=str(tmp_path / "fo"), dataset_type=fo.types.CSVDataset,
                             labels_path="samples.csv")
    ds.merge_dir(dataset_dir=str(tmp_path / "fo"), dataset_type=fo.types.COCODetectionDataset,
                 labels_path="labels.json", label_types="segmentations", label_field="ground_truth")
    ds.merge_dir(dataset_dir=str(tmp_path / "fo"), dataset_type=fo.types.COCODetectionDataset,
                 labels_path="predictions/pred_demo.json", label_types="segmentations",
                 label_field="pred_demo")
    assert len(ds) == len(bench.samples)  # the COCO labels joined the CSV's samples
    assert ds.count("ground_truth.detections") == sum(len(gt_masks(s, p)[0]) for s in bench for p in s.prompts)
    assert ds.count("pred_demo.detections") == sum(len(p.instances) for p in preds.by_prompt.values())
    evals = Counter(ds.values("pred_demo.detections.eval", unwind=True))
    assert set(evals) <= {"tp", "fp", "below_t"} and evals["tp"] > 0
    oc = [s.id for s in bench.samples if s.group == "OC"]
    assert sorted(ds.match(F("edit_type") == "OC").values("sample_id")) == sorted(oc)
    assert ds.match(F("verdicts") == "ana:model_wrong").values("sample_id") == [bench.samples[0].id]


def test_the_output_folder_is_replaced_only_when_it_is_an_earlier_export(tmp_path):
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "thesis.tex").write_text("precious")
    with pytest.raises(MasklensError, match="masklens did not write there"):
        export("cafe", "csv", keep, **FILES["cafe"])
    assert (keep / "thesis.tex").read_text() == "precious"
    out = tmp_path / "exp"
    export("cafe", "coco", out, **FILES["cafe"])
    export("cafe", "csv", out, **FILES["cafe"])  # an earlier export: replaced whole
    assert sorted(p.name for p in out.iterdir()) == [MARKER, MANIFEST, "samples.csv"]
    with pytest.raises(MasklensError, match="file not found"):  # a bad file: nothing written
        export("cafe", "coco", out, ann=FILES["cafe"]["ann"], pred=str(tmp_path / "none.json"))
    assert sorted(p.name for p in out.iterdir()) == [MARKER, MANIFEST, "samples.csv"]


def test_a_user_folder_holding_a_masklens_export_json_is_the_users(tmp_path):
    """No folder is taken for an earlier export by the name of a file in it."""
    mine = tmp_path / "mine"
    (mine / "thesis").mkdir(parents=True)
    (mine / MANIFEST).write_text('{"mine": true}')
    (mine / "photos.zip").write_bytes(b"PK")
    (mine / "thesis" / "ch1.tex").write_text("precious")
    with pytest.raises(MasklensError, match=r"masklens did not write there \(masklens-export.json, "
                       r"photos.zip, thesis/ch1.tex\)"):
        export("cafe", "coco", mine, **FILES["cafe"])
    assert sorted(str(p.relative_to(mine)) for p in mine.rglob("*")) == [
        MANIFEST, "photos.zip", "thesis", "thesis/ch1.tex"]
    assert (mine / "thesis" / "ch1.tex").read_text() == "precious"


def test_cli_export_is_a_thin_layer(tmp_path, capsys):
    argv = ["export", "cafe", "--ann", FILES["cafe"]["ann"], "--pred", FILES["cafe"]["pred"],
            "--score-threshold", "0.7", "--iou-threshold", "0.6", "--to", "coco", "--out"]
    assert main([*argv, str(tmp_path / "cli")]) == 0
    export("cafe", "coco", tmp_path / "api", ann=FILES["cafe"]["ann"], pred=FILES["cafe"]["pred"],
           score_threshold=0.7, iou_threshold=0.6)
    for name in ("ground_truth.json", "predictions/pred_demo.json"):
        a, b = (json.loads((tmp_path / d / name).read_text()) for d in ("cli", "api"))
        if isinstance(a, dict):
            a.pop("info"), b.pop("info")
        assert a == b
    manifest = json.loads((tmp_path / "cli" / MANIFEST).read_text())
    assert (manifest["score_threshold"], manifest["iou_threshold"]) == (0.7, 0.6)
    # a kind without t/τ of its own gets both as export flags
    assert main(["export", "hallusegbench", "--data", FILES["hallusegbench"]["data"], "--pred-dir",
                 FILES["hallusegbench"]["pred_dir"], "--iou-threshold", "0.8", "--to", "csv",
                 "--out", str(tmp_path / "h")]) == 0
    assert json.loads((tmp_path / "h" / MANIFEST).read_text())["iou_threshold"] == 0.8
    assert main([*argv[:6], "--to", "coco", "--out", str(tmp_path / "x"), "--iou-threshold", "2"]) == 2
    assert "--iou-threshold must be a number in [0, 1]" in capsys.readouterr().err


def _plain_cocoeval(written: list[Path]) -> list[float]:
    """COCOeval (segm) on the export's pair, as a researcher runs it: no option changed."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(written[0]))
        ev = COCOeval(gt, gt.loadRes(str(written[1])), "segm")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return [float(x) for x in ev.stats]


def test_plain_cocoeval_on_the_r2sm_export_reproduces_masklens_ap(tmp_path):
    """One COCO image per query, ids in the order AP ranks the queries, one category: the
    class-agnostic, per-query AP masklens reports (docs/interop.md)."""
    written = export("r2sm", "coco", tmp_path / "out", **FILES["r2sm"])
    stats = _plain_cocoeval(written)
    summary = ml.score("r2sm", **FILES["r2sm"]).summary["all"]
    for key, index in {"AP": 0, "AP50": 1, "AP75": 2, "AR": 8}.items():
        assert stats[index] == summary[key], key
    gt = json.loads(written[0].read_text())
    bench = ml.load_benchmark("r2sm", **FILES["r2sm"])
    assert [im["prompt_id"] for im in gt["images"]] == sorted(
        (p.id for s in bench.samples for p in s.prompts), key=lambda q: int(q.removeprefix("q")))
    assert [im["id"] for im in gt["images"]] == list(range(1, len(gt["images"]) + 1))


def test_plain_cocoeval_reproduces_r2sm_ap_with_score_ties_across_queries(tmp_path):
    """Tied scores across queries: COCO ranks them by image id, which must follow the query ids
    (not the order the file lists them in)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "metrics"))
    from test_r2sm_kind import _tie_files

    ann, pred = _tie_files(tmp_path, [1, 0], [1, 0])
    written = export("r2sm", "coco", tmp_path / "out", ann=str(ann), pred=str(pred))
    assert _plain_cocoeval(written)[0] == ml.score("r2sm", ann=str(ann), pred=str(pred)).summary["all"]["AP"]


def test_coco_file_names_of_a_hub_snapshot_are_the_snapshot_s_names(tmp_path):
    """A Hugging Face cache links each file of a snapshot to a blob named by its hash: the
    export names the image as the snapshot does, relative to the snapshot's folder."""
    import hashlib
    import shutil

    repo = tmp_path / "hub" / "datasets--someone--cafe"
    blobs, snapshot = repo / "blobs", repo / "snapshots" / "abc123" / "images"
    blobs.mkdir(parents=True)
    snapshot.mkdir(parents=True)
    for image in sorted(Path(FILES["cafe"]["images"]).iterdir()):
        blob = blobs / hashlib.sha256(image.read_bytes()).hexdigest()
        shutil.copyfile(image, blob)
        (snapshot / image.name).symlink_to(blob)
    written = export("cafe", "coco", tmp_path / "out", **{**FILES["cafe"], "images": str(snapshot)})
    gt = json.loads(written[0].read_text())
    names = {im["file_name"] for im in gt["images"]}
    assert names <= {p.name for p in Path(FILES["cafe"]["images"]).iterdir()}, sorted(names)[:3]
    assert gt["info"]["masklens"]["image_root"] == str(snapshot)

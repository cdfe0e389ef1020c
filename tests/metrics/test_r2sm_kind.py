"""R2SM kind: loader, golden gIoU/cIoU/wrong-type values worked out by hand, AP wiring, CLI, round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_cge_kind import box, rle  # the same 10×10 box/RLE helpers

from masklens.core.cli import main
from masklens.core.kinds.r2sm.metrics import coco_ap
from masklens.core.masks import Mask
from masklens.core.schema import Role
from masklens.core.scoring.contract import Scorer, get_kind

H = W = 10


A_AMODAL, A_MODAL = box(2, 6, 2, 8), box(2, 6, 2, 5)  # 24 px, 12 px (cols 5-7 hidden)
B = box(7, 10, 0, 10)  # 30 px, unoccluded (modal = amodal)
C_AMODAL, C_MODAL = box(0, 4, 0, 2), box(0, 2, 0, 2)  # 8 px, 4 px
CROWD = box(8, 10, 8, 10)


def build(tmp: Path) -> tuple[Path, Path]:
    images = [{"id": i, "file_name": f"{i}.png", "height": H, "width": W} for i in (1, 2, 3)]
    anns = [
        {"id": 101, "image_id": 1, "segmentation": rle(A_MODAL), "amodal_segmentation": rle(A_AMODAL)},
        {"id": 102, "image_id": 1, "segmentation": rle(B), "amodal_segmentation": rle(B)},
        {"id": 201, "image_id": 2, "segmentation": rle(C_MODAL), "amodal_segmentation": rle(C_AMODAL)},
        {"id": 202, "image_id": 2, "segmentation": rle(CROWD), "amodal_segmentation": rle(CROWD), "iscrowd": 1},
    ]
    queries = [
        {"id": 1, "image_id": 1, "text": "the whole A, even the hidden part", "amodal": True, "ann_ids": [101]},
        {"id": 2, "image_id": 1, "text": "the visible part of A", "amodal": False, "ann_ids": [101]},
        {"id": 3, "image_id": 1, "text": "all of B", "amodal": True, "ann_ids": [102]},
        {"id": 4, "image_id": 2, "text": "visible C and the crowd", "amodal": False, "ann_ids": [201, 202]},
        {"id": 5, "image_id": 2, "text": "the hidden unicorn", "amodal": True, "ann_ids": []},
        {"id": 6, "image_id": 2, "text": "the whole C", "amodal": True, "ann_ids": [201]},
    ]
    preds = [
        {"query_id": 1, "image_id": 1, "segmentation": rle(A_MODAL), "score": 0.8},  # modal answer to amodal query
        {"query_id": 2, "segmentation": rle(A_MODAL), "score": 0.9},
        {"query_id": 3, "segmentation": rle(box(7, 10, 0, 5)), "score": 0.6},
        {"query_id": 3, "segmentation": rle(box(7, 10, 5, 10)), "score": 0.2},
        {"query_id": 6, "segmentation": rle(C_AMODAL), "score": 0.0},  # exactly at the default t = 0
    ]
    ann, pred = tmp / "ann.json", tmp / "pred.json"
    ann.write_text(json.dumps({"images": images, "annotations": anns, "queries": queries}))
    pred.write_text(json.dumps(preds))
    return ann, pred


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return build(tmp_path)


def ns(files, **kw):
    d = {"ann": str(files[0]), "pred": str(files[1]), "images": None, **kw}
    return d


def scorer(files) -> Scorer:
    kind = get_kind("r2sm")
    bench = kind.load_benchmark(**ns(files))
    return Scorer(kind, bench, kind.load_predictions(bench, **ns(files)))


def test_loader(files):
    bench = get_kind("r2sm").load_benchmark(**ns(files))
    assert [s.id for s in bench] == ["1", "2"]  # image 3 has no query
    s = bench.sample("1")
    assert [(p.id, p.role, p.gt, p.source_id) for p in s.prompts] == [
        ("q1", Role.AMODAL, "q1/amodal", 1), ("q2", Role.MODAL, "q2/modal", 2), ("q3", Role.AMODAL, "q3/amodal", 3),
    ]
    assert s.gts["q1/amodal"].union().area == 24 and s.gts["q1/modal"].union().area == 12
    s2 = bench.sample("2")
    assert s2.gts["q4/modal"].union().area == 4  # crowd annotation left out of the union
    assert s2.gts["q4/modal"].union(include_crowd=True).area == 8
    assert s2.gts["q5/amodal"].masks == []


def test_golden_default_threshold(files):
    res = scorer(files).rescore()
    assert res.params == {"score_threshold": 0.0}
    by_q = {q["query_id"]: q for r in res.samples for q in r["queries"]}
    assert [by_q[i]["IoU"] for i in range(1, 7)] == [0.5, 1.0, 1.0, 0.0, 1.0, 1.0]
    assert [by_q[i]["IoU_other"] for i in range(1, 7)] == [1.0, 0.5, 1.0, 0.0, 1.0, 0.5]
    assert [by_q[i]["wrong_type"] for i in range(1, 7)] == [True, False, False, False, False, False]
    assert by_q[5]["empty_union"] and by_q[5]["U"] == 0
    assert by_q[6]["kept"] == 1  # score 0.0 is kept at t = 0.0 (inclusive)
    s = res.summary
    # I = 12, 12, 30, 0, 0, 8 ; U = 24, 12, 30, 4, 0, 8
    assert s["all"]["gIoU"] == pytest.approx(4.5 / 6)
    assert s["all"]["cIoU"] == pytest.approx(62 / 78)
    assert s["amodal"]["gIoU"] == pytest.approx(3.5 / 4) and s["amodal"]["cIoU"] == pytest.approx(50 / 62)
    assert s["modal"]["gIoU"] == pytest.approx(0.5) and s["modal"]["cIoU"] == pytest.approx(12 / 16)
    assert (s["all"]["N"], s["amodal"]["N"], s["modal"]["N"]) == (6, 4, 2)
    # wrong_type counts only queries whose modal and amodal masks differ: q1, q2, q4, q6
    assert (s["all"]["wrong_type"], s["amodal"]["wrong_type"], s["modal"]["wrong_type"]) == (0.25, 0.5, 0.0)
    r1 = res.samples[0]
    assert r1["gIoU"] == pytest.approx(2.5 / 3) and r1["wrong_type"] == 1 and r1["N"] == 3
    json.dumps(res.to_json(), allow_nan=False)


def test_threshold_rescore_touches_no_mask(files, monkeypatch):
    sc = scorer(files)
    sc.rescore()  # fills the AP cache
    from pycocotools import mask as mask_utils

    def boom(*a, **k):
        raise AssertionError("a mask was touched while re-scoring")

    for fn in ("merge", "iou", "area", "decode", "encode", "frPyObjects", "toBbox"):
        monkeypatch.setattr(mask_utils, fn, boom)
    res = sc.rescore({"score_threshold": 0.5})
    by_q = {q["query_id"]: q for r in res.samples for q in r["queries"]}
    # q3 keeps only the 0.6 half (15/30); q6's 0.0 instance is dropped
    assert [by_q[i]["IoU"] for i in range(1, 7)] == [0.5, 1.0, 0.5, 0.0, 1.0, 0.0]
    assert res.summary["all"]["gIoU"] == pytest.approx(3 / 6)
    assert res.summary["all"]["cIoU"] == pytest.approx((12 + 12 + 15 + 0 + 0 + 0) / (24 + 12 + 30 + 4 + 0 + 8))


def test_ap_matches_direct_cocoeval_and_ignores_t(files):
    sc = scorer(files)
    s0 = sc.rescore().summary
    s9 = sc.rescore({"score_threshold": 0.9}).summary
    for g in ("all", "amodal", "modal"):
        assert {k: s0[g][k] for k in ("AP", "AR")} == {k: s9[g][k] for k in ("AP", "AR")}
    queries = [q for o in sc.overlaps for q in o.queries]
    direct = coco_ap([q.unit for q in queries], use_cache=False)
    assert {k: s0["all"][k] for k in direct} == direct
    # the groups come from one per-image evaluation; each equals evaluating its queries alone
    for g, want in (("amodal", True), ("modal", False)):
        alone = coco_ap([q.unit for q in queries if q.amodal == want], use_cache=False)
        assert {k: s0[g][k] for k in alone} == alone
    # modal group: q2 perfect, q4 missed with no detection -> at every IoU threshold P = [1], R = 1/2
    assert s0["modal"]["AP"] == pytest.approx(51 / 101) and s0["modal"]["AR"] == pytest.approx(0.5)
    assert s0["modal"]["APm"] is None and s0["modal"]["APl"] is None  # no gt of that size


def test_cli_json_and_table(files, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["score", "r2sm", "--ann", str(files[0]), "--pred", str(files[1]), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert list(data["summary"]) == ["all", "amodal", "modal"]
    assert set(data["summary"]["all"]) >= {"gIoU", "cIoU", "AP", "AP50", "AP75", "APs", "APm", "APl", "AR", "N"}
    assert main(["score", "r2sm", "--ann", str(files[0]), "--pred", str(files[1])]) == 0
    text = capsys.readouterr().out
    assert "gIoU" in text and "amodal" in text and "Running per image" not in text


def test_write_predictions_round_trip(files, tmp_path):
    sc = scorer(files)
    written = sc.kind.write_predictions(sc.benchmark, sc.predictions, tmp_path / "rt.json")
    back = sc.kind.load_predictions(sc.benchmark, **ns(files, pred=str(written[0])))
    for pid, pred in sc.predictions.by_prompt.items():
        assert [(i.mask, i.score) for i in pred.instances] == [(i.mask, i.score) for i in back.get(pid).instances]
    assert Scorer(sc.kind, sc.benchmark, back).rescore().summary == sc.rescore().summary


def test_size_mismatch_prediction_is_resized(files, tmp_path):
    big = np.zeros((20, 20), dtype=np.uint8)
    big[4:12, 4:10] = 1  # nearest -> rows 2-5 × cols 2-4 = A_MODAL
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps([{"query_id": 2, "segmentation": Mask.from_array(big).to_coco(), "score": 1.0}]))
    kind = get_kind("r2sm")
    bench = kind.load_benchmark(**ns(files))
    res = Scorer(kind, bench, kind.load_predictions(bench, **ns(files, pred=str(pred)))).rescore()
    assert res.samples[0]["queries"][1]["IoU"] == 1.0


def test_typed_prompt_role_decides_the_mask_type(files):
    """A prompt typed in the GUI for query 1 with the MODAL role is scored against the modal mask."""
    import dataclasses

    from masklens.core.schema import Instance, Prediction, PredictionSet

    sc = scorer(files)
    sample = sc.benchmark.sample("1")
    typed = dataclasses.replace(sample.prompts[0], id="typed", role=Role.MODAL, text="just the visible A")
    copy = dataclasses.replace(sample, prompts=[typed])
    preds = PredictionSet()
    preds.add(Prediction("typed", [Instance(Mask.from_array(A_MODAL), 0.7)]))
    rec = sc.kind.sample_readout(copy, sc.kind.sample_overlaps(copy, preds), {"score_threshold": 0.0})
    q = rec["queries"][0]
    assert (q["query_id"], q["requested"], q["IoU"], q["IoU_other"], q["wrong_type"]) == (1, "modal", 1.0, 0.5, False)


def test_multi_annotation_query_and_empty_prediction_file(files, tmp_path):
    ann, _ = files
    data = json.loads(ann.read_text())
    data["queries"].append({"id": 7, "image_id": 1, "text": "A and B as seen", "amodal": False, "ann_ids": [101, 102]})
    ann.write_text(json.dumps(data))
    pred = tmp_path / "p7.json"
    pred.write_text(json.dumps([{"query_id": 7, "segmentation": rle(B), "score": 0.5}]))
    kind = get_kind("r2sm")
    bench = kind.load_benchmark(**ns(files))
    res = Scorer(kind, bench, kind.load_predictions(bench, **ns(files, pred=str(pred)))).rescore()
    q7 = res.samples[0]["queries"][3]
    assert (q7["query_id"], q7["gt_area"], q7["I"], q7["U"]) == (7, 42, 30, 42)  # union of 12 + 30 px
    assert q7["IoU"] == pytest.approx(30 / 42) and q7["IoU_other"] == pytest.approx(30 / 54)
    # an empty prediction file: every query empty -> IoU 0, except the no-object query (1.0)
    pred.write_text("[]")
    res = Scorer(kind, bench, kind.load_predictions(bench, **ns(files, pred=str(pred)))).rescore()
    ious = {q["query_id"]: q["IoU"] for r in res.samples for q in r["queries"]}
    assert ious == {1: 0.0, 2: 0.0, 3: 0.0, 7: 0.0, 4: 0.0, 5: 1.0, 6: 0.0}
    assert res.summary["all"]["gIoU"] == pytest.approx(1 / 7) and res.summary["all"]["cIoU"] == 0.0
    assert res.summary["all"]["AP"] == 0.0 and res.summary["all"]["AR"] == 0.0


def test_update_sample_reevaluates_only_its_queries(files, monkeypatch):
    """A live prompt changes one sample: COCO's per-image evaluation runs for its queries only."""
    from pycocotools.cocoeval import COCOeval

    from masklens.core.schema import Instance, Prediction, PredictionSet

    sc = scorer(files)
    before = sc.rescore().summary
    calls = []
    original = COCOeval.evaluateImg
    monkeypatch.setattr(COCOeval, "evaluateImg", lambda self, *a: calls.append(a[0]) or original(self, *a))
    preds = PredictionSet()
    for p in sc.predictions.by_prompt.values():
        preds.add(p)
    preds.add(Prediction("q4", [Instance(Mask.from_array(C_MODAL), 0.5)]))  # q4 now perfect
    sc.update_sample(1, preds)  # image 2: queries 4, 5, 6
    after = sc.rescore().summary
    assert len(calls) == 3 * 4  # 3 queries × 4 COCO area ranges
    assert after["modal"]["gIoU"] == 1.0 and before["modal"]["gIoU"] == 0.5
    assert after["modal"]["AP"] == pytest.approx(1.0)


def test_committed_fixture_matches_builder(tmp_path):
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "r2sm"
    ann, pred = build(tmp_path)
    assert (fixture / "ann.json").read_text() == ann.read_text()
    assert (fixture / "pred.json").read_text() == pred.read_text()


def _tie_files(tmp: Path, order: list[int], pred_order: list[int]) -> tuple[Path, Path]:
    """Two images, two queries with one detection each at the same score: query 1's misses,
    query 2's hits. COCOeval with the query id as image id ranks query 1's first (sorted ids)."""
    images = [{"id": i, "file_name": f"{i}.png", "height": H, "width": W} for i in (1, 2)]
    anns = [{"id": 10 * i, "image_id": i, "segmentation": rle(B), "amodal_segmentation": rle(B)} for i in (1, 2)]
    queries = [{"id": i, "image_id": i, "text": f"q{i}", "amodal": True, "ann_ids": [10 * i]} for i in (1, 2)]
    preds = [{"query_id": 1, "segmentation": rle(A_AMODAL), "score": 0.5},
             {"query_id": 2, "segmentation": rle(B), "score": 0.5}]
    ann, pred = tmp / "ann.json", tmp / "pred.json"
    ann.write_text(json.dumps({"images": [images[i] for i in order], "annotations": [anns[i] for i in order],
                               "queries": [queries[i] for i in order]}))
    pred.write_text(json.dumps([preds[i] for i in pred_order]))
    return ann, pred


def _official_ap(ann: Path, pred: Path) -> float:
    """Plain pycocotools COCOeval, each query an image whose id is the query id."""
    import contextlib
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    raw, res = json.loads(ann.read_text()), json.loads(pred.read_text())
    img = {i["id"]: i for i in raw["images"]}
    by_id = {a["id"]: a for a in raw["annotations"]}
    images = [{"id": q["id"], "height": img[q["image_id"]]["height"], "width": img[q["image_id"]]["width"]}
              for q in raw["queries"]]
    gts = [{"id": k + 1, "image_id": q["id"], "category_id": 1, "iscrowd": 0, "area": float(B.sum()),
            "segmentation": by_id[a]["amodal_segmentation"]}
           for k, (q, a) in enumerate((q, a) for q in raw["queries"] for a in q["ann_ids"])]
    dts = [{"image_id": r["query_id"], "category_id": 1, "segmentation": r["segmentation"], "score": r["score"]}
           for r in res]
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": gts, "categories": [{"id": 1, "name": "o"}]}
        gt.createIndex()
        ev = COCOeval(gt, gt.loadRes(dts), "segm")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return float(ev.stats[0])


@pytest.mark.parametrize(("order", "pred_order"), [([0, 1], [0, 1]), ([1, 0], [1, 0]), ([1, 0], [0, 1]),
                                                   ([0, 1], [1, 0])])
def test_ap_with_ties_across_queries_does_not_depend_on_the_listing_order(order, pred_order, tmp_path):
    ann, pred = _tie_files(tmp_path, order, pred_order)
    kind = get_kind("r2sm")
    bench = kind.load_benchmark(ann=str(ann))
    scores = Scorer(kind, bench, kind.load_predictions(bench, pred=str(pred))).rescore()
    assert _official_ap(ann, pred) == pytest.approx(0.2525, abs=1e-4)  # query 1 (a miss) ranks first
    assert scores.summary["all"]["AP"] == pytest.approx(_official_ap(ann, pred), abs=1e-12)

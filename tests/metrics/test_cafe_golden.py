"""CAFE golden tests: a hand-built 10×10 benchmark whose every count was derived by hand.

Masks (rows × cols, inclusive) on a 10×10 image; target T = rows 0–4, all columns (50 px):

    A rows 0–2 cols 0–4  15 px ⊂ T  IoU 0.30 (exactly τ)
    B = T                            IoU 1.00
    C rows 5–9 cols 5–9  25 px       IoU 0 (disjoint)
    D rows 0–1           20 px ⊂ T   IoU 0.40
    E row 0              10 px ⊂ T   IoU 0.20
    F rows 0–2 + row 3 cols 0–7      IoU 0.76

Pairs (positive preds | negative preds), classes at t = 0.5, τ = 0.3:

    P1 SM  F .9            | —                TA-TP  | TN
    P2 SM  A .5 (s = t)    | D .7             TA-TP  | TA-FP              SoftSwap
    P9 SM  B .8 at 20×20   | —                TA-TP  | TN     (nearest resize)
    P3 CC  D .3, C .8      | C .6             UA-P   | UA-FP  UCS  (pos image has 2nd annotation = C)
    P4 CC  D .49           | E .9, B .95      TA-FN  | TA-FP  ACS  SoftSwap
    P5 OC  —               | —                UA-FN  | TN     (no prediction at all)
    P6 OC  E .9            | B .2             UA-P   | TN
    P7 OC  C .1            | C .5 (s = t)     UA-FN  | UA-FP  UCS  SoftSwap
    P8 OC  positive image without annotation: pair dropped
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pytest

from masklens.core.kinds.cafe.io import load_cafe
from masklens.core.kinds.cafe.kind import KIND
from masklens.core.kinds.common.cgf1.tables import IOU_THRESHOLDS
from masklens.core.masks import Mask
from masklens.core.scoring.contract import Scorer

H = W = 10
NEG = 1000


def box(r0: int, r1: int, c0: int, c1: int, h: int = H, w: int = W) -> np.ndarray:
    a = np.zeros((h, w), dtype=bool)
    a[r0 : r1 + 1, c0 : c1 + 1] = True
    return a


T = box(0, 4, 0, 9)
MASKS = {
    "A": box(0, 2, 0, 4),
    "B": T,
    "C": box(5, 9, 5, 9),
    "D": box(0, 1, 0, 9),
    "E": box(0, 0, 0, 9),
    "F": box(0, 2, 0, 9) | box(3, 3, 0, 7),
}


def rle(a: np.ndarray) -> dict:
    return Mask.from_array(a).to_coco()


PAIRS = {  # id: (edit type, positive preds, negative preds)
    1: ("Superficial Mimicry", [("F", 0.9)], []),
    2: ("Superficial Mimicry", [("A", 0.5)], [("D", 0.7)]),
    9: ("Superficial Mimicry", [("B2", 0.8)], []),
    3: ("Context Conflict", [("D", 0.3), ("C", 0.8)], [("C", 0.6)]),
    4: ("Context Conflict", [("D", 0.49)], [("E", 0.9), ("B", 0.95)]),
    5: ("Ontological Conflict", [], []),
    6: ("Ontological Conflict", [("E", 0.9)], [("B", 0.2)]),
    7: ("Ontological Conflict", [("C", 0.1)], [("C", 0.5)]),
    8: ("Ontological Conflict", [("B", 0.9)], []),
}


def write_fixture(tmp: Path) -> tuple[Path, Path]:
    images, anns, preds = [], [], []
    for pid, (edit, pos, neg) in PAIRS.items():
        images.append({"id": pid, "file_name": f"{pid}.png", "height": H, "width": W,
                       "text_input": f"pos {pid}", "edit_type": edit})  # fmt: skip
        images.append({"id": pid + NEG, "file_name": f"{pid}.png", "height": H, "width": W,
                       "text_input": f"neg {pid}", "edit_type": edit, "fp_source_id": pid})  # fmt: skip
        if pid != 8:
            anns.append(
                {"id": len(anns) + 1, "image_id": pid, "category_id": 1, "segmentation": rle(T)}
            )
        if pid == 3:
            anns.append({"id": len(anns) + 1, "image_id": pid, "category_id": 1,
                         "segmentation": rle(MASKS["C"])})  # fmt: skip
        for image_id, items in ((pid, pos), (pid + NEG, neg)):
            for name, s in items:
                m = np.kron(T, np.ones((2, 2), dtype=bool)) if name == "B2" else MASKS[name]
                preds.append(
                    {"image_id": image_id, "category_id": 1, "segmentation": rle(m), "score": s}
                )
    ann_path, pred_path = tmp / "ann.json", tmp / "pred.json"
    ann_path.write_text(json.dumps({"images": images, "annotations": anns}))
    pred_path.write_text(json.dumps(preds))
    return ann_path, pred_path


@pytest.fixture
def scorer(tmp_path: Path) -> Scorer:
    ann, pred = write_fixture(tmp_path)
    args = argparse.Namespace(ann=str(ann), pred=str(pred), images=None)
    bench = KIND.load_benchmark(**vars(args))
    return Scorer(KIND, bench, KIND.load_predictions(bench, **vars(args)))


def test_loader_pairs_groups_and_drop(tmp_path: Path) -> None:
    ann, _ = write_fixture(tmp_path)
    bench = load_cafe(ann, images=tmp_path)
    assert [s.id for s in bench.samples] == [f"{p}/{p + NEG}" for p in (1, 2, 9, 3, 4, 5, 6, 7)]
    assert bench.meta["dropped_pairs"] == 1
    s3 = bench.sample("3/1003")
    assert s3.group == "CC"
    assert [p.role.value for p in s3.prompts] == ["positive", "negative"]
    assert [p.source_id for p in s3.prompts] == [3, 1003]
    assert s3.gts["target"].masks[0].area == 50  # the first annotation only
    assert len(s3.gts["pos_entry"].masks) == 2 and s3.gts["neg_entry"].masks == []
    assert s3.images["image"].path == tmp_path / "3.png"


def test_pair_readouts_hand_computed(scorer: Scorer) -> None:
    r = {
        x["id"].split("/")[0]: x
        for x in scorer.readouts({"score_threshold": 0.5, "iou_threshold": 0.3})
    }
    classes = {k: (v["pos_class"], v["neg_class"]) for k, v in r.items()}
    assert classes == {
        "1": ("TA-TP", "TN"),
        "2": ("TA-TP", "TA-FP"),
        "9": ("TA-TP", "TN"),
        "3": ("UA-P", "UA-FP"),
        "4": ("TA-FN", "TA-FP"),
        "5": ("UA-FN", "TN"),
        "6": ("UA-P", "TN"),
        "7": ("UA-FN", "UA-FP"),
    }
    assert {k for k, v in r.items() if v["SoftSwap"]} == {"2", "4", "7"}
    assert {k for k, v in r.items() if v["ACS"]} == {"4"}
    assert {k for k, v in r.items() if v["UCS"]} == {"3", "7"}
    assert r["2"]["pos_instances"] == [{"score": 0.5, "iou": pytest.approx(0.3, abs=0)}]
    assert r["1"]["pos_instances"][0]["iou"] == pytest.approx(0.76)
    assert r["9"]["pos_instances"][0]["iou"] == 1.0  # 20×20 prediction resized (nearest)
    assert r["5"]["pos_max_score"] == 0.0 and r["5"]["pos_instances"] == []


def test_summary_hand_computed(scorer: Scorer) -> None:
    res = scorer.rescore({"score_threshold": 0.5, "iou_threshold": 0.3})
    o, sm, cc, oc = (res.summary[g] for g in ("Overall", "SM", "CC", "OC"))
    counts = ("N", "TA_TP", "TA_FN", "UA_P", "TA_FN_paper", "UA_FN", "TA_FP", "UA_FP", "TN")
    assert [o[k] for k in counts] == [8, 3, 5, 2, 1, 2, 2, 2, 4]
    assert [sm[k] for k in counts] == [3, 3, 0, 0, 0, 0, 1, 0, 2]
    assert [cc[k] for k in counts] == [2, 0, 2, 1, 1, 0, 1, 1, 0]
    assert [oc[k] for k in counts] == [3, 0, 3, 1, 0, 2, 0, 1, 2]
    rates = ("AFPR", "UFPR", "IL_FPR", "ACSR", "UCSR", "CSR", "SoftSwap")
    assert [o[k] for k in rates] == pytest.approx([2 / 8, 2 / 8, 4 / 8, 1 / 8, 2 / 8, 3 / 8, 3 / 8])
    assert [sm[k] for k in rates] == pytest.approx([1 / 3, 0, 1 / 3, 0, 0, 0, 1 / 3])
    assert [cc[k] for k in rates] == pytest.approx([0.5, 0.5, 1.0, 0.5, 0.5, 1.0, 0.5])
    assert [oc[k] for k in rates] == pytest.approx([0, 1 / 3, 1 / 3, 0, 1 / 3, 1 / 3, 1 / 3])
    assert "1 pairs dropped" in " ".join(res.notes)


def _pm_f1(tp: int, pm_fp: int, fn: int) -> float:
    p = tp / (tp + pm_fp + 1e-4)
    r = tp / (tp + fn + 1e-4)
    return 2 * p * r / (p + r + 1e-4)


def test_cgf1_over_entries_hand_computed(scorer: Scorer) -> None:
    """18 entries: IL TP = P1 P2 P9 P3 P6, FN = P4 P5 P7, FP = negatives of P2 P3 P4 P7 and
    the positive of the dropped pair P8 (no annotation, B .9), TN = negatives of P1 P9 P5 P6
    P8. F (IoU 0.76) matches only up to threshold 0.75.

    The entries of the dropped pair P8 count: CAFE's tools/run_eval.sh runs SAM 3's
    CGF1Evaluator over every image entry of the file."""
    o = scorer.rescore({"score_threshold": 0.5, "iou_threshold": 0.3}).summary["Overall"]
    assert (o["IL_TP"], o["IL_FN"], o["IL_FP"], o["IL_TN"], o["N_entries"]) == (5, 3, 5, 5, 18)
    mcc = (5 * 5 - 5 * 3) / (math.sqrt(10 * 8 * 10 * 8) + 1e-6)
    assert o["IL_MCC"] == pytest.approx(mcc, abs=1e-15)
    assert o["IL_FPR_pcs"] == pytest.approx(5 / (10 + 1e-6), abs=1e-15)
    # TP: P1 (≤ 0.75 only), P9, P3 (its 2nd annotation C); pmFP: P2, P6 (+P1 above 0.75)
    pm = [_pm_f1(3, 2, 6) if thr < 0.76 else _pm_f1(2, 3, 7) for thr in IOU_THRESHOLDS]
    assert o["pmF1"] == pytest.approx(np.mean(pm), abs=1e-12)
    assert o["pmF1@0.5"] == pytest.approx(pm[0], abs=1e-15)
    assert o["pmF1@0.75"] == pytest.approx(pm[5], abs=1e-15)
    assert o["cgF1"] == pytest.approx(np.mean(pm) * mcc, abs=1e-12)
    assert o["cgF1@0.75"] == pytest.approx(pm[5] * mcc, abs=1e-15)
    assert scorer.rescore().summary["OC"]["N_entries"] == 8  # P5 P6 P7 and the dropped P8
    sm = scorer.rescore().summary["SM"]  # defaults t = 0.5, τ = 0.3
    mcc_sm = (3 * 2 - 1 * 0) / (math.sqrt(4 * 3 * 3 * 2) + 1e-6)
    pm_sm = [_pm_f1(2, 1, 1) if thr < 0.76 else _pm_f1(1, 2, 2) for thr in IOU_THRESHOLDS]
    assert sm["IL_MCC"] == pytest.approx(mcc_sm, abs=1e-15)
    assert sm["cgF1"] == pytest.approx(np.mean(pm_sm) * mcc_sm, abs=1e-12)


def test_rescore_touches_no_mask(scorer: Scorer, monkeypatch: pytest.MonkeyPatch) -> None:
    """At t = 0.2, τ = 0.5 (hand-derived): TA-TP P1 P9; UA-P P2 P3 P4 P6; UA-FN P5 P7;
    TA-FP P4 P6; UA-FP P2 P3 P7; ACS P4 P6; UCS P2 P3 P7."""
    import masklens.core.masks as masks_mod

    def boom(*a, **k):
        raise AssertionError("re-scoring touched a mask")

    for name in ("iou", "merge", "decode", "area", "encode", "frPyObjects"):
        monkeypatch.setattr(masks_mod.mask_utils, name, boom)
    monkeypatch.setattr(masks_mod, "iou_matrix", boom)
    res = scorer.rescore({"score_threshold": 0.2, "iou_threshold": 0.5})
    o = res.summary["Overall"]
    keys = ("TA_TP", "UA_P", "TA_FN_paper", "UA_FN", "TA_FN", "TA_FP", "UA_FP", "TN")
    assert [o[k] for k in keys] == [2, 4, 0, 2, 6, 2, 3, 3]
    assert [o[k] for k in ("ACSR", "UCSR", "CSR", "IL_FPR")] == pytest.approx(
        [0.25, 0.375, 0.625, 0.625]
    )
    assert o["SoftSwap"] == pytest.approx(3 / 8)  # threshold-free


def test_inclusive_thresholds_flip_just_above(scorer: Scorer) -> None:
    """s = t and IoU = τ count; nudging either threshold above them flips P2's positive."""
    p2 = lambda r: next(x for x in r if x["id"] == "2/1002")  # noqa: E731
    assert (
        p2(scorer.readouts({"score_threshold": 0.5, "iou_threshold": 0.3}))["pos_class"] == "TA-TP"
    )
    assert p2(scorer.readouts({"score_threshold": 0.5 + 1e-9}))["pos_class"] == "TA-FN"
    assert p2(scorer.readouts({"iou_threshold": 0.3 + 1e-9}))["pos_class"] == "UA-P"


def test_empty_group_gives_nulls(tmp_path: Path) -> None:
    ann, pred = write_fixture(tmp_path)
    data = json.loads(ann.read_text())
    data["images"] = [im for im in data["images"] if im["edit_type"] != "Context Conflict"]
    data["annotations"] = [a for a in data["annotations"] if a["image_id"] not in (3, 4)]
    ann.write_text(json.dumps(data))
    preds = [p for p in json.loads(pred.read_text()) if p["image_id"] % NEG not in (3, 4)]
    pred.write_text(json.dumps(preds))
    args = argparse.Namespace(ann=str(ann), pred=str(pred), images=None)
    bench = KIND.load_benchmark(**vars(args))
    cc = Scorer(KIND, bench, KIND.load_predictions(bench, **vars(args))).rescore().summary["CC"]
    assert cc["N"] == 0 and cc["TA_TP"] == 0
    assert cc["AFPR"] is None and cc["cgF1"] is None and cc["IL_MCC"] is None


def test_entries_join_the_group_of_their_own_edit_type(tmp_path: Path) -> None:
    """The per-subset cgF1 files of run_eval.sh list the entries of one edit type: when P1's
    negative says "Context Conflict", the pair (its edit type read from the negative, as
    eval_cafe_metrics.py does) and that negative entry move to CC; P1's positive stays SM."""
    ann, pred = write_fixture(tmp_path)
    data = json.loads(ann.read_text())
    for im in data["images"]:
        if im["id"] == 1 + NEG:
            im["edit_type"] = "Context Conflict"
    ann.write_text(json.dumps(data))
    args = argparse.Namespace(ann=str(ann), pred=str(pred), images=None)
    bench = KIND.load_benchmark(**vars(args))
    s = Scorer(KIND, bench, KIND.load_predictions(bench, **vars(args))).rescore().summary
    assert (s["SM"]["N"], s["SM"]["N_entries"]) == (2, 5)
    assert (s["CC"]["N"], s["CC"]["N_entries"]) == (3, 5)
    assert s["Overall"]["N_entries"] == 18

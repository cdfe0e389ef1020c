"""SA-Co/Gold cgF1 golden tests: three annotator files, oracle and edge cases derived by hand.

Masks on a 10×10 image: X rows 0–4 cols 0–4, Y rows 5–9 cols 5–9, Z rows 0–4 cols 5–9
(25 px each, disjoint); X2 = rows 0–4 cols 0–3 plus pixel (0, 4): 21 px ⊂ X, IoU 0.84.

    entry  a0        a1        a2        predictions            oracle / IL at t = 0.5
    e1     X         X, Y      Y         X2 .9, Y .6, Z .3      a1 (best mean local F1), TP
    e2     —         —         X         X .4                   a0 (a true negative wins), TN
    e3     X         —         X         Z .7                   a0 (tie 0 = 0 keeps the first), TP
    e4     Y         Y         Y         —                      FN
    e5     X         X         X (not exhaustive)  X .9         excluded
    e6     —         —         —         Y .95, Z .5 (s = t)    FP (2 FPs)
    e7     X crowd+Y  same     same      X .9                   crowd ignored: TP 0, FP 1, FN 1
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pytest

from masklens.core.kinds.common.cgf1.tables import IOU_THRESHOLDS
from masklens.core.kinds.pcs.kind import KIND
from masklens.core.masks import Mask
from masklens.core.scoring.contract import Scorer

H = W = 10


def box(r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
    a = np.zeros((H, W), dtype=bool)
    a[r0 : r1 + 1, c0 : c1 + 1] = True
    return a


X, Y, Z = box(0, 4, 0, 4), box(5, 9, 5, 9), box(0, 4, 5, 9)
X2 = box(0, 4, 0, 3) | box(0, 0, 4, 4)
M = {"X": X, "Y": Y, "Z": Z, "X2": X2}

GT = {  # entry: per annotator list of (mask, iscrowd)
    1: [[("X", 0)], [("X", 0), ("Y", 0)], [("Y", 0)]],
    2: [[], [], [("X", 0)]],
    3: [[("X", 0)], [], [("X", 0)]],
    4: [[("Y", 0)]] * 3,
    5: [[("X", 0)]] * 3,
    6: [[], [], []],
    7: [[("X", 1), ("Y", 0)]] * 3,
}
PREDS = {1: [("X2", 0.9), ("Y", 0.6), ("Z", 0.3)], 2: [("X", 0.4)], 3: [("Z", 0.7)],
         4: [], 5: [("X", 0.9)], 6: [("Y", 0.95), ("Z", 0.5)], 7: [("X", 0.9)]}  # fmt: skip


def write_fixture(tmp: Path) -> tuple[list[Path], Path]:
    paths = []
    for a in range(3):
        images, anns = [], []
        for e, per in GT.items():
            img = {
                "id": e,
                "file_name": f"{e}.png",
                "height": H,
                "width": W,
                "text_input": f"np{e}",
            }
            if e == 5 and a == 2:
                img["is_instance_exhaustive"] = False
            elif e != 4:  # e4 leaves the field out: counts as exhaustive
                img["is_instance_exhaustive"] = True
            images.append(img)
            for name, crowd in per[a]:
                seg = Mask.from_array(M[name]).to_coco()
                anns.append(
                    {"id": len(anns) + 1, "image_id": e, "segmentation": seg, "iscrowd": crowd}
                )
        p = tmp / f"gt_{'abc'[a]}.json"
        p.write_text(json.dumps({"images": images, "annotations": anns}))
        paths.append(p)
    recs = [{"image_id": e, "segmentation": Mask.from_array(M[n]).to_coco(), "score": s}
            for e, items in PREDS.items() for n, s in items]  # fmt: skip
    pred = tmp / "pred.json"
    pred.write_text(json.dumps(recs))
    return paths, pred


def scorer_for(gts: list[Path], pred: Path) -> Scorer:
    args = argparse.Namespace(gt=[str(g) for g in gts], pred=str(pred), images=None)
    bench = KIND.load_benchmark(**vars(args))
    return Scorer(KIND, bench, KIND.load_predictions(bench, **vars(args)))


def f1(tp: int, fp: int, fn: int) -> float:
    p, r = tp / (tp + fp + 1e-4), tp / (tp + fn + 1e-4)
    return 2 * p * r / (p + r + 1e-4)


HI = IOU_THRESHOLDS > 0.84  # thresholds X2 (IoU 0.84) does not reach: 0.85, 0.9, 0.95


def test_oracle_per_entry(tmp_path: Path) -> None:
    gts, pred = write_fixture(tmp_path)
    r = {x["id"]: x for x in scorer_for(gts, pred).readouts()}
    assert {k: (v["annotator"], v["IL"]) for k, v in r.items() if v["exhaustive"]} == {
        "1": (1, "TP"), "2": (1, "TN"), "3": (0, "TP"), "4": (0, "FN"), "6": (0, "FP"), "7": (0, "TP"),
    }  # fmt: skip
    assert r["5"]["exhaustive"] is False
    assert (r["1"]["TP@0.5"], r["1"]["FP@0.5"], r["1"]["FN@0.5"], r["1"]["TP@0.75"]) == (2, 0, 0, 2)
    mean_a1 = np.mean([f1(1, 1, 1) if hi else f1(2, 0, 0) for hi in HI])
    assert r["1"]["local_F1"] == pytest.approx(mean_a1, abs=1e-15)
    assert r["2"]["local_F1"] is None
    assert (r["6"]["n_accepted"], r["6"]["FP@0.5"]) == (2, 2)  # s = t is accepted
    assert (r["7"]["n_gt"], r["7"]["TP@0.5"], r["7"]["FP@0.5"], r["7"]["FN@0.5"]) == (1, 0, 1, 1)


def test_three_annotator_summary(tmp_path: Path) -> None:
    gts, pred = write_fixture(tmp_path)
    res = scorer_for(gts, pred).rescore({"score_threshold": 0.5})
    s = res.summary["all"]
    assert (s["N"], s["IL_TP"], s["IL_FP"], s["IL_TN"], s["IL_FN"]) == (6, 3, 1, 1, 1)
    mcc = (3 * 1 - 1 * 1) / (math.sqrt(4 * 4 * 2 * 2) + 1e-6)
    assert s["IL_MCC"] == pytest.approx(mcc, abs=1e-15)
    assert s["IL_FPR"] == pytest.approx(1 / (2 + 1e-6), abs=1e-15)
    # TP: e1 2 (1 above 0.84); pmFP: e1 0 (1), e3 1, e7 1; FN: e1 0 (1), e3, e4, e7
    pm = [f1(1, 3, 4) if hi else f1(2, 2, 3) for hi in HI]
    assert s["pmF1"] == pytest.approx(np.mean(pm), abs=1e-12)
    assert s["pmF1@0.5"] == pytest.approx(pm[0], abs=1e-15)
    assert s["pmF1@0.75"] == pytest.approx(pm[5], abs=1e-15)
    assert s["cgF1"] == pytest.approx(np.mean(pm) * mcc, abs=1e-12)
    assert s["cgF1@0.5"] == pytest.approx(pm[0] * mcc, abs=1e-15)
    assert s["cgF1@0.75"] == pytest.approx(pm[5] * mcc, abs=1e-15)
    assert s["IL_precision"] == pytest.approx(3 / (3 + 1 + 1e-6), abs=1e-15)
    assert s["IL_recall"] == pytest.approx(3 / (3 + 1 + 1e-6), abs=1e-15)
    p_, r_ = 3 / (4 + 1e-6), 3 / (4 + 1e-6)
    assert s["IL_F1"] == pytest.approx(2 * p_ * r_ / (p_ + r_ + 1e-6), abs=1e-15)
    # micro over all entries: e6's 2 FPs count in precision, not in pmF1
    prec = [1 / (1 + 5 + 1e-4) if hi else 2 / (2 + 4 + 1e-4) for hi in HI]
    rec = [1 / (1 + 4 + 1e-4) if hi else 2 / (2 + 3 + 1e-4) for hi in HI]
    assert s["precision"] == pytest.approx(np.mean(prec), abs=1e-12)
    assert s["recall"] == pytest.approx(np.mean(rec), abs=1e-12)
    f1s = [2 * a * b / (a + b + 1e-4) for a, b in zip(prec, rec, strict=True)]
    assert s["F1"] == pytest.approx(np.mean(f1s), abs=1e-12)
    pmp = [1 / (1 + 3 + 1e-4) if hi else 2 / (2 + 2 + 1e-4) for hi in HI]
    assert s["positive_micro_precision"] == pytest.approx(np.mean(pmp), abs=1e-12)
    # positive macro F1: IL_TP entries e1 (a1), e3 and e7 (local F1 0)
    e1 = [f1(1, 1, 1) if hi else f1(2, 0, 0) for hi in HI]
    assert s["positive_macro_F1"] == pytest.approx(np.mean(e1) / 3, abs=1e-12)
    assert any("not instance-exhaustive" in n for n in res.notes)


def test_single_annotator(tmp_path: Path) -> None:
    """a0 alone: e5 counts (only a2 marked it non-exhaustive); e1 matches X2 to X."""
    gts, pred = write_fixture(tmp_path)
    s = scorer_for(gts[:1], pred).rescore().summary["all"]
    # IL: TP e1 e3 e5 e7, TN e2, FN e4, FP e6
    assert (s["N"], s["IL_TP"], s["IL_FP"], s["IL_TN"], s["IL_FN"]) == (7, 4, 1, 1, 1)
    mcc = (4 * 1 - 1 * 1) / (math.sqrt(5 * 5 * 2 * 2) + 1e-6)
    # TP: e1 1 (0 above 0.84), e5 1; pmFP: e1 1 (2), e3 1, e7 1; FN: e1 0 (1), e3, e4, e7
    pm = [f1(1, 4, 4) if hi else f1(2, 3, 3) for hi in HI]
    assert s["cgF1"] == pytest.approx(np.mean(pm) * mcc, abs=1e-12)


def test_file_order_breaks_ties(tmp_path: Path) -> None:
    """e3 is a tie (mean local F1 0 under a0 and a1): the first file given wins."""
    gts, pred = write_fixture(tmp_path)
    r = {x["id"]: x for x in scorer_for([gts[1], gts[0], gts[2]], pred).readouts()}
    assert (r["3"]["annotator"], r["3"]["IL"]) == (0, "FP")


def test_threshold_changes_without_masks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import masklens.core.masks as masks_mod

    gts, pred = write_fixture(tmp_path)
    sc = scorer_for(gts, pred)
    monkeypatch.setattr(masks_mod.mask_utils, "iou", lambda *a, **k: 1 / 0)
    s = sc.rescore({"score_threshold": 0.0}).summary["all"]
    # everything accepted: e1 + Z, e2 X (a2 would be TP, a0/a1 FP with F1 0 vs a2 > 0 → a2)
    assert (s["IL_TP"], s["IL_FP"], s["IL_TN"], s["IL_FN"]) == (4, 1, 0, 1)
    s = sc.rescore({"score_threshold": 0.96}).summary["all"]
    # nothing accepted: e3 becomes a true negative through a1 (no gt), which the oracle prefers
    assert (s["IL_TP"], s["IL_FP"], s["IL_TN"], s["IL_FN"]) == (0, 0, 3, 3)
    assert s["positive_macro_F1"] is None and s["pmF1"] == 0.0 and s["cgF1"] == 0.0

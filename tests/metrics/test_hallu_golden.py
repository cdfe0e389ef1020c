"""HalluSegBench: golden values computed by hand, edge cases, groups, confidence half-widths."""

from __future__ import annotations

import json
import math
from fractions import Fraction as F
from pathlib import Path

import cv2
import numpy as np
import pytest

from masklens.core.kinds.hallusegbench.kind import KIND, load_hallusegbench, load_prediction_dir
from masklens.core.scoring.contract import score

T_975_2 = 4.302652729911275  # Student t quantile, 2 degrees of freedom


def _png(path: Path, arr: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), (arr > 0).astype(np.uint8) * 255)


def _mask(h: int, w: int, rows: slice | None = None, cols: slice | None = None) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    if rows is not None:
        m[rows, cols] = 1
    return m


def build_golden(root: Path, *, older: bool = False) -> Path:
    """Four items (see the module docstring of the test for the hand computation)."""
    items = []
    spec = {
        # stem, ann, size, M_c, M'_c', predictions per folder (None = missing PNG)
        "A": ("img1", 1, (10, 10), _mask(10, 10, slice(0, 4), slice(0, 5)), _mask(10, 10, slice(5, 10), slice(5, 10))),
        "B": ("img2", 2, (10, 10), _mask(10, 10, slice(0, 3), slice(0, 3)), _mask(10, 10)),
        "C": ("img3", 3, (50, 50), _mask(50, 50, slice(0, 40), slice(0, 40)), _mask(50, 50, slice(0, 10), slice(0, 10))),
        "D": ("img4", 4, (100, 100), _mask(100, 100, slice(0, 100), slice(0, 100)),
              _mask(100, 100, slice(0, 50), slice(0, 100))),
    }
    a_textual = _mask(10, 10, slice(0, 2), slice(0, 5))
    a_textual[8:10, 0:2] = 1
    preds = {
        "A": {"orgl_orgi": _mask(10, 10, slice(0, 4), slice(0, 10)), "edtl_orgi": a_textual,
              "orgl_edti": spec["A"][4], "edtl_edti": None},
        "B": {"orgl_orgi": _mask(10, 10), "edtl_orgi": _mask(10, 10),
              "orgl_edti": _mask(10, 10, slice(9, 10), slice(0, 5)), "edtl_edti": _mask(10, 10)},
        # C: edtl_orgi is given at twice the size; cv2 INTER_NEAREST keeps 40 rows x 20 cols
        "C": {"orgl_orgi": None, "edtl_orgi": _mask(100, 100, slice(0, 80), slice(0, 39)),
              "orgl_edti": _mask(50, 50, slice(0, 10), slice(0, 20)), "edtl_edti": spec["C"][4]},
        "D": {"orgl_orgi": spec["D"][3], "edtl_orgi": spec["D"][3], "orgl_edti": spec["D"][3], "edtl_edti": None},
    }
    for key, (stem, ann, _size, m_c, m_cf) in spec.items():
        _png(root / "masks" / f"{stem}_{ann}.png", m_c)
        _png(root / "new_masks" / f"{stem}_{ann}.png", m_cf)
        for folder, arr in preds[key].items():
            if arr is not None:
                _png(root / "pred" / folder / f"{stem}_{ann}_mask.png", arr)
        if older:
            items.append({"image_file": f"testing/{stem}.jpg", "mask_file": f"masks/{stem}_{ann}.png",
                          "new_mask_path": f"new_masks/{stem}_{ann}.png", "ann_id": ann,
                          "original_label": "sheep", "new_label": "cow",
                          "edited_image_path": f"edited/{stem}_{ann}.png"})
        else:
            items.append({"factual_image_path": f"images/{stem}.jpg", "factual_mask_path": f"masks/{stem}_{ann}.png",
                          "counterfactual_image_path": f"edited/{stem}_{ann}.png",
                          "counterfactual_mask_path": f"new_masks/{stem}_{ann}.png", "ann_id": ann,
                          "factual_label": "sheep", "counterfactual_label": "cow"})
    data = root / "data.json"
    data.write_text(json.dumps(items))
    return data


@pytest.fixture()
def golden(tmp_path: Path):
    data = build_golden(tmp_path)
    bench = load_hallusegbench(data, tmp_path)
    preds = load_prediction_dir(bench, tmp_path / "pred")
    return bench, preds


def approx(x: F | float) -> object:
    return pytest.approx(float(x), abs=1e-12)


def test_per_item_values(golden):
    bench, preds = golden
    res = score(KIND, bench, preds)
    a, b, c, d = res.samples
    assert (a["IoU_fact"], a["IoU_textual"], a["IoU_visual"]) == (0.5, approx(F(5, 12)), 1.0)
    assert a["CMS_fact"] == approx(F(17, 30)) and a["CMS_counterfact"] == 1.0
    assert a["IoU_counterfact"] is None and a["null_reasons"]["IoU_counterfact"].endswith("missing")
    assert a["dIoU_textual"] == approx(F(1, 12)) and a["dIoU_visual"] == -0.5
    # B: empty predictions, empty counterfactual mask: IoU 0 on empty union, CMS 0 when |M| = 0
    assert b["IoU_fact"] == 0.0 and b["IoU_counterfact"] == 0.0 and b["IoU_visual"] == 0.0
    assert b["CMS_fact"] == 0.0 and b["CMS_counterfact"] == 0.0
    assert b["CCMS_item"] is None and b["null_reasons"]["CCMS_item"].startswith("CMS_counterfact rounds to 0")
    # C: missing orgl_orgi => no ΔIoU; resized edtl_orgi (cv2 INTER_NEAREST) covers 800 px
    assert c["IoU_fact"] is None and c["dIoU_textual"] is None and c["dIoU_visual"] is None
    assert c["IoU_textual"] == 0.5 and c["CMS_fact"] == 0.5
    # CCMS_item is get_hallucination.py's per-item ratio: both CMS rounded to 4 decimals first
    assert c["CMS_counterfact"] == approx(F(4, 3)) and c["CCMS_item"] == 0.5 / 1.3333
    assert d["IoU_visual"] == 0.5 and d["CMS_counterfact"] == approx(F(4, 3)) and d["dIoU_visual"] == 0.5
    assert [s["size"] for s in res.samples] == ["S", "S", "M", "L"]
    assert c["missing"] == ["orgl_orgi"]


def test_summary_all_group(golden):
    bench, preds = golden
    s = score(KIND, bench, preds).summary["all"]
    assert s["N"] == 4
    assert s["IoU_fact"] == 0.5
    assert s["IoU_textual"] == approx(F(23, 48))
    assert s["IoU_visual"] == 0.5 and s["IoU_counterfact"] == 0.5
    assert s["dIoU_textual"] == approx(F(1, 36)) and s["dIoU_visual"] == 0.0
    assert s["CMS_fact"] == approx(F(31, 60)) and s["CMS_counterfact"] == approx(F(11, 12))
    assert s["CCMS"] == approx(F(31, 55))  # paper: ratio of the means
    # script (get_hallucination.py): mean of the ratios of the 4-decimal-rounded CMS, item B
    # dropped (rounded CMS_counterfact 0); unrounded this would be 203/360
    assert s["CCMS_item_mean"] == (0.5667 / 1.0 + 0.5 / 1.3333 + 1.0 / 1.3333) / 3
    assert s["CCMS_item_n"] == 3
    # t-based 95 % half-width of IoU_fact over (0.5, 0, 1): s = 0.5, n = 3
    assert s["IoU_fact_ci95"] == pytest.approx(T_975_2 * 0.5 / math.sqrt(3), rel=1e-9)


def test_size_groups(golden):
    bench, preds = golden
    summ = score(KIND, bench, preds).summary
    assert [summ[g]["N"] for g in ("S", "M", "L")] == [2, 1, 1]
    assert summ["S"]["IoU_fact"] == 0.25 and summ["S"]["CMS_fact"] == approx(F(17, 60))
    assert summ["S"]["CCMS"] == approx(F(17, 30)) and summ["S"]["CCMS_item_mean"] == 0.5667  # rounded (script)
    assert summ["M"]["IoU_fact"] is None and summ["M"]["IoU_fact_ci95"] is None
    assert summ["M"]["CCMS_item_mean"] == 0.5 / 1.3333  # the script's rounded CMS
    assert summ["L"]["IoU_visual"] == 0.5 and summ["L"]["dIoU_visual"] == 0.5


def test_alpha_rescoring_touches_no_masks(golden):
    bench, preds = golden
    from masklens.core.scoring.contract import Scorer

    scorer = Scorer(KIND, bench, preds)
    a1 = scorer.rescore({"alpha": 1.0}).samples[0]
    # α = 1: CMS = |P| / |M|
    assert a1["CMS_fact"] == approx(F(14, 20))
    a10 = scorer.rescore({"alpha": 10.0}).samples[0]
    assert a10["CMS_fact"] == approx(F(10 * 10 + 4, 10 * 20))
    assert scorer.rescore().params == {"alpha": 3.0}


def test_older_schema_scores_identically(tmp_path: Path):
    new, old = tmp_path / "new", tmp_path / "old"
    r = []
    for root, older in ((new, False), (old, True)):
        data = build_golden(root, older=older)
        bench = load_hallusegbench(data, root)
        r.append(score(KIND, bench, load_prediction_dir(bench, root / "pred")))
    assert r[0].summary == r[1].summary
    bench = load_hallusegbench(old / "data.json")
    assert bench.samples[0].meta["schema"] == "older" and bench.samples[0].id == "img1_1"
    assert {p.text for p in bench.samples[0].prompts} == {"sheep", "cow"}


def test_prompts_map_folders_to_queries(golden):
    bench, _ = golden
    s = bench.samples[0]
    by_folder = {p.meta["folder"]: p for p in s.prompts}
    assert (by_folder["orgl_orgi"].text, by_folder["orgl_orgi"].image, by_folder["orgl_orgi"].gt) == (
        "sheep", "factual", "factual")
    assert (by_folder["edtl_orgi"].text, by_folder["edtl_orgi"].image, by_folder["edtl_orgi"].role) == (
        "cow", "factual", "negative")
    assert (by_folder["orgl_edti"].text, by_folder["orgl_edti"].image, by_folder["orgl_edti"].gt) == (
        "sheep", "counterfactual", "counterfactual")
    assert by_folder["edtl_edti"].source_id == "edtl_edti/img1_1_mask.png"


def test_rescoring_never_touches_masks(golden, monkeypatch):
    bench, preds = golden
    from masklens.core.masks import Mask
    from masklens.core.scoring.contract import Scorer

    scorer = Scorer(KIND, bench, preds)

    def boom(*_a, **_k):
        raise AssertionError("masks touched while re-scoring")

    import masklens.core.kinds.hallusegbench.kind as kind_module

    for name in ("intersect_all", "union_all", "resize_nearest_floor"):
        monkeypatch.setattr(kind_module, name, boom)
    monkeypatch.setattr(Mask, "to_array", boom)
    assert scorer.rescore({"alpha": 2.0}).summary["all"]["CMS_fact"] is not None

"""HalluSegBench read exactly as its official scripts.

``get_consistency.py`` / ``get_hallucination.py`` (PLAN-Lab/HalluSegBench) read every mask with
``cv2.imread(path, 0) > 0`` and compute the "Mean ratio" from CMS values rounded with
``round(x, 4)``, dropping items whose rounded CMS_counterfact is 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from masklens.core.kinds.hallusegbench.kind import KIND, load_hallusegbench, load_prediction_dir
from masklens.core.kinds.hallusegbench.metrics import script_round
from masklens.core.masks import Mask
from masklens.core.scoring.contract import score

FOLDERS = ("orgl_orgi", "edtl_orgi", "orgl_edti", "edtl_edti")


def _write_items(root: Path, items: list[dict]) -> Path:
    """items: {stem, m_c, m_cf, preds: {folder: array or path writer}} -> data.json."""
    out = []
    for k, it in enumerate(items):
        stem = f"img{k}"
        for sub, arr in (("masks", it["m_c"]), ("new_masks", it["m_cf"])):
            (root / sub).mkdir(parents=True, exist_ok=True)
            it.get("writer", _grey)(root / sub / f"{stem}_{k}.png", arr)
        for folder, arr in it["preds"].items():
            (root / "pred" / folder).mkdir(parents=True, exist_ok=True)
            it.get("writer", _grey)(root / "pred" / folder / f"{stem}_{k}_mask.png", arr)
        out.append({"factual_image_path": f"images/{stem}.jpg", "factual_mask_path": f"masks/{stem}_{k}.png",
                    "counterfactual_mask_path": f"new_masks/{stem}_{k}.png", "ann_id": k})  # fmt: skip
    data = root / "data.json"
    data.write_text(json.dumps(out))
    return data


def _grey(path: Path, arr: np.ndarray) -> None:
    assert cv2.imwrite(str(path), arr)


def _score(root: Path, data: Path):
    bench = load_hallusegbench(data, root)
    return score(KIND, bench, load_prediction_dir(bench, root / "pred"))


def _png_variants(rng: np.random.Generator, h: int, w: int) -> dict[str, np.ndarray]:
    """Arrays in every PNG mode, with small values that grey conversion or the 16-bit
    reduction turn into background."""
    small = rng.choice([0, 0, 1, 2, 3, 200, 255], size=(h, w)).astype(np.uint8)
    return {
        "L": small,
        "LA": np.dstack([small, rng.integers(0, 256, (h, w), dtype=np.uint8)]),
        "RGB": rng.choice([0, 1, 2, 255], size=(h, w, 3)).astype(np.uint8),
        "RGBA": np.dstack([rng.choice([0, 1, 255], size=(h, w, 3)).astype(np.uint8),
                           np.full((h, w), 255, np.uint8)]),
        "I;16": rng.choice([0, 1, 255, 256, 257, 65535], size=(h, w)).astype(np.uint16),
        "RGB16": rng.choice([0, 1, 255, 256, 4000], size=(h, w, 3)).astype(np.uint16),
        "RGBA16": np.dstack([rng.choice([0, 300, 65535], size=(h, w, 3)).astype(np.uint16),
                             np.full((h, w), 65535, np.uint16)]),
    }


def _save(path: Path, mode: str, arr: np.ndarray) -> None:
    if mode in ("L", "LA", "RGB", "RGBA"):
        Image.fromarray(arr, mode=mode).save(path)  # PIL writes these modes as PNG colour types
    else:  # 16-bit PNGs: cv2 writes them (BGR order does not matter for random data)
        assert cv2.imwrite(str(path), arr)


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA", "I;16", "RGB16", "RGBA16", "P", "1"])
def test_grey_reading_is_cv2_imread_0(tmp_path: Path, mode: str) -> None:
    rng = np.random.default_rng(7)
    p = tmp_path / "m.png"
    if mode == "P":
        img = Image.fromarray(rng.choice([0, 1, 2], size=(9, 11)).astype(np.uint8), mode="L").convert("P")
        img.putpalette([0, 0, 0, 1, 0, 0, 255, 255, 255] + [0] * 759)  # index 1 = (1, 0, 0)
        img.save(p)
    elif mode == "1":
        Image.fromarray(rng.integers(0, 2, (9, 11)).astype(bool)).save(p)
    else:
        _save(p, mode, _png_variants(rng, 9, 11)[mode])
    expected = cv2.imread(str(p), 0) > 0
    assert np.array_equal(Mask.from_png(p, grey=True).to_array().astype(bool), expected)


def test_sixteen_bit_reduces_to_the_high_byte(tmp_path: Path) -> None:
    p = tmp_path / "m16.png"
    assert cv2.imwrite(str(p), np.array([[0, 1, 255, 256, 511, 65535]], np.uint16))
    assert Mask.from_png(p, grey=True).to_array().tolist() == [[0, 0, 0, 1, 1, 1]]
    assert Mask.from_png(p).to_array().tolist() == [[0, 1, 1, 1, 1, 1]]  # any non-zero (other kinds)


def test_opaque_rgba_prediction_equal_to_gt_scores_one(tmp_path: Path) -> None:
    """An opaque RGBA mask used to count its alpha as foreground."""
    m = np.zeros((20, 20), np.uint8)
    m[5:10, 5:10] = 255
    rgba = np.dstack([m, m, m, np.full_like(m, 255)])

    def writer(path: Path, arr: np.ndarray) -> None:
        Image.fromarray(arr, mode="RGBA" if arr.ndim == 3 else "L").save(path)

    data = _write_items(tmp_path, [{"m_c": m, "m_cf": m, "writer": writer,
                                    "preds": {f: rgba for f in FOLDERS}}])  # fmt: skip
    rec = _score(tmp_path, data).samples[0]
    assert rec["IoU_fact"] == 1.0 and rec["IoU_visual"] == 1.0
    assert rec["CMS_fact"] == 1.0 and rec["CMS_counterfact"] == 1.0


def test_colour_pixel_weighted_to_background(tmp_path: Path) -> None:
    """A pixel (R, G, B) = (1, 0, 0) is background for cv2's grey conversion (0.299 → 0)."""
    gt = np.zeros((4, 4), np.uint8)
    gt[0, 0] = 255
    pred = np.zeros((4, 4, 3), np.uint8)
    pred[0, 0] = 255
    pred[3, 3] = (1, 0, 0)

    def writer(path: Path, arr: np.ndarray) -> None:
        Image.fromarray(arr, mode="RGB" if arr.ndim == 3 else "L").save(path)

    data = _write_items(tmp_path, [{"m_c": gt, "m_cf": gt, "writer": writer,
                                    "preds": {f: pred for f in FOLDERS}}])  # fmt: skip
    assert _score(tmp_path, data).samples[0]["IoU_fact"] == 1.0


def _cms_item(h: int, w: int, gt_rows: int, outside: int) -> tuple[np.ndarray, np.ndarray]:
    """A ground truth of gt_rows full rows and a prediction of `outside` pixels below it."""
    gt = np.zeros((h, w), np.uint8)
    gt[:gt_rows] = 255
    pred = np.zeros((h, w), np.uint8)
    pred[gt_rows:].flat[:outside] = 255
    return gt, pred


def test_ccms_item_mean_drops_items_whose_rounded_cms_is_zero(tmp_path: Path) -> None:
    """CMS_counterfact = 1/30000 rounds to 0; the script drops the item
    and prints 1.0 where the unrounded mean of ratios is 15000.5."""
    full = np.full((101, 100), 255, np.uint8)
    gt, tiny = _cms_item(101, 100, 100, 1)  # |M'| = 10000, one pixel outside: CMS 1/30000
    data = _write_items(tmp_path, [
        {"m_c": full, "m_cf": full, "preds": {"edtl_orgi": full, "orgl_edti": full}},
        {"m_c": full, "m_cf": gt, "preds": {"edtl_orgi": full, "orgl_edti": tiny}},
    ])  # fmt: skip
    res = _score(tmp_path, data)
    assert res.samples[1]["CMS_counterfact"] == pytest.approx(1 / 30000, abs=1e-15)
    assert res.samples[1]["CCMS_item"] is None
    s = res.summary["all"]
    assert s["CCMS_item_mean"] == 1.0 and s["CCMS_item_n"] == 1
    assert s["CCMS"] == pytest.approx(1.0 / ((1 + 1 / 30000) / 2), abs=1e-12)  # paper: ratio of means


def test_ccms_item_uses_numpy_rounding() -> None:
    """round(np.float64, 4) (the script's call) is numpy's rounding, not Python's."""
    x = 159.18125  # numpy scales, rounds half to even and divides: 159.1812; Python: 159.1813
    assert script_round(x) == 159.1812 == round(np.float64(x), 4) and round(x, 4) == 159.1813
    rng = np.random.default_rng(3)
    for v in rng.integers(0, 10**6, 2000) / rng.integers(1, 10**5, 2000):
        assert script_round(v) == round(np.float64(v), 4)

"""masklens vs HalluSegBench's official scripts, run side by side on generated fixtures.

Skipped unless ``MASKLENS_OFFICIAL`` names a folder holding, unmodified and never committed
here, ``generate_json.py``, ``get_consistency.py`` and ``get_hallucination.py``
(PLAN-Lab/HalluSegBench; they need numpy, opencv, tqdm). The fixtures store masks in every
PNG mode (grey, grey + alpha, RGB with faint colours, opaque RGBA, 16-bit), predictions at
other resolutions, missing PNGs, empty masks and a CMS_counterfact that rounds to 0. Run with the CAFE/SAM 3 checks: ``MASKLENS_OFFICIAL=<folder> pytest -m
crosscheck tests/metrics`` (docs/metrics.md).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from masklens.core.kinds.hallusegbench.kind import KIND, load_hallusegbench, load_prediction_dir
from masklens.core.kinds.hallusegbench.metrics import script_round
from masklens.core.scoring.contract import score

OFFICIAL = os.environ.get("MASKLENS_OFFICIAL")
SCRIPTS = ("generate_json.py", "get_consistency.py", "get_hallucination.py")
pytestmark = [
    pytest.mark.crosscheck,
    pytest.mark.skipif(
        not OFFICIAL or not all((Path(OFFICIAL) / s).exists() for s in SCRIPTS),
        reason="set MASKLENS_OFFICIAL to a folder with HalluSegBench's " + ", ".join(SCRIPTS),
    ),
]
FOLDERS = ("orgl_orgi", "edtl_orgi", "orgl_edti", "edtl_edti")
MODES = ("L", "L_faint", "LA", "RGB_faint", "RGBA", "I16")


def _ellipse(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    yy, xx = np.mgrid[:h, :w]
    cy, cx = rng.uniform(0, h), rng.uniform(0, w)
    ry, rx = rng.uniform(2, h / 2), rng.uniform(2, w / 2)
    return ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1


def _write(path: Path, fg: np.ndarray, mode: str, rng: np.random.Generator) -> None:
    """Write a boolean mask in a PNG mode; background pixels get values that some readings
    count as foreground (alpha, faint colour, low 16-bit byte) but cv2.imread(p, 0) does not."""
    path.parent.mkdir(parents=True, exist_ok=True)
    h, w = fg.shape
    v = np.where(fg, 255, 0).astype(np.uint8)
    if mode == "L":
        Image.fromarray(v, "L").save(path)
    elif mode == "L_faint":  # foreground 1…255 (all foreground for both readings)
        Image.fromarray(np.where(fg, rng.integers(1, 256, (h, w)), 0).astype(np.uint8), "L").save(path)
    elif mode == "LA":
        Image.fromarray(np.dstack([v, np.full_like(v, 255)]), "LA").save(path)
    elif mode == "RGB_faint":  # background pixels (1, 0, 0): grey 0
        rgb = np.dstack([v, v, v])
        rgb[~fg & (rng.random((h, w)) < 0.3)] = (1, 0, 0)
        Image.fromarray(rgb, "RGB").save(path)
    elif mode == "RGBA":
        Image.fromarray(np.dstack([v, v, v, np.full_like(v, 255)]), "RGBA").save(path)
    else:  # 16-bit: background 0…255 (high byte 0), foreground ≥ 256
        a = np.where(fg, rng.integers(256, 65536, (h, w)), rng.integers(0, 256, (h, w)))
        assert cv2.imwrite(str(path), a.astype(np.uint16))


def _fixture(root: Path, seed: int, n: int) -> Path:
    rng = np.random.default_rng(seed)
    items = []
    for k in range(n):
        h, w = int(rng.integers(20, 80)), int(rng.integers(20, 80))
        stem, ann = f"img{k}", k + 1
        m_c = _ellipse(rng, h, w) if rng.random() > 0.03 else np.zeros((h, w), bool)
        m_cf = _ellipse(rng, h, w) if rng.random() > 0.08 else np.zeros((h, w), bool)
        if k == 0:  # CMS_counterfact = 1/(3·|M'|) < 5e-5: rounds to 0, the script drops the item
            h, w = 120, 100
            m_c, m_cf = np.ones((h, w), bool), np.zeros((h, w), bool)
            m_cf[:110] = True
        _write(root / "masks" / f"{stem}_{ann}.png", m_c, str(rng.choice(MODES)), rng)
        _write(root / "new_masks" / f"{stem}_{ann}.png", m_cf, str(rng.choice(MODES)), rng)
        for folder in FOLDERS:
            if k and rng.random() < 0.08:
                continue  # missing PNG
            gt = m_c if folder.endswith("orgi") else m_cf
            pred = gt ^ (_ellipse(rng, h, w) & (rng.random() < 0.7))
            if k == 0:
                pred = m_c if folder == "edtl_orgi" else np.zeros((h, w), bool)
                pred[115, 0] = folder == "orgl_edti"  # one pixel outside M'
            elif rng.random() < 0.3:  # stored at another resolution (INTER_NEAREST back)
                f = float(rng.choice([0.5, 0.75, 1.3, 2.0]))
                size = (max(1, round(w * f)), max(1, round(h * f)))
                pred = cv2.resize(pred.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST) > 0
            _write(root / "pred" / folder / f"{stem}_{ann}_mask.png", pred, str(rng.choice(MODES)), rng)
        items.append({"factual_image_path": f"images/{stem}.jpg", "factual_mask_path": f"masks/{stem}_{ann}.png",
                      "counterfactual_image_path": f"edited/{stem}_{ann}.png",
                      "counterfactual_mask_path": f"new_masks/{stem}_{ann}.png", "ann_id": ann})  # fmt: skip
    data = root / "data.json"
    data.write_text(json.dumps(items))
    return data


def _run_official(root: Path, data: Path) -> tuple[list[dict], str]:
    run = root / "official.json"
    py = [sys.executable]
    off = Path(OFFICIAL)
    subprocess.run([*py, off / "generate_json.py", "--data_ann_path", data, "--output_json_path", run,
                    "--prediction_data_path", root / "pred"], check=True, capture_output=True)  # fmt: skip
    args = ["--json_path", run, "--base_path", root, "--pred_base_path", root / "pred"]
    out = subprocess.run([*py, off / "get_consistency.py", *args], check=True, capture_output=True, text=True)
    out2 = subprocess.run([*py, off / "get_hallucination.py", *args], check=True, capture_output=True, text=True)
    return json.loads(run.read_text()), out.stdout + out2.stdout


FIELDS = {  # official per-item field (rounded to 4 decimals) -> masklens record key
    "iou_orgl_orgi": "IoU_fact",
    "iou_edtl_orgi": "IoU_textual",
    "iou_orgl_edti": "IoU_visual",
    "consistency_1_minus_2": "dIoU_textual",
    "consistency_1_minus_3": "dIoU_visual",
    "score_edtl_orgi": "CMS_fact",
    "score_orgl_edti": "CMS_counterfact",
}


@pytest.mark.parametrize("seed", [0, 1])
def test_hallusegbench_against_official(tmp_path: Path, seed: int) -> None:
    data = _fixture(tmp_path, seed, 120)
    official, printed = _run_official(tmp_path, data)
    bench = load_hallusegbench(data, tmp_path)
    res = score(KIND, bench, load_prediction_dir(bench, tmp_path / "pred"))  # α = 3, as the script
    assert len(official) == len(res.samples)
    for item, ours in zip(official, res.samples, strict=True):
        for field, key in FIELDS.items():
            if ours[key] is None:
                assert field not in item, (item["ann_id"], field)
            else:  # the script rounds each value with round(np.float64, 4)
                assert item[field] == script_round(ours[key]), (item["ann_id"], field, item[field], ours[key])
    s = res.summary["all"]
    ratios = [i["score_edtl_orgi"] / i["score_orgl_edti"] for i in official
              if "score_edtl_orgi" in i and "score_orgl_edti" in i and i["score_orgl_edti"] != 0]  # fmt: skip
    assert s["CCMS_item_mean"] == sum(ratios) / len(ratios)  # the script's procedure, exactly
    assert s["CCMS_item_n"] == len(ratios) and official[0].get("score_orgl_edti") == 0.0
    mean_ratio = float(re.search(r"Mean ratio .*: (\S+)", printed).group(1))
    assert abs(mean_ratio - s["CCMS_item_mean"]) <= 5e-5
    for label, key in (("1. IOU", "IoU_fact"), ("2. IOU", "IoU_textual"), ("3. IOU", "IoU_visual"),
                       ("(1 - 2)", "dIoU_textual"), ("(1 - 3)", "dIoU_visual")):  # fmt: skip
        value = float(re.search(re.escape(label) + r".*mean = (\S+)", printed).group(1))
        assert abs(value - s[key]) <= 5e-5, (label, value, s[key])

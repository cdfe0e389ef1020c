"""Generated HalluSegBench image pairs whose edit leakage is known by construction."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def pair(seed: int, h: int = 64, w: int = 80, *, leak: int, inside: int, noise: int = 0):
    """I, I′ and masks: ``inside`` changed pixels in the object's box, ``leak`` changed pixels
    outside both masks; every other pixel differs by at most ``noise`` (≤ the threshold)."""
    rng = np.random.default_rng(seed)
    f = rng.integers(40, 200, size=(h, w, 3), dtype=np.int16)
    cf = f + rng.integers(-noise, noise + 1, size=f.shape)
    m_f = np.zeros((h, w), bool)
    m_f[10:30, 10:30] = True  # 400 px
    m_cf = np.zeros((h, w), bool)
    m_cf[20:40, 20:40] = True  # the new object sits elsewhere, partly overlapping
    edited = m_f | m_cf
    ins = np.flatnonzero(edited.ravel())[:inside]
    out = rng.choice(np.flatnonzero(~edited.ravel()), size=leak, replace=False)
    for idx in (ins, out):
        y, x = np.unravel_index(idx, (h, w))
        cf[y, x, rng.integers(0, 3, size=len(idx))] += 50  # one channel, well above the threshold
    return f.astype(np.uint8), np.clip(cf, 0, 255).astype(np.uint8), m_f, m_cf


def write_pairs(tmp_path: Path, leaks: list[int], inside: int = 200) -> tuple[Path, Path]:
    """A HalluSegBench benchmark (data.json, images, masks) whose items leak ``leaks`` pixels each, and a
    prediction folder of empty masks: (data.json, prediction folder)."""
    import cv2

    items = []
    for i, leak in enumerate(leaks):
        f, cf, m_f, m_cf = pair(i, leak=leak, inside=inside)
        for side, img, m in (("factual", f, m_f), ("counterfactual", cf, m_cf)):
            cv2.imwrite(str(tmp_path / f"{side}_{i}.png"), img[:, :, ::-1])
            cv2.imwrite(str(tmp_path / f"{side}_m{i}.png"), m.astype(np.uint8) * 255)
        items.append({"ann_id": i, "factual_image_path": f"factual_{i}.png", "factual_mask_path": f"factual_m{i}.png",
                      "counterfactual_image_path": f"counterfactual_{i}.png",
                      "counterfactual_mask_path": f"counterfactual_m{i}.png",
                      "factual_label": "cat", "counterfactual_label": "dog"})
        for folder in ("orgl_orgi", "edtl_orgi", "orgl_edti", "edtl_edti"):
            (tmp_path / "pred" / folder).mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(tmp_path / "pred" / folder / f"factual_{i}_{i}_mask.png"), np.zeros(m_f.shape, np.uint8))
    (tmp_path / "data.json").write_text(json.dumps(items))
    return tmp_path / "data.json", tmp_path / "pred"

"""HalluSegBench metrics: IoU_fact/textual/visual, ΔIoU, CMS, CCMS (paper and official-script forms).

Notation (paper §4): an item has a factual image I with object c and mask M_c and
a counterfactual image I' where c was replaced by c' with mask M'_c'. The four
queries and the official prediction folders (``orgl`` = original label c,
``edtl`` = edited label c', ``orgi`` = original image I, ``edti`` = edited image I'):

=============  ==========  ==============  ===============================
folder         query       scored against  metric
=============  ==========  ==============  ===============================
``orgl_orgi``  c on I      M_c             IoU_fact
``edtl_orgi``  c' on I     M_c             IoU_textual, CMS_fact
``orgl_edti``  c on I'     M'_c'           IoU_visual, CMS_counterfact
``edtl_edti``  c' on I'    M'_c'           IoU_counterfact (masklens extra)
=============  ==========  ==============  ===============================

Everything here works on integer areas (|P|, |G|, |P ∩ G|), so α can change
without touching masks. No intermediate rounding; values are fractions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from masklens.core.kinds.common.stats import ci_halfwidth, mean_or_none, ratio_or_none

#: prediction folders in the official order, with the ground truth each is scored against
FOLDERS: tuple[str, ...] = ("orgl_orgi", "edtl_orgi", "orgl_edti", "edtl_edti")
GT_OF_FOLDER: Mapping[str, str] = {
    "orgl_orgi": "factual",
    "edtl_orgi": "factual",
    "orgl_edti": "counterfactual",
    "edtl_edti": "counterfactual",
}
#: COCO area thresholds (pixels of the factual ground-truth mask M_c)
SMALL_MAX = 32**2
MEDIUM_MAX = 96**2
SIZE_GROUPS: tuple[str, ...] = ("S", "M", "L")

#: per-item values whose means (with 95 % half-widths) are summarised
MEAN_METRICS: tuple[str, ...] = (
    "IoU_fact",
    "IoU_textual",
    "IoU_visual",
    "IoU_counterfact",
    "dIoU_textual",
    "dIoU_visual",
    "CMS_fact",
    "CMS_counterfact",
)


def iou_from_areas(pred_area: int, gt_area: int, inter: int) -> float:
    """|P ∩ G| / |P ∪ G|; 0.0 when the union is empty (official convention)."""
    union = pred_area + gt_area - inter
    return inter / union if union > 0 else 0.0


def cms(pred_area: int, gt_area: int, inter: int, alpha: float) -> float:
    """Confusion Mask Score (α|C| + |N|) / (α|M|), C = P ∩ M, N = P \\ M; 0.0 when |M| = 0."""
    if gt_area <= 0:
        return 0.0
    return (alpha * inter + (pred_area - inter)) / (alpha * gt_area)


def size_group(area: int) -> str:
    """COCO size bucket of a mask area: S (< 32²), M (< 96²), L (otherwise)."""
    if area < SMALL_MAX:
        return "S"
    if area < MEDIUM_MAX:
        return "M"
    return "L"


@dataclass(frozen=True)
class ItemOverlaps:
    """Threshold-free cache of one item: ground-truth areas and, per folder, (|P|, |P ∩ G|) or None."""

    gt_area: Mapping[str, int]  # "factual" -> |M_c|, "counterfactual" -> |M'_c'|
    preds: Mapping[str, tuple[int, int] | None] = field(default_factory=dict)
    resized: tuple[str, ...] = ()  # folders whose prediction was resized to its ground truth

    def pred(self, folder: str) -> tuple[int, int] | None:
        return self.preds.get(folder)


def item_metrics(ov: ItemOverlaps, alpha: float) -> tuple[dict[str, float | None], dict[str, str]]:
    """Per-item values and, for each None, the reason (JSON never holds NaN)."""
    values: dict[str, float | None] = {}
    why: dict[str, str] = {}

    def iou_of(folder: str) -> float | None:
        p = ov.pred(folder)
        if p is None:
            return None
        return iou_from_areas(p[0], ov.gt_area[GT_OF_FOLDER[folder]], p[1])

    def cms_of(folder: str) -> float | None:
        p = ov.pred(folder)
        if p is None:
            return None
        return cms(p[0], ov.gt_area[GT_OF_FOLDER[folder]], p[1], alpha)

    for key, folder in (
        ("IoU_fact", "orgl_orgi"),
        ("IoU_textual", "edtl_orgi"),
        ("IoU_visual", "orgl_edti"),
        ("IoU_counterfact", "edtl_edti"),
    ):
        values[key] = iou_of(folder)
        if values[key] is None:
            why[key] = f"prediction {folder} missing"
    for key, other in (("dIoU_textual", "IoU_textual"), ("dIoU_visual", "IoU_visual")):
        a, b = values["IoU_fact"], values[other]
        values[key] = a - b if a is not None and b is not None else None
        if values[key] is None:
            why[key] = "needs both predictions"
    values["CMS_fact"] = cms_of("edtl_orgi")
    values["CMS_counterfact"] = cms_of("orgl_edti")
    for key, folder in (("CMS_fact", "edtl_orgi"), ("CMS_counterfact", "orgl_edti")):
        if values[key] is None:
            why[key] = f"prediction {folder} missing"
    f, c = values["CMS_fact"], values["CMS_counterfact"]
    values["CCMS_item"] = None
    if f is None or c is None:
        why["CCMS_item"] = "needs both CMS"
    elif script_round(c) == 0:
        why["CCMS_item"] = "CMS_counterfact rounds to 0 at 4 decimals (the official script drops the item)"
    else:
        values["CCMS_item"] = script_round(f) / script_round(c)
    return values, why


def script_round(value: float) -> float:
    """``round(x, 4)`` of the official ``get_hallucination.py`` on its numpy float64 CMS
    (numpy's rounding, which differs from Python's ``round`` on some floats)."""
    return float(np.round(np.float64(value), 4))


def summarize_items(items: Sequence[Mapping[str, Any]]) -> dict[str, float | int | None]:
    """Group summary from per-item value dicts (as returned by :func:`item_metrics`).

    Means run over the items where the value exists (a missing prediction is
    skipped, not scored 0). CCMS = mean CMS_fact / mean CMS_counterfact (paper
    tables); CCMS_item_mean = the official get_hallucination.py "Mean ratio": the mean of
    the per-item ratios of the CMS rounded to 4 decimals, over items with both CMS whose
    rounded CMS_counterfact ≠ 0 (see :func:`item_metrics`). ``*_ci95`` are t-based
    95 % confidence half-widths of the means.
    """
    out: dict[str, float | int | None] = {"N": len(items)}
    for key in MEAN_METRICS:
        vals = [float(it[key]) for it in items if it.get(key) is not None]
        out[key] = mean_or_none(vals)
        out[f"{key}_ci95"] = ci_halfwidth(vals)
    out["CCMS"] = ratio_or_none(out["CMS_fact"], out["CMS_counterfact"])
    ratios = [float(it["CCMS_item"]) for it in items if it.get("CCMS_item") is not None]
    # the script's "Mean ratio": sum(ratio_list) / len(ratio_list), summed in item order
    out["CCMS_item_mean"] = sum(ratios) / len(ratios) if ratios else None
    out["CCMS_item_mean_ci95"] = ci_halfwidth(ratios)
    out["CCMS_item_n"] = len(ratios)
    return out

"""Built-in filter presets per benchmark kind, in each benchmark's own words.

Expressions are over the flattened per-sample readout keys (see gui/browser/filters.py); a preset
whose keys a kind's readouts do not have is not offered.
"""

from __future__ import annotations

from masklens.gui.browser.filters import AnyItem, register_column_labels, register_presets

register_presets("cafe", [
    ("negative prompt is TA-FP", "neg_class == TA-FP"),
    ("negative prompt is UA-FP", "neg_class == UA-FP"),
    ("positive prompt not TA-TP", "pos_class != TA-TP"),
    ("positive prompt missed (TA-FN)", "pos_class == TA-FN"),
    ("concept swap (aligned, ACS)", "ACS == 1"),
    ("concept swap (unaligned, UCS)", "UCS == 1"),
    ("soft swap (negative scored higher)", "SoftSwap == 1"),
])
register_presets("pcs", [
    ("image-level false positive", "IL == FP"),
    ("image-level false negative", "IL == FN"),
    ("local F1 < 0.5", "local_F1 < 0.5"),
])
register_presets("hallusegbench", [
    ("factual query missed (IoU_fact < 0.5)", "IoU_fact < 0.5"),
    ("hallucinated c on I' (CMS_counterfact > 0.8)", "CMS_counterfact > 0.8"),
    ("hallucinated c' on I (CMS_fact > 0.8)", "CMS_fact > 0.8"),
    ("textual ΔIoU > 0.5", "dIoU_textual > 0.5"),
    ("visual ΔIoU > 0.5", "dIoU_visual > 0.5"),
])
register_presets("cgebench", [
    ("IoGT < 0.5 at p1", "IoGT_p1 < 0.5"),
    ("IoGT < 0.5 at p2", "IoGT_p2 < 0.5"),
    ("IoGT < 0.5 at p3", "IoGT_p3 < 0.5"),
    ("exact zero at p3 (IoGT = 0)", "IoGT_p3 == 0"),
    ("cumulative c(3) < 0.5", "cumulative_p3 < 0.5"),
])
register_presets("r2sm", [
    ("amodal query answered with the modal mask",
     AnyItem("queries", "requested == amodal and wrong_type == true")),
    ("modal query answered with the amodal mask",
     AnyItem("queries", "requested == modal and wrong_type == true")),
    ("a query with IoU < 0.5", AnyItem("queries", "IoU < 0.5")),
    ("gIoU < 0.5", "gIoU < 0.5"),
])
register_presets("ovs", [
    ("errors at threshold 0.5 (err > 0)", "thresholds.0.5.err > 0"),
    ("front < 0.5 at threshold 0.5", "thresholds.0.5.front < 0.5"),
])

# CAFE's readout key TA_FN is the official script's "TA-FN" (every positive not TA-TP, UA-P
# included); the card, the report and the paper say "TA-FN" for TA_FN_paper only
register_column_labels("cafe", {"TA_FN": "not_TA_TP"})

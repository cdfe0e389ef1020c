"""The score threshold t and the column help of the cgF1 family, shared by the kinds scored
with it (SA-Co/Gold and CAFE)."""

from __future__ import annotations

from masklens.core.scoring.contract import ParamSpec

SCORE_THRESHOLD = ParamSpec(
    "score_threshold",
    "--score-threshold",
    0.5,
    help="accept a predicted instance when its score s ≥ t",
    symbol="t",
)


PCS_HELP: dict[str, str] = {
    "N": "image entries scored (is_instance_exhaustive, or field absent)",
    "cgF1": "mean over IoU 0.50:0.05:0.95 of pmF1 × IL_MCC (SAM 3 protocol)",
    "cgF1@0.5": "pmF1 × IL_MCC at IoU 0.5",
    "cgF1@0.75": "pmF1 × IL_MCC at IoU 0.75",
    "IL_MCC": "Matthews correlation of 'any accepted prediction' vs 'any non-crowd ground truth'",
    "pmF1": "positive micro F1, mean over IoU thresholds (FPs only of entries with gt and preds)",
    "pmF1@0.5": "positive micro F1 at IoU 0.5",
    "pmF1@0.75": "positive micro F1 at IoU 0.75",
    "IL_FPR": "image-level false-positive rate IL_FP / (IL_FP + IL_TN)",
    "IL_precision": "IL_TP / (IL_TP + IL_FP)",
    "IL_recall": "IL_TP / (IL_TP + IL_FN)",
    "IL_F1": "harmonic mean of IL precision and recall",
    "IL_TP": "entries with ground truth and an accepted prediction",
    "IL_FP": "entries without ground truth but with an accepted prediction",
    "IL_TN": "entries with neither",
    "IL_FN": "entries with ground truth but no accepted prediction",
    "positive_micro_precision": "TP / (TP + FPs of entries with gt and preds), mean over IoU thresholds",
    "positive_macro_F1": "mean local F1 of entries with gt and preds, mean over IoU thresholds",
    "precision": "micro precision over all entries, mean over IoU thresholds",
    "recall": "micro recall over all entries, mean over IoU thresholds",
    "F1": "micro F1 over all entries, mean over IoU thresholds",
}

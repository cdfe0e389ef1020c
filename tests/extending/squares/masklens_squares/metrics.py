"""The Squares metrics: IoU of the best accepted instance, hit at IoU ≥ 0.5, their means."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

HIT_IOU = 0.5


def best_accepted_iou(ious: Sequence[float], scores: Sequence[float], t: float) -> float:
    """The largest IoU among the instances with score s ≥ t (inclusive); 0.0 when none is accepted."""
    accepted = [iou for iou, s in zip(ious, scores, strict=True) if s >= t]
    return max(accepted, default=0.0)


def summary(best_ious: Sequence[float]) -> dict[str, float | int]:
    """N, mean best IoU and the share of samples hit (best IoU ≥ 0.5)."""
    a = np.asarray(best_ious, float)
    if a.size == 0:
        return {"N": 0, "mIoU": 0.0, "hit_rate": 0.0}
    return {"N": int(a.size), "mIoU": float(a.mean()), "hit_rate": float((a >= HIT_IOU).mean())}

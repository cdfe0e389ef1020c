"""Per-instance outcomes at a score threshold t and an IoU threshold τ: which predicted
instance is a true or false positive, which ground-truth instance was missed.

Per prompt, as in SAM 3's cgF1 (docs/metrics.md): predictions with s ≥ t are accepted; ONE
Hungarian assignment maximising the summed mask IoU pairs them with the prompt's non-crowd
ground truth; a pair with IoU ≥ τ is a TP (both sides), every other accepted prediction is an
FP and every other ground-truth instance an FN. Predictions with s < t are ``below_t``.
A negative prompt (the concept is absent: CAFE's and HalluSegBench's misleading prompts) has no
ground truth of its own, so each accepted instance is an FP; ``aligned`` then says whether it
covers the target it is scored against (IoU ≥ τ: CAFE's TA-FP rather than UA-FP).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from masklens.core.kinds.common.cgf1.matching import assignment, category_order
from masklens.core.masks import Mask, iou_matrix, resize_nearest
from masklens.core.schema import Benchmark, Prediction, Prompt, Role, Sample

#: roles whose prompt asks for something absent: their ground truth is empty
ABSENT_ROLES = frozenset({Role.NEGATIVE})

TP, FP, FN, BELOW = "tp", "fp", "fn", "below_t"


@dataclass(frozen=True)
class InstanceOutcome:
    """One predicted instance's outcome: ``eval`` is tp/fp/below_t, ``iou`` the IoU with its
    matched ground truth (tp/fp matched under τ) or the best IoU with any (unmatched),
    ``gt_index`` the matched ground-truth instance (None when unmatched)."""

    eval: str
    iou: float
    gt_index: int | None
    aligned: bool


@dataclass(frozen=True)
class GtOutcome:
    """One ground-truth instance's outcome: ``eval`` is tp/fn (None for a crowd instance),
    ``pred_index`` the matched prediction, ``iou`` the IoU of that match (0.0 without one)."""

    eval: str | None
    iou: float
    pred_index: int | None


@dataclass(frozen=True)
class PromptOutcomes:
    """The outcomes of one prompt's predicted and ground-truth instances."""

    predictions: list[InstanceOutcome]
    gts: list[GtOutcome]

    def counts(self) -> dict[str, int]:
        return {
            TP: sum(o.eval == TP for o in self.predictions),
            FP: sum(o.eval == FP for o in self.predictions),
            FN: sum(o.eval == FN for o in self.gts),
        }


def gt_masks(sample: Sample, prompt: Prompt) -> tuple[list[Mask], list[bool]]:
    """The instances a prompt should find and their crowd flags: its ground truth's masks, none
    for a negative prompt or a prompt without ground truth (an OVS entry absent from the image)."""
    if prompt.role in ABSENT_ROLES or prompt.gt is None or prompt.gt not in sample.gts:
        return [], []
    gt = sample.gts[prompt.gt]
    return list(gt.masks), [bool(gt.crowd and gt.crowd[i]) for i in range(len(gt.masks))]


def target_masks(sample: Sample, prompt: Prompt) -> list[Mask]:
    """What a prompt is scored against (also for a negative prompt: the target it must avoid)."""
    if prompt.gt is None or prompt.gt not in sample.gts:
        return []
    gt = sample.gts[prompt.gt]
    return [m for i, m in enumerate(gt.masks) if not (gt.crowd and gt.crowd[i])]


def _fit(masks: list[Mask], height: int, width: int) -> list[Mask]:
    return [m if m.shape == (height, width) else resize_nearest(m, height, width) for m in masks]


def prompt_outcomes(
    sample: Sample, prompt: Prompt, prediction: Prediction | None, t: float, tau: float
) -> PromptOutcomes:
    """The outcomes of ``prediction``'s instances and the prompt's ground truth at (t, τ)."""
    image = sample.images[prompt.image]
    insts = prediction.instances if prediction is not None else []
    masks = _fit([i.mask for i in insts], image.height, image.width)
    gts, crowd = gt_masks(sample, prompt)
    real = [k for k, c in enumerate(crowd) if not c]
    accepted = [k for k, i in enumerate(insts) if float(i.score) >= t]
    is_accepted = set(accepted)
    ious = iou_matrix(masks, _fit([gts[k] for k in real], image.height, image.width)) \
        if masks and real else np.zeros((len(masks), len(real)))
    pairs: dict[int, tuple[int, float]] = {}  # prediction -> (gt among `real`, IoU)
    if accepted and real:
        # the scorer's matching: instances in SAM 3's category order (a tie between equally good
        # assignments resolves as it did for the record's TP counts), the cards' assignment
        rows = [accepted[i] for i in category_order([insts[k].category for k in accepted])]
        assert prompt.gt is not None, "real instances are those of the prompt's ground truth"
        cats = sample.gts[prompt.gt].meta.get("category_ids") or [None] * len(gts)
        cols = category_order([cats[k] for k in real])
        sub = ious[np.ix_(rows, cols)]
        pairs = {rows[r]: (cols[c], float(sub[r, c])) for r, c in assignment(sub)}
    targets = target_masks(sample, prompt) if prompt.role in ABSENT_ROLES else []
    aligned_iou = iou_matrix(masks, _fit(targets, image.height, image.width)).max(axis=1) \
        if masks and targets else np.zeros(len(masks))
    preds: list[InstanceOutcome] = []
    gt_out: dict[int, GtOutcome] = {}
    for k in range(len(insts)):
        best_iou = float(ious[k].max()) if real else float(aligned_iou[k])
        if k not in is_accepted:
            preds.append(InstanceOutcome(BELOW, best_iou, None, best_iou >= tau))
        elif k in pairs and pairs[k][1] >= tau:
            j, v = pairs[k]
            preds.append(InstanceOutcome(TP, v, real[j], True))
            gt_out[real[j]] = GtOutcome(TP, v, k)
        else:
            preds.append(InstanceOutcome(FP, best_iou, None, best_iou >= tau))
    gts_out = [
        GtOutcome(None, 0.0, None) if crowd[i] else gt_out.get(i, GtOutcome(FN, 0.0, None))
        for i in range(len(gts))
    ]
    return PromptOutcomes(preds, gts_out)


def unique_prompts(benchmark: Benchmark) -> Iterator[tuple[Sample, Prompt]]:
    """Every prompt once, with the first sample that holds it (a CAFE positive may be in two
    pairs)."""
    seen: set[str] = set()
    for sample in benchmark.samples:
        for prompt in sample.prompts:
            if prompt.id not in seen:
                seen.add(prompt.id)
                yield sample, prompt

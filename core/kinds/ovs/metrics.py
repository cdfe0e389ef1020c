"""Mask-wise OVS protocol: front / back / err per threshold, τ*, AUC, out-matched pairs, ambiguity graph.

Follows Algorithm 1 of "Revisit the open nature of open vocabulary semantic
segmentation" (see docs/metrics.md for every reading of the paper made here).
Per image i and threshold τ ∈ {0.1, …, 0.9}, B(τ)_{i,c} = {score ≥ τ}:

* for each class c with ground truth in i (C_true(i)) the binary confusion
  TP/FP/FN/TN of B(τ)_{i,c} against M_{i,c} is added to CM_{τ,c};
* the non-empty masks of classes not in C_true(i) are matched one-to-one to the
  ground-truth masks (Hungarian on IoU); pairs with IoU > τ_AV are *out-matched*
  (AV_{τ}[gt class, predicted class] += 1) and removed;
* each remaining mask adds err_{i,c} = |B(τ)_{i,c}| / (H·W) to EM_{τ,c};
  err_τ = (1/|C|) Σ_c EM_{τ,c} (Eq. 10, EM_{τ,c} the mean of err_{i,c} over all
  images; None when no mask remains, the paper's "NULL"), see :func:`summarize_threshold`.

This module works on the cached integer areas and IoU matrices only
(:class:`ImageOverlaps`), so τ_AV can change without touching masks.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from masklens.core.kinds.common.stats import mean_or_none

#: the protocol's thresholds, exactly 0.1 … 0.9
THRESHOLDS: tuple[float, ...] = tuple(round(k / 10, 1) for k in range(1, 10))
ClassId = Hashable


@dataclass(frozen=True)
class ThresholdOverlaps:
    """One image at one threshold: predicted areas, intersections with same-class GT, IoUs of the rest."""

    pred_area: Mapping[ClassId, int]  # non-empty predicted masks only
    inter: Mapping[ClassId, int]  # |B_c ∩ M_c| for c in C_true(i)
    rem_classes: tuple[ClassId, ...] = ()  # non-empty predictions of classes not in C_true(i)
    rem_iou: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # rem × gt classes


@dataclass(frozen=True)
class ImageOverlaps:
    """Threshold-free cache of one image: pixel count, GT areas, one entry per threshold."""

    n_pixels: int
    gt_area: Mapping[ClassId, int]  # non-empty ground truth only (C_true(i), in order)
    per_threshold: tuple[ThresholdOverlaps, ...]
    #: (threshold index, τ_AV) -> ImageReadout, ("front", k) -> image front; the rest is immutable
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def gt_classes(self) -> tuple[ClassId, ...]:
        return tuple(self.gt_area)


def outmatch(
    rem_classes: Sequence[ClassId], gt_classes: Sequence[ClassId], iou: np.ndarray, tau_av: float
) -> list[tuple[ClassId, ClassId, float]]:
    """One-to-one out-matched pairs (gt class, predicted class, IoU) with IoU > τ_AV.

    Hungarian assignment maximising the summed IoU over the edges that pass
    τ_AV (scipy ``linear_sum_assignment``); order: by ground-truth class order.
    """
    if iou.size == 0:
        return []
    passing = iou > tau_av
    if not passing.any():
        return []
    rows, cols = np.nonzero(passing)
    if len(set(rows.tolist())) < len(rows) or len(set(cols.tolist())) < len(cols):
        # competing edges: the assignment decides (otherwise the passing edges already are one-to-one)
        from scipy.optimize import linear_sum_assignment  # lazy: slow to import

        weights = np.where(passing, iou, 0.0)
        rows, cols = linear_sum_assignment(weights, maximize=True)
        keep = passing[rows, cols]
        rows, cols = rows[keep], cols[keep]
    pairs = [(gt_classes[c], rem_classes[r], float(iou[r, c])) for r, c in zip(rows.tolist(), cols.tolist(), strict=True)]
    order = {g: k for k, g in enumerate(gt_classes)}
    return sorted(pairs, key=lambda p: order[p[0]])


@dataclass
class ImageReadout:
    """One image at one threshold for a given τ_AV: out-matched pairs and err contributions."""

    pairs: list[tuple[ClassId, ClassId, float]]
    err: dict[ClassId, float]  # err_{i,c} of the remaining (unmatched) predicted masks


def image_readout(ov: ImageOverlaps, k: int, tau_av: float) -> ImageReadout:
    """Out-matching and err of one image at threshold index k (memoised per (k, τ_AV))."""
    key = (k, float(tau_av))
    hit = ov.memo.get(key)
    if hit is not None:
        return hit
    t = ov.per_threshold[k]
    pairs = outmatch(t.rem_classes, ov.gt_classes, t.rem_iou, tau_av)
    matched = {p for _, p, _ in pairs}
    err = {c: t.pred_area[c] / ov.n_pixels for c in t.rem_classes if c not in matched}
    out = ImageReadout(pairs, err)
    if len(ov.memo) > 96:  # a slider visits many τ_AV values; keep the cache small
        ov.memo.clear()
    ov.memo[key] = out
    return out


def image_front(ov: ImageOverlaps, k: int) -> float | None:
    """Mean per-class foreground IoU of one image (its own GT classes); None without GT."""
    key = ("front", k)
    if key not in ov.memo:
        t = ov.per_threshold[k]
        vals = []
        for c, g in ov.gt_area.items():
            i = t.inter.get(c, 0)
            vals.append(i / (t.pred_area.get(c, 0) + g - i))
        ov.memo[key] = mean_or_none(vals)
    return ov.memo[key]


@dataclass
class ThresholdSummary:
    front: float | None
    back: float | None
    err: float | None  # Eq. 10: Σ_{i,c} err_{i,c} / (N · |C|); None when no mask remains
    err_class_mean: float | None  # mean over classes with remaining masks of their mean err
    err_mask_mean: float | None  # mean over all remaining masks
    err_rate: float | None  # Σ err_{i,c} / (N_images · |V|)
    outmatched: int
    av: Counter  # (gt class, predicted class) -> count


@dataclass
class OvsSummary:
    per_threshold: list[ThresholdSummary]
    tau_star_index: int | None
    auc: float | None
    n_images: int
    n_classes: int  # |C|: classes with ground truth somewhere
    vocabulary_size: int

    @property
    def tau_star(self) -> float | None:
        return None if self.tau_star_index is None else THRESHOLDS[self.tau_star_index]


def confusion_scores(overlaps: Sequence[ImageOverlaps], k: int) -> tuple[float | None, float | None, int]:
    """(front_τ, back_τ, |C|) from the dataset-level binary confusion per class (τ_AV-free)."""
    tp: Counter = Counter()
    fp: Counter = Counter()
    fn: Counter = Counter()
    tn: Counter = Counter()
    for ov in overlaps:
        t = ov.per_threshold[k]
        for c, g in ov.gt_area.items():
            i = t.inter.get(c, 0)
            a = t.pred_area.get(c, 0)
            tp[c] += i
            fp[c] += a - i
            fn[c] += g - i
            tn[c] += ov.n_pixels - a - g + i
    classes = list(tp.keys() | fn.keys())
    fronts = [tp[c] / (tp[c] + fp[c] + fn[c]) for c in classes if tp[c] + fp[c] + fn[c] > 0]
    backs = [tn[c] / (tn[c] + fp[c] + fn[c]) for c in classes if tn[c] + fp[c] + fn[c] > 0]
    return mean_or_none(fronts), mean_or_none(backs), len(classes)


def summarize_threshold(
    overlaps: Sequence[ImageOverlaps],
    readouts: Sequence[ImageReadout],
    k: int,
    vocabulary_size: int,
    confusion: tuple[float | None, float | None, int] | None = None,
) -> ThresholdSummary:
    """front_τ, back_τ (means over classes of the dataset-level CM), err_τ, AV_τ.

    err_τ = (1/|C|) Σ_c EM_{τ,c} (Eq. 10), |C| the classes with ground truth somewhere (as in
    front_τ), EM_{τ,c} = (1/N) Σ_i err_{i,c} (0 where c left no remaining mask) and the sum
    over every class that left a remaining mask, annotated somewhere or not (reading: the
    paper's joint-vocabulary results count the extra words' errors); None when no mask
    remains at all (the paper's NULL).
    ``err_class_mean`` = (1/|C_err|) Σ_{c∈C_err} (mean err_{i,c} over the images where c
    left one), C_err the classes that left one (masklens' earlier reading);
    ``err_mask_mean`` averages over masks; ``err_rate`` = Σ err_{i,c} / (N_images · |V|).

    ``confusion`` may pass a cached :func:`confusion_scores` (it does not depend on τ_AV).
    """
    front, back, _ = confusion if confusion is not None else confusion_scores(overlaps, k)
    per_class: dict[ClassId, list[float]] = {}
    for r in readouts:
        for c, e in r.err.items():
            per_class.setdefault(c, []).append(e)
    errs = [e for v in per_class.values() for e in v]
    av: Counter = Counter()
    for r in readouts:
        for g, p, _ in r.pairs:
            av[(g, p)] += 1
    n = len(overlaps)
    n_classes = len(set().union(*(ov.gt_area.keys() for ov in overlaps)))
    return ThresholdSummary(
        front=front,
        back=back,
        err=math.fsum(errs) / (n * n_classes) if errs and n_classes else None,
        err_class_mean=mean_or_none(mean_or_none(v) or 0.0 for v in per_class.values()),
        err_mask_mean=mean_or_none(errs),
        err_rate=math.fsum(errs) / (n * vocabulary_size) if n and vocabulary_size else None,
        outmatched=sum(av.values()),
        av=av,
    )


def best_threshold(fronts: Sequence[float | None], errs: Sequence[float | None]) -> int | None:
    """Index of τ* = argmax √(front² + (1 − err)²); the lowest τ wins ties; None if no front.

    A threshold without remaining masks (err None) counts err = 0.
    """
    best, best_val = None, -1.0
    for k, (f, e) in enumerate(zip(fronts, errs, strict=True)):
        if f is None:
            continue
        val = math.hypot(f, 1.0 - (e or 0.0))
        if val > best_val:
            best, best_val = k, val
    return best


def auc_front_err(fronts: Sequence[float | None], errs: Sequence[float | None]) -> float | None:
    """ROC-like area under front (y) against err (x), in [0, 1].

    The curve joins the upper envelope of the points (err_τ, front_τ): a point is
    dropped when another has at most its err and at least its front (it is dominated:
    a worse threshold must not lower the area, so it adds no step). It starts at
    (0, 0) — τ → 1, nothing predicted — joins the remaining points by increasing err
    with straight lines (trapezoidal rule) and is extended flat to err = 1. A model
    with no error and front f at every threshold scores f; error pulls the area down.
    A threshold without remaining masks (err None) sits at err = 0.
    """
    best: dict[float, float] = {}
    for f, e in zip(fronts, errs, strict=True):
        if f is not None:
            x = min(max(float(e or 0.0), 0.0), 1.0)  # no remaining masks: err 0
            best[x] = max(best.get(x, 0.0), float(f))
    if not best:
        return None
    pts, top = [], -1.0
    for x, y in sorted(best.items()):  # by err; a point with no better front is dominated
        if y > top:
            pts.append((x, y))
            top = y
    xs = [0.0] + [x for x, _ in pts] + [1.0]
    ys = [0.0] + [y for _, y in pts] + [pts[-1][1]]
    return float(math.fsum((xs[j + 1] - xs[j]) * (ys[j + 1] + ys[j]) / 2 for j in range(len(xs) - 1)))


def summarize(
    overlaps: Sequence[ImageOverlaps],
    readouts: Sequence[Sequence[ImageReadout]],
    vocabulary_size: int,
    confusion: Sequence[tuple[float | None, float | None, int]] | None = None,
) -> OvsSummary:
    """All thresholds; ``readouts[i][k]`` is image i at threshold k; ``confusion[k]`` optional cache."""
    per = [
        summarize_threshold(overlaps, [r[k] for r in readouts], k, vocabulary_size,
                            confusion[k] if confusion is not None else None)
        for k in range(len(THRESHOLDS))
    ]
    fronts = [s.front for s in per]
    errs = [s.err for s in per]
    classes = set().union(*(ov.gt_area.keys() for ov in overlaps)) if overlaps else set()
    return OvsSummary(
        per_threshold=per,
        tau_star_index=best_threshold(fronts, errs),
        auc=auc_front_err(fronts, errs),
        n_images=len(overlaps),
        n_classes=len(classes),
        vocabulary_size=vocabulary_size,
    )


@dataclass
class AmbiguityGraph:
    """Undirected ambiguous-vocabulary graph and its modularity communities."""

    edges: list[tuple[str, str, int]]  # (a, b, weight) with a < b
    communities: list[list[str]]
    modularity: float | None


def ambiguity_graph(av: Mapping[tuple[str, str], int]) -> AmbiguityGraph:
    """Graph from AV counts (weight of {a, b} = AV[a, b] + AV[b, a]); communities by
    ``networkx.community.greedy_modularity_communities`` (deterministic, weighted).

    Communities are sorted by size (largest first), then by their first name;
    names within a community alphabetically.
    """
    import networkx as nx

    weights: Counter = Counter()
    for (g, p), n in av.items():
        if g == p or n <= 0:
            continue
        a, b = sorted((str(g), str(p)))
        weights[(a, b)] += int(n)
    edges = sorted((a, b, w) for (a, b), w in weights.items())
    if not edges:
        return AmbiguityGraph([], [], None)
    graph = nx.Graph()
    graph.add_nodes_from(sorted({n for a, b, _ in edges for n in (a, b)}))
    graph.add_weighted_edges_from(edges)
    comms = nx.community.greedy_modularity_communities(graph, weight="weight")
    groups = sorted((sorted(c) for c in comms), key=lambda c: (-len(c), c[0]))
    q = nx.community.modularity(graph, [set(c) for c in groups], weight="weight")
    return AmbiguityGraph(edges, groups, float(q))

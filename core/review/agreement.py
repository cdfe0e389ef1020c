"""Agreement between reviewers: Cohen's κ (two raters) and Fleiss' κ (two or more).

Both are computed with numpy from their textbook definitions:

- Cohen: κ = (p_o − p_e) / (1 − p_e), p_o the observed agreement, p_e = Σ_k p_1k p_2k
  from the two raters' marginal frequencies.
- Fleiss: for N items each rated by n raters into k categories with counts n_ij,
  P_i = (Σ_j n_ij² − n) / (n(n − 1)), P̄ = mean P_i, p_j = Σ_i n_ij / (N n),
  P̄_e = Σ_j p_j², κ = (P̄ − P̄_e) / (1 − P̄_e).

κ is undefined (None) when p_e = 1 (every rating in one category) or there are no
items. Fleiss' κ needs the same number of raters per item: :func:`agreement` uses
the items every reviewer rated (complete cases) and says how many that was.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from masklens.core.review.verdicts import Verdict


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's κ of two raters' labels for the same items (None when undefined)."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    if not a:
        return None
    cats = sorted(set(a) | set(b))
    idx = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(cats), len(cats)), dtype=np.float64)
    for x, y in zip(a, b, strict=True):
        table[idx[x], idx[y]] += 1
    return cohen_kappa_table(table)


def cohen_kappa_table(table: np.ndarray) -> float | None:
    """Cohen's κ from a k×k contingency table (rows rater 1, columns rater 2)."""
    t = np.asarray(table, dtype=np.float64)
    n = t.sum()
    if n == 0:
        return None
    po = np.trace(t) / n
    pe = float((t.sum(axis=1) / n) @ (t.sum(axis=0) / n))
    if np.isclose(pe, 1.0):
        return None
    return float((po - pe) / (1.0 - pe))


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' κ from an N×k matrix of how many raters put item i in category j."""
    m = np.asarray(counts, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] == 0:
        return None
    n_raters = m.sum(axis=1)
    if not np.allclose(n_raters, n_raters[0]) or n_raters[0] < 2:
        raise ValueError("Fleiss' κ needs the same number (≥ 2) of raters for every item")
    n = n_raters[0]
    p_i = ((m * m).sum(axis=1) - n) / (n * (n - 1))
    p_bar = p_i.mean()
    p_j = m.sum(axis=0) / m.sum()
    pe = float((p_j * p_j).sum())
    if np.isclose(pe, 1.0):
        return None
    return float((p_bar - pe) / (1.0 - pe))


@dataclass
class Agreement:
    """Agreement of a set of reviewers over the items (sample, prompt) they rated."""

    reviewers: list[str]
    items_total: int
    items_complete: int  # items every reviewer rated (Fleiss' κ is over these)
    fleiss: float | None
    observed: float | None  # share of complete items where all reviewers agree
    pairs: list[dict[str, object]] = field(default_factory=list)  # Cohen's κ per pair

    def to_json(self) -> dict[str, object]:
        return {
            "reviewers": self.reviewers,
            "items_total": self.items_total,
            "items_complete": self.items_complete,
            "fleiss_kappa": self.fleiss,
            "observed_agreement": self.observed,
            "pairs": self.pairs,
        }


def agreement(verdicts: Iterable[Verdict]) -> Agreement:
    """Cohen's κ for each pair of reviewers and Fleiss' κ over all, from current verdicts."""
    by_item: dict[tuple[str, str, str], dict[str, str]] = {}
    for v in verdicts:
        if v.verdict:
            by_item.setdefault((v.benchmark, v.sample_id, v.prompt_id), {})[v.reviewer] = v.verdict
    reviewers = sorted({r for item in by_item.values() for r in item})
    pairs = []
    for r1, r2 in combinations(reviewers, 2):
        both = [(it[r1], it[r2]) for it in by_item.values() if r1 in it and r2 in it]
        kappa = cohen_kappa([x for x, _ in both], [y for _, y in both]) if both else None
        pairs.append({"a": r1, "b": r2, "items": len(both), "cohen_kappa": kappa})
    complete = [it for it in by_item.values() if len(reviewers) >= 2 and len(it) == len(reviewers)]
    fleiss = observed = None
    if complete:
        cats = sorted({c for it in complete for c in it.values()})
        idx = {c: j for j, c in enumerate(cats)}
        m = np.zeros((len(complete), len(cats)))
        for i, it in enumerate(complete):
            for c in it.values():
                m[i, idx[c]] += 1
        fleiss = fleiss_kappa(m)
        observed = float(np.mean([len(set(it.values())) == 1 for it in complete]))
    return Agreement(reviewers, len(by_item), len(complete), fleiss, observed, pairs)


def disagreements(verdicts: Iterable[Verdict], corrections: Iterable[object] = ()) -> dict[str, dict[str, str]]:
    """Samples where reviewers differ -> reviewer -> what they said, side by side.

    A sample is listed when two reviewers' current verdicts on the same target (the sample or
    one prompt) differ, or when they corrected one of its instances differently
    (:func:`~masklens.core.review.corrections.correction_conflicts`). Each reviewer's text
    names their verdicts (``prompt: verdict`` for a prompt) and corrections of the sample.
    """
    from masklens.core.review.corrections import correction_conflicts, effective_corrections

    verdicts = [v for v in verdicts if v.verdict]
    corrections = effective_corrections(corrections)  # type: ignore[arg-type]
    by_item: dict[tuple[str, str], dict[str, str]] = {}
    for v in verdicts:
        by_item.setdefault((v.sample_id, v.prompt_id), {})[v.reviewer] = v.verdict
    listed = {sid for (sid, _p), per in by_item.items() if len(set(per.values())) > 1}
    listed |= {c.sample_id for c in correction_conflicts(corrections)}
    out: dict[str, dict[str, str]] = {}
    for sid in sorted(listed):
        said: dict[str, list[str]] = {}
        for v in verdicts:
            if v.sample_id == sid:
                said.setdefault(v.reviewer, []).append(f"{v.prompt_id}: {v.verdict}" if v.prompt_id else v.verdict)
        for c in corrections:
            if c.sample_id == sid:
                what = ("deleted" if c.mask is None else f"area {c.mask.area}") + (f", {c.tool}" if c.tool else "")
                inst = "new instance" if c.instance is None else f"instance {c.instance}"
                said.setdefault(c.reviewer, []).append(f"corrected {c.gt_key} {inst} ({what})")
        out[sid] = {r: "; ".join(parts) for r, parts in sorted(said.items())}
    return out

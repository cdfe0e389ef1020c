"""CAFE target-aware classification and its rates (AFPR, UFPR, IL_FPR, ACSR, UCSR, CSR, SoftSwap).

Pure functions on per-pair scores and IoUs (IoU of every predicted instance with the
positive image's target). Thresholds are inclusive: accepted ⇔ s ≥ t, aligned ⇔ IoU ≥ τ.
Classification is over all predicted instances of a prompt (see ``docs/metrics.md``):

* positive prompt — ``TA_TP`` when any instance is accepted and aligned; the official
  script (``tools/eval_cafe_metrics.py``) calls every other positive ``TA-FN``
  (``TA_FN`` here). The paper's Table 1 splits those further; masklens resolves it
  acceptance first, like the negative prompt: ``UA_P`` when some instance is accepted
  (none of them aligned), else ``TA_FN_paper`` when some (rejected) instance is aligned,
  else ``UA_FN``;
* negative prompt — ``TA_FP`` when any accepted instance is aligned, else ``UA_FP`` when
  any instance is accepted, else ``TN``;
* ``ACS`` = positive not TA-TP ∧ negative TA-FP; ``UCS`` = positive not TA-TP ∧ UA-FP;
* ``SoftSwap`` = max negative score > max positive score (strict; 0.0 with no instance).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

#: positive-prompt classes of the paper's Table 1 (acceptance-first resolution)
POSITIVE_CLASSES = ("TA-TP", "UA-P", "TA-FN", "UA-FN")
#: negative-prompt classes
NEGATIVE_CLASSES = ("TA-FP", "UA-FP", "TN")
#: per-pair 0/1 flags summed into counts
FLAG_KEYS = (
    "TA_TP", "TA_FN", "UA_P", "TA_FN_paper", "UA_FN",
    "TA_FP", "UA_FP", "TN", "ACS", "UCS", "SoftSwap",
)  # fmt: skip


#: one-line definitions of the CAFE pair metrics (tooltips, docs)
PAIR_HELP: dict[str, str] = {
    "N": "pairs (= negative prompts)",
    "TA_TP": "positive prompts with an instance s ≥ t and IoU ≥ τ",
    "TA_FN": "positive prompts that are not TA-TP (official script's TA-FN: UA_P + TA_FN_paper + UA_FN)",
    "UA_P": "paper: positive accepted (s ≥ t) but no accepted instance aligned",
    "TA_FN_paper": "paper: positive with no accepted instance but an aligned one (IoU ≥ τ, s < t)",
    "UA_FN": "paper: positive with no accepted and no aligned instance",
    "TA_FP": "negative prompts with an accepted, aligned instance",
    "UA_FP": "negative prompts with accepted instances, none aligned",
    "TN": "negative prompts with no accepted instance",
    "AFPR": "TA_FP / N",
    "UFPR": "UA_FP / N",
    "IL_FPR": "AFPR + UFPR (CAFE's image-level FPR over negative prompts)",
    "ACSR": "pairs with positive not TA-TP and negative TA-FP, / N",
    "UCSR": "pairs with positive not TA-TP and negative UA-FP, / N",
    "CSR": "ACSR + UCSR",
    "SoftSwap": "pairs whose max negative score > max positive score (strict), / N",
}


@dataclass(slots=True)
class PairScores:
    """Threshold-free inputs of one pair: instance scores and IoUs with the target."""

    pos_scores: tuple[float, ...]
    pos_ious: tuple[float, ...]
    neg_scores: tuple[float, ...]
    neg_ious: tuple[float, ...]

    @property
    def pos_max(self) -> float:
        return max(self.pos_scores, default=0.0)

    @property
    def neg_max(self) -> float:
        return max(self.neg_scores, default=0.0)


def positive_class(scores: Sequence[float], ious: Sequence[float], t: float, tau: float) -> str:
    """Paper class of a positive prompt: TA-TP, UA-P, TA-FN or UA-FN (acceptance first)."""
    accepted = aligned = False
    for s, v in zip(scores, ious, strict=True):
        if s >= t:
            if v >= tau:
                return "TA-TP"
            accepted = True
        elif v >= tau:
            aligned = True
    if accepted:
        return "UA-P"
    return "TA-FN" if aligned else "UA-FN"


def negative_class(scores: Sequence[float], ious: Sequence[float], t: float, tau: float) -> str:
    """Class of a negative prompt: TA-FP, UA-FP or TN."""
    unaligned = False
    for s, v in zip(scores, ious, strict=True):
        if s >= t:
            if v >= tau:
                return "TA-FP"
            unaligned = True
    return "UA-FP" if unaligned else "TN"


def classify_pair(pair: PairScores, t: float, tau: float) -> dict[str, int | str]:
    """Per-pair classes and 0/1 flags (keys of :data:`FLAG_KEYS`)."""
    pc = positive_class(pair.pos_scores, pair.pos_ious, t, tau)
    nc = negative_class(pair.neg_scores, pair.neg_ious, t, tau)
    lost = pc != "TA-TP"
    return {
        "pos_class": pc,
        "neg_class": nc,
        "TA_TP": int(not lost),
        "TA_FN": int(lost),
        "UA_P": int(pc == "UA-P"),
        "TA_FN_paper": int(pc == "TA-FN"),
        "UA_FN": int(pc == "UA-FN"),
        "TA_FP": int(nc == "TA-FP"),
        "UA_FP": int(nc == "UA-FP"),
        "TN": int(nc == "TN"),
        "ACS": int(lost and nc == "TA-FP"),
        "UCS": int(lost and nc == "UA-FP"),
        "SoftSwap": int(pair.neg_max > pair.pos_max),
    }


def aggregate(flags: Iterable[Mapping[str, int | str]]) -> dict[str, float | int | None]:
    """Counts and rates over per-pair flag records (see :func:`rates`)."""
    counts = dict.fromkeys(FLAG_KEYS, 0)
    n = 0
    for f in flags:
        n += 1
        for k in FLAG_KEYS:
            counts[k] += f[k]  # type: ignore[operator]
    return rates(counts, n)


def rates(counts: Mapping[str, int], n: int) -> dict[str, float | int | None]:
    """N, counts and rates; every rate divides by the number of pairs N.

    IL_FPR = AFPR + UFPR and CSR = ACSR + UCSR are computed as sums, as the official
    script does. With N = 0 the rates are None.
    """
    out: dict[str, float | int | None] = {"N": n}
    out.update({k: int(counts[k]) for k in FLAG_KEYS if k not in ("ACS", "UCS", "SoftSwap")})
    if n == 0:
        out.update(dict.fromkeys(("AFPR", "UFPR", "IL_FPR", "ACSR", "UCSR", "CSR", "SoftSwap")))
        return out
    afpr, ufpr = int(counts["TA_FP"]) / n, int(counts["UA_FP"]) / n
    acsr, ucsr = int(counts["ACS"]) / n, int(counts["UCS"]) / n
    out.update(
        AFPR=afpr,
        UFPR=ufpr,
        IL_FPR=afpr + ufpr,
        ACSR=acsr,
        UCSR=ucsr,
        CSR=acsr + ucsr,
        SoftSwap=int(counts["SoftSwap"]) / n,
    )
    return out


def _flags(pc: str, nc: str) -> dict[str, int | str]:
    empty = PairScores((), (), (), ())
    out = classify_pair(empty, 0.0, 0.0)  # keys in order; values replaced below
    lost = pc != "TA-TP"
    out.update(
        pos_class=pc, neg_class=nc, TA_TP=int(not lost), TA_FN=int(lost), UA_P=int(pc == "UA-P"),
        TA_FN_paper=int(pc == "TA-FN"), UA_FN=int(pc == "UA-FN"), TA_FP=int(nc == "TA-FP"),
        UA_FP=int(nc == "UA-FP"), TN=int(nc == "TN"), ACS=int(lost and nc == "TA-FP"),
        UCS=int(lost and nc == "UA-FP"),
    )  # fmt: skip
    del out["SoftSwap"]
    return out


#: flag records (all but SoftSwap) of each (positive class, negative class) code pair
CLASS_FLAGS: list[list[dict[str, int | str]]] = [
    [_flags(pc, nc) for nc in NEGATIVE_CLASSES] for pc in POSITIVE_CLASSES
]


@dataclass
class PairStack:
    """All pairs' scores and IoUs flattened, to classify every pair at once (vectorised)."""

    n: int
    pos: tuple[np.ndarray, np.ndarray, np.ndarray]  # scores, IoUs, owning pair
    neg: tuple[np.ndarray, np.ndarray, np.ndarray]
    soft: np.ndarray  # SoftSwap per pair (threshold-free)

    @classmethod
    def build(cls, pairs: Sequence[PairScores], soft: Sequence[int] | None = None) -> PairStack:
        def flat(scores: list[tuple[float, ...]], ious: list[tuple[float, ...]]):
            owner = np.repeat(np.arange(len(pairs)), [len(x) for x in scores])
            return (
                np.fromiter(chain.from_iterable(scores), dtype=np.float64, count=owner.size),
                np.fromiter(chain.from_iterable(ious), dtype=np.float64, count=owner.size),
                owner,
            )

        if soft is None:
            soft = [p.neg_max > p.pos_max for p in pairs]
        return cls(
            len(pairs),
            flat([p.pos_scores for p in pairs], [p.pos_ious for p in pairs]),
            flat([p.neg_scores for p in pairs], [p.neg_ious for p in pairs]),
            np.array(soft, dtype=bool),
        )

    def _any(self, owner: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.bincount(owner[mask], minlength=self.n) > 0

    def codes(self, t: float, tau: float) -> tuple[np.ndarray, np.ndarray]:
        """Per pair: index into POSITIVE_CLASSES and into NEGATIVE_CLASSES."""
        s, v, o = self.pos
        acc, ali = s >= t, v >= tau
        pc = np.where(
            self._any(o, acc & ali), 0,
            np.where(self._any(o, acc), 1, np.where(self._any(o, ali), 2, 3)),
        )  # fmt: skip
        s, v, o = self.neg
        acc, ali = s >= t, v >= tau
        nc = np.where(self._any(o, acc & ali), 0, np.where(self._any(o, acc & ~ali), 1, 2))
        return pc, nc


def code_counts(pc: np.ndarray, nc: np.ndarray, soft: np.ndarray) -> dict[str, int]:
    """Flag counts of the pairs given by their class codes."""
    h = np.bincount(pc * 3 + nc, minlength=12).reshape(4, 3).tolist()  # [positive][negative]
    pos = [sum(row) for row in h]
    neg = [sum(h[a][b] for a in range(4)) for b in range(3)]
    return {
        "TA_TP": pos[0], "TA_FN": pos[1] + pos[2] + pos[3], "UA_P": pos[1],
        "TA_FN_paper": pos[2], "UA_FN": pos[3], "TA_FP": neg[0], "UA_FP": neg[1], "TN": neg[2],
        "ACS": h[1][0] + h[2][0] + h[3][0], "UCS": h[1][1] + h[2][1] + h[3][1],
        "SoftSwap": int(np.count_nonzero(soft)),
    }  # fmt: skip

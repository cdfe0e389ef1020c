"""CAFE target-aware classification and its rates (AFPR, UFPR, IL_FPR, ACSR, UCSR, CSR, SoftSwap).

Pure functions on per-pair scores and IoUs (IoU of every predicted instance with the
positive image's target). Thresholds are inclusive: accepted ⇔ s ≥ t, aligned ⇔ IoU ≥ τ.
Classification is over all predicted instances of a prompt (see ``docs/metrics/cafe.md``):

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

#: positive-prompt classes of the paper's Table 1 (acceptance-first resolution)
POSITIVE_CLASSES = ("TA-TP", "UA-P", "TA-FN", "UA-FN")
#: negative-prompt classes
NEGATIVE_CLASSES = ("TA-FP", "UA-FP", "TN")
#: per-pair 0/1 flags summed into counts
FLAG_KEYS = (
    "TA_TP", "TA_FN", "UA_P", "TA_FN_paper", "UA_FN",
    "TA_FP", "UA_FP", "TN", "ACS", "UCS", "SoftSwap",
)  # fmt: skip


@dataclass(frozen=True)
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
    """Counts and rates over pairs; every rate divides by the number of pairs N.

    IL_FPR = AFPR + UFPR and CSR = ACSR + UCSR are computed as sums, as the official
    script does. With N = 0 the rates are None.
    """
    counts = dict.fromkeys(FLAG_KEYS, 0)
    n = 0
    for f in flags:
        n += 1
        for k in FLAG_KEYS:
            counts[k] += f[k]  # type: ignore[operator]
    out: dict[str, float | int | None] = {"N": n}
    out.update({k: counts[k] for k in FLAG_KEYS if k not in ("ACS", "UCS", "SoftSwap")})
    if n == 0:
        out.update(dict.fromkeys(("AFPR", "UFPR", "IL_FPR", "ACSR", "UCSR", "CSR", "SoftSwap")))
        return out
    afpr, ufpr = counts["TA_FP"] / n, counts["UA_FP"] / n
    acsr, ucsr = counts["ACS"] / n, counts["UCS"] / n
    out.update(
        AFPR=afpr,
        UFPR=ufpr,
        IL_FPR=afpr + ufpr,
        ACSR=acsr,
        UCSR=ucsr,
        CSR=acsr + ucsr,
        SoftSwap=counts["SoftSwap"] / n,
    )
    return out

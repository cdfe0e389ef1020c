"""How a readout's figures are written beside one another, Qt-free: the readout cards and the
canvas captions (:mod:`masklens.gui.views`) write them the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def fmt_pair(a: float, b: float, digits: int = 2) -> tuple[str, str]:
    """Two numbers compared in a reason ("s 0.75 ≥ t 0.50"): enough decimals that unequal values
    never print equal (0.499 vs 0.50 reads "0.499 < 0.500", not "0.50 < 0.50")."""
    for d in range(digits, 7):
        sa, sb = f"{a:.{d}f}", f"{b:.{d}f}"
        if (sa == sb) == (a == b):
            return sa, sb
    return repr(a), repr(b)


def owners(instances: Sequence[Mapping[str, float]]) -> tuple[int | None, int | None]:
    """Indices of the instance with the highest score and of the one with the highest IoU (the
    instances that ``max s`` and ``max IoU`` come from; the first on a tie)."""
    if not instances:
        return None, None
    idx = range(len(instances))
    return (max(idx, key=lambda k: float(instances[k]["score"])),
            max(idx, key=lambda k: float(instances[k]["iou"])))


def instance_note(index: int | None, decisive: int | None, instances: Sequence[Mapping[str, float]],
                  t: float, *, of_score: bool, gap: str = "  ") -> str:
    """After a max figure that comes from another instance than the decisive one (or from one not
    drawn), that instance's other number — "(its IoU 0.000)" after max s, "(its s 0.30 < t, not
    drawn)" after max IoU — so it is never read as the decisive instance's figure; ``gap``
    before it."""
    if index is None:
        return ""
    s, iou = float(instances[index]["score"]), float(instances[index]["iou"])
    if index == decisive and s >= t:
        return ""
    if of_score:
        return f"{gap}(its IoU {iou:.3f})"
    a, _ = fmt_pair(s, t)
    return f"{gap}(its s {a}{' < t, not drawn' if s < t else ''})"

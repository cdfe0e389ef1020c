"""Small statistics helpers shared by the metric families (means, ratios, confidence half-widths).

Everything returns ``None`` instead of NaN so results stay JSON-ready.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def mean_or_none(values: Iterable[float]) -> float | None:
    """Arithmetic mean, or None for an empty sequence."""
    vals = [float(v) for v in values]
    return math.fsum(vals) / len(vals) if vals else None


def ratio_or_none(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, or None when either is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return float(numerator) / float(denominator)


def sample_std(values: Sequence[float]) -> float | None:
    """Sample standard deviation (ddof = 1); None for fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    m = math.fsum(values) / n
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))


def t_quantile(confidence: float, dof: int) -> float:
    """Two-sided Student-t critical value t_{(1+confidence)/2, dof}."""
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2.0, dof))


def ci_halfwidth(values: Sequence[float], confidence: float = 0.95) -> float | None:
    """Half-width of the t-based confidence interval of the mean.

    ``t_{(1+c)/2, n-1} · s / √n`` with ``s`` the sample standard deviation
    (ddof = 1). None for fewer than two values. For n ≥ 100 this is within 1 %
    of the normal approximation ``1.96 · s / √n`` at c = 0.95.
    """
    s = sample_std(values)
    if s is None:
        return None
    n = len(values)
    return t_quantile(confidence, n - 1) * s / math.sqrt(n)

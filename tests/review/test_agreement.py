"""Cohen's and Fleiss' κ against hand-computed textbook examples."""

import numpy as np
import pytest

from masklens.core.review.agreement import agreement, cohen_kappa, cohen_kappa_table, fleiss_kappa
from masklens.core.review.verdicts import Verdict


def test_cohen_textbook_2x2():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o = .7, p_e = .5, κ = .4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa_table(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4)


def test_cohen_3x3_hand_computed():
    # table rows rater A, cols rater B; n = 100, p_o = .7
    t = np.array([[25, 5, 0], [5, 30, 10], [5, 5, 15]])
    # marginals A (.30 .45 .25), B (.35 .40 .25): p_e = .105 + .18 + .0625 = .3475
    assert cohen_kappa_table(t) == pytest.approx((0.7 - 0.3475) / (1 - 0.3475))


def test_cohen_edge_cases():
    assert cohen_kappa(["a", "b"], ["a", "b"]) == pytest.approx(1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # p_e = 1: undefined
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa(["a"], [])


def test_fleiss_wikipedia_example():
    # Fleiss (1971) style example: 10 items, 14 raters, 5 categories; κ ≈ 0.210
    m = np.array([
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ])
    # P̄ = 0.378, P̄e = 0.2128 (hand-computed column shares .143 .200 .279 .150 .229)
    pj = m.sum(0) / 140
    pi = ((m * m).sum(1) - 14) / (14 * 13)
    assert pi.mean() == pytest.approx(0.37802, abs=1e-5)
    assert (pj ** 2).sum() == pytest.approx(0.21275, abs=1e-5)
    assert fleiss_kappa(m) == pytest.approx(0.20993, abs=1e-5)
    with pytest.raises(ValueError):
        fleiss_kappa(np.array([[1, 1], [2, 1]]))


def test_fleiss_equals_cohen_like_perfect_and_chance():
    assert fleiss_kappa(np.array([[2, 0], [0, 2]])) == pytest.approx(1.0)
    # two raters always disagreeing on a balanced split: P̄ = 0, P̄e = .5 -> κ = -1
    assert fleiss_kappa(np.array([[1, 1], [1, 1]])) == pytest.approx(-1.0)


def _v(r, s, verdict, p=""):
    return Verdict("b", s, p, verdict, "", r, "2026-01-01T00:00:00Z", f"{r}{s}{p}")


def test_agreement_from_verdicts():
    vs = [
        _v("ann", "s1", "fine"), _v("bob", "s1", "fine"), _v("cat", "s1", "fine"),
        _v("ann", "s2", "gt_wrong"), _v("bob", "s2", "gt_wrong"), _v("cat", "s2", "model_wrong"),
        _v("ann", "s3", "model_wrong"), _v("bob", "s3", "fine"),  # cat did not rate s3
    ]
    ag = agreement(vs)
    assert ag.reviewers == ["ann", "bob", "cat"]
    assert (ag.items_total, ag.items_complete) == (3, 2)
    assert ag.observed == pytest.approx(0.5)
    # complete items: s1 (3 fine), s2 (2 gt_wrong, 1 model_wrong)
    m = np.array([[3, 0, 0], [0, 2, 1]])
    assert ag.fleiss == pytest.approx(fleiss_kappa(m))
    ab = next(p for p in ag.pairs if (p["a"], p["b"]) == ("ann", "bob"))
    assert ab["items"] == 3
    assert ab["cohen_kappa"] == pytest.approx(cohen_kappa(
        ["fine", "gt_wrong", "model_wrong"], ["fine", "gt_wrong", "fine"]))

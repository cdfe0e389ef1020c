"""Mask-wise OVS: hand-computed front/back/err per threshold, τ*, AUC, out-matching, graph."""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest

from masklens.core.kinds.ovs import metrics as ovs
from masklens.core.kinds.ovs.kind import KIND, load_ovs_annotations, load_ovs_predictions
from masklens.core.masks import Mask
from masklens.core.scoring.contract import Scorer, score

VOCAB = [{"id": 1, "name": "sofa"}, {"id": 2, "name": "couch"}, {"id": 3, "name": "floor"}, {"id": 4, "name": "lamp"}]


def _rle(arr: np.ndarray) -> dict:
    return Mask.from_array(arr).to_coco()


def build_golden(root: Path) -> tuple[Path, Path]:
    """Two 4x5 images; see test_summary_per_threshold for the hand computation."""
    root.mkdir(parents=True, exist_ok=True)
    z = lambda: np.zeros((4, 5), bool)  # noqa: E731
    sofa1, floor1 = z(), z()
    sofa1[0:2, 0:2] = True
    floor1[2:4, :] = True
    couch2, floor2 = z(), z()
    couch2[0:2, 0:4] = True
    floor2[3, :] = True
    ann = {
        "vocabulary": VOCAB,
        "images": [{"id": 1, "height": 4, "width": 5, "file_name": "a.png"},
                   {"id": 2, "height": 4, "width": 5, "file_name": "b.png"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "segmentation": _rle(sofa1)},
            {"id": 2, "image_id": 1, "category_id": 3, "segmentation": _rle(floor1)},
            {"id": 3, "image_id": 2, "category_id": 2, "segmentation": _rle(couch2)},
            {"id": 4, "image_id": 2, "category_id": 3, "segmentation": _rle(floor2)},
        ],
    }
    maps = {}
    s = np.zeros((4, 5))
    s[0:2, 0:2] = 0.8
    s[0, 2] = 0.3
    maps[(1, 1)] = s
    s = np.zeros((4, 5))
    s[0:2, 0:2] = 0.6
    maps[(1, 2)] = s  # couch on the sofa: out-matched up to τ = 0.6
    s = np.zeros((4, 5))
    s[2:4, :] = 0.9
    maps[(1, 3)] = s
    s = np.zeros((4, 5))
    s[0, 4] = 0.5
    maps[(1, 4)] = s  # a lamp that is not there: err up to τ = 0.5
    s = np.zeros((4, 5))
    s[0:2, 0:2] = 0.7
    maps[(2, 2)] = s
    s = np.zeros((4, 5))
    s[0:2, 0:4] = 0.4
    maps[(2, 1)] = s  # sofa on the couch: out-matched up to τ = 0.4
    preds = []
    (root / "maps").mkdir(exist_ok=True)
    for (img, cat), arr in maps.items():
        np.save(root / "maps" / f"{img}_{cat}.npy", arr)
        preds.append({"image_id": img, "category_id": cat, "score_map": f"maps/{img}_{cat}.npy"})
    a, p = root / "ann.json", root / "pred.json"
    a.write_text(json.dumps(ann))
    p.write_text(json.dumps({"thresholds": list(ovs.THRESHOLDS), "predictions": preds}))
    return a, p


@pytest.fixture()
def golden(tmp_path: Path):
    a, p = build_golden(tmp_path)
    bench = load_ovs_annotations(a)
    return bench, load_ovs_predictions(p, bench)


def approx(x) -> object:
    return pytest.approx(float(x), abs=1e-12)


# τ: (front, back, err_class_mean, outmatched); err_class_mean: the lamp's 1 px of 20 while it
# is predicted. err (Eq. 10: (1/|C|) Σ_c EM_c, EM_c = (1/N) Σ_i err_{i,c}, |C| = 3 annotated
# classes, N = 2 images) is 1/120 there (not err_class_mean).
EXPECTED = {
    "0.1": (F(59, 90), F(121, 144), F(1, 20), 2),
    "0.2": (F(59, 90), F(121, 144), F(1, 20), 2),
    "0.3": (F(59, 90), F(121, 144), F(1, 20), 2),
    "0.4": (F(13, 18), F(31, 36), F(1, 20), 2),
    "0.5": (F(13, 18), F(31, 36), F(1, 20), 1),
    "0.6": (F(13, 18), F(31, 36), None, 1),
    "0.7": (F(13, 18), F(31, 36), None, 0),
    "0.8": (F(5, 9), F(73, 90), None, 0),
    "0.9": (F(2, 9), F(67, 90), None, 0),
}


def test_summary_per_threshold(golden):
    bench, preds = golden
    summ = score(KIND, bench, preds).summary
    for key, (front, back, err, n_out) in EXPECTED.items():
        s = summ[key]
        assert (s["front"], s["back"], s["outmatched"]) == (approx(front), approx(back), n_out), key
        assert s["err_class_mean"] == (None if err is None else approx(err)), key
        assert s["err"] == (None if err is None else approx(F(1, 20) / (2 * 3))), key
        assert s["err_rate"] == approx(F(1, 160) if err else 0), key  # Σ err / (2 images · 4 entries)
    assert summ["0.1"]["err_mask_mean"] == approx(F(1, 20))
    assert summ["0.7"]["err_mask_mean"] is None


def test_best_threshold_auc_and_graph(golden):
    bench, preds = golden
    res = score(KIND, bench, preds)
    s = res.summary["all"]
    # √(front² + (1 − err)²) peaks at 0.6 and 0.7 (front 13/18, err 0): the lower wins
    assert s["tau_star"] == 0.6
    assert (s["front"], s["err"], s["outmatched"]) == (approx(F(13, 18)), None, 1)  # no mask remains
    assert s["AUC"] == approx(F(13, 18))  # upper envelope at err = 0 and 1/160 is 13/18
    assert (s["N"], s["classes"], s["vocabulary"]) == (2, 3, 4)
    assert s["communities"] == 1 and s["modularity"] == approx(0) and s["community_rate"] == 0.25
    graph = res.extras["ambiguity_graph"]
    assert graph["edges"] == [["couch", "sofa", 1]] and graph["communities"] == [["couch", "sofa"]]
    assert res.extras["outmatched_pairs"]["0.4"] == [["couch", "sofa", 1], ["sofa", "couch", 1]]
    assert res.extras["curve"][5] == [0.6, None, approx(F(13, 18))]
    assert res.extras["curve"][3] == [0.4, approx(F(1, 120)), approx(F(13, 18))]


def test_sample_records(golden):
    bench, preds = golden
    first = score(KIND, bench, preds).samples[0]
    assert first["gt_classes"] == ["sofa", "floor"]
    t1 = first["thresholds"]["0.1"]
    assert t1["outmatched"] == [["sofa", "couch", 1.0]]
    assert t1["err"] == approx(F(1, 20)) and t1["predicted"] == 4
    assert t1["front"] == approx((F(4, 5) + 1) / 2)


def test_av_threshold_is_strict_and_rescoring_is_cheap(golden):
    bench, preds = golden
    scorer = Scorer(KIND, bench, preds)
    assert scorer.rescore({"av_threshold": 0.99}).summary["0.1"]["outmatched"] == 2
    none = scorer.rescore({"av_threshold": 1.0}).summary  # IoU 1 is not > 1
    assert none["0.1"]["outmatched"] == 0
    # unmatched couch (4 px) and sofa (8 px) now count as errors beside the lamp (1 px)
    assert none["0.1"]["err_class_mean"] == approx(F(1 + 4 + 8, 20) / 3)  # mean over the 3 classes
    assert none["0.1"]["err"] == approx(F(1 + 4 + 8, 20) / (2 * 3))  # Eq. 10: 2 images, |C| = 3
    assert none["0.1"]["err_rate"] == approx(F(1 + 4 + 8, 20) / 8)


def test_outmatch_is_one_to_one_hungarian():
    iou = np.array([[0.9, 0.0], [0.8, 0.75], [0.72, 0.0]])  # rows: predicted, cols: GT
    pairs = ovs.outmatch(("a", "b", "c"), ("X", "Y"), iou, 0.7)
    assert pairs == [("X", "a", 0.9), ("Y", "b", 0.75)]
    assert ovs.outmatch(("a",), ("X",), np.array([[0.75]]), 0.75) == []
    assert ovs.outmatch((), ("X",), np.zeros((0, 1)), 0.7) == []


def test_best_threshold_and_auc_units():
    assert ovs.best_threshold([0.5, 0.6, None], [0.1, 0.3, None]) == 0
    assert ovs.best_threshold([None], [None]) is None
    fronts = [0.5, 0.6] + [None] * 7
    errs = [0.1, 0.3] + [None] * 7
    assert ovs.auc_front_err(fronts, errs) == pytest.approx(0.1 * 0.25 + 0.2 * 0.55 + 0.7 * 0.6)
    assert ovs.auc_front_err([0.7] * 9, [0.0] * 9) == pytest.approx(0.7)
    assert ovs.auc_front_err([None] * 9, [None] * 9) is None


def test_graph_communities_are_deterministic():
    av = {("sofa", "couch"): 3, ("couch", "sofa"): 1, ("grass", "lawn"): 2, ("circle", "disc"): 1,
          ("disc", "ball"): 1}
    g1, g2 = ovs.ambiguity_graph(av), ovs.ambiguity_graph(dict(reversed(list(av.items()))))
    assert g1 == g2
    assert ["couch", "sofa", 4] in [list(e) for e in g1.edges]
    assert sorted(map(sorted, g1.communities)) == [["ball", "circle", "disc"], ["couch", "sofa"], ["grass", "lawn"]]
    assert g1.communities[0] == ["ball", "circle", "disc"]
    assert 0 < g1.modularity < 1
    assert ovs.ambiguity_graph({}).modularity is None


def test_rescoring_never_touches_masks(golden, monkeypatch):
    bench, preds = golden
    scorer = Scorer(KIND, bench, preds)
    first = scorer.rescore({"av_threshold": 0.5}).summary

    def boom(*_a, **_k):
        raise AssertionError("masks touched while re-scoring")

    import masklens.core.kinds.ovs.kind as kind_module

    for name in ("iou_matrix", "intersect_all", "prefix_unions", "resize_nearest"):
        monkeypatch.setattr(kind_module, name, boom)
    monkeypatch.setattr(Mask, "to_array", boom)
    assert scorer.rescore({"av_threshold": 0.5}).summary == first
    assert scorer.rescore({"av_threshold": 0.95}).summary["0.1"]["outmatched"] == 2


def test_err_is_eq_10_literally():
    """err = (1/|C|) Σ_c EM_c with EM_c = (1/N) Σ_i err_{i,c} and |C| the classes with ground
    truth (Eq. 10); err_class_mean (masklens' earlier err) averages each class over the images
    where it remained, then over those classes."""
    empty = tuple(ovs.ThresholdOverlaps({}, {}) for _ in ovs.THRESHOLDS)
    ov1, ov2 = ovs.ImageOverlaps(10, {"c": 1}, empty), ovs.ImageOverlaps(10, {"a": 1}, empty)
    reads = [ovs.ImageReadout([], {"a": 0.2, "b": 0.6}), ovs.ImageReadout([], {"b": 0.4})]
    s = ovs.summarize_threshold([ov1, ov2], reads, 0, vocabulary_size=5)
    assert s.err == pytest.approx(1.2 / (2 * 2))  # |C| = |{a, c}|; b (no ground truth) counts too
    assert s.err_class_mean == pytest.approx((0.2 + 0.5) / 2)
    assert s.err_mask_mean == pytest.approx(1.2 / 3)
    assert s.err_rate == pytest.approx(1.2 / (2 * 5))
    none = ovs.summarize_threshold([ov1, ov2], [ovs.ImageReadout([], {})] * 2, 0, 5)
    assert none.err is None and none.err_class_mean is None  # no mask remains: the paper's NULL
    assert ovs.best_threshold([0.5, 0.5], [None, 0.1]) == 0  # no remaining mask counts err 0


def test_auc_dominated_point_adds_no_step():
    """(0.3, 0.4) is dominated by (0.1, 0.5); it must not lower the area."""
    without = ovs.auc_front_err([0.5, 0.9] + [None] * 7, [0.1, 0.5] + [None] * 7)
    assert without == pytest.approx(0.1 * 0.25 + 0.4 * 0.7 + 0.5 * 0.9)
    assert ovs.auc_front_err([0.5, 0.4, 0.9] + [None] * 6, [0.1, 0.3, 0.5] + [None] * 6) == without


def test_auc_envelope_is_monotone():
    # the point with the largest err has a lower front: the envelope keeps the better one
    fronts, errs = [0.9, 0.6] + [None] * 7, [0.1, 0.2] + [None] * 7
    assert ovs.auc_front_err(fronts, errs) == pytest.approx(0.1 * 0.45 + 0.9 * 0.9)


def test_tau_star_follows_eq_10_err():
    """Ten images with class a (10 px of 100). τ = 0.1: a predicted exactly, plus a spurious
    b of 50 px in one image: err = 0.5 / (10 images · |C| = 1) = 0.05 (Eq. 10), err_class_mean
    0.5. τ = 0.2: 9 px of a, nothing spurious. τ* = 0.1 by err (√(1 + 0.95²) > √(0.81 + 1));
    the earlier class-mean err would have picked 0.2."""
    def image(spurious: bool) -> ovs.ImageOverlaps:
        per = [ovs.ThresholdOverlaps({"a": 10, **({"b": 50} if spurious else {})}, {"a": 10},
                                     ("b",) if spurious else (), np.zeros((1 if spurious else 0, 1))),
               ovs.ThresholdOverlaps({"a": 9}, {"a": 9})]  # fmt: skip
        per += [ovs.ThresholdOverlaps({}, {}) for _ in ovs.THRESHOLDS[2:]]
        return ovs.ImageOverlaps(100, {"a": 10}, tuple(per))

    images = [image(i == 0) for i in range(10)]
    reads = [[ovs.image_readout(ov, k, 0.7) for k in range(9)] for ov in images]
    summ = ovs.summarize(images, reads, vocabulary_size=2)
    first = summ.per_threshold[0]
    assert first.err == pytest.approx(0.05) and first.err_class_mean == pytest.approx(0.5)
    assert summ.per_threshold[1].err is None
    assert summ.tau_star == 0.1
    fronts = [s.front for s in summ.per_threshold]
    assert ovs.best_threshold(fronts, [s.err_class_mean for s in summ.per_threshold]) == 1

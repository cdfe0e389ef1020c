"""Mask-wise OVS format: validation errors via the CLI, the masks form, round trip, demo, properties."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ovs_golden import build_golden

from masklens.core.cli import main
from masklens.core.kinds.ovs import metrics as ovs
from masklens.core.kinds.ovs.kind import KIND, load_ovs_annotations, load_ovs_predictions
from masklens.core.masks import Mask
from masklens.core.scoring.contract import score

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "ovs"


def _run(tmp_path: Path, ann: Path, pred: Path) -> tuple[int, Path]:
    out = tmp_path / "out.json"
    return main(["score", "ovs", "--ann", str(ann), "--pred", str(pred), "--out", str(out)]), out


def _expect_error(tmp_path: Path, capsys, ann: Path, pred: Path, *needles: str) -> None:
    rc, out = _run(tmp_path, ann, pred)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert not out.exists() and "Traceback" not in err
    for n in needles:
        assert n in err, err


def _edit(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def test_cli_scores_golden(tmp_path: Path):
    a, p = build_golden(tmp_path)
    rc, out = _run(tmp_path, a, p)
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["summary"]["all"]["tau_star"] == 0.6 and "ambiguity_graph" in res["extras"]
    assert list(res["summary"]) == ["all", *[f"{t:.1f}" for t in ovs.THRESHOLDS]]


@pytest.mark.parametrize(
    ("where", "edit", "needles"),
    [
        ("ann", lambda d: d["annotations"][1].update(category_id=99), ["annotation id 2", "category_id", "99"]),
        ("ann", lambda d: d["vocabulary"].append({"id": 5, "name": "sofa"}), ["vocabulary[4]", "duplicate name"]),
        ("ann", lambda d: d.pop("vocabulary"), ["vocabulary"]),
        ("ann", lambda d: d["annotations"][0].update(segmentation=Mask.empty(3, 5).to_coco()),
         ["annotation id 1", "differs from the image size"]),
        ("ann", lambda d: d["annotations"][0]["segmentation"].update(counts="!!"), ["annotation id 1", "corrupt RLE"]),
        ("pred", lambda d: d["predictions"][0].update(image_id=7), ["[0]", "image_id", "points to no image"]),
        ("pred", lambda d: d["predictions"][1].update(category_id=9), ["[1]", "category_id"]),
        ("pred", lambda d: d["predictions"].append(dict(d["predictions"][0])), ["[6]", "duplicate prediction"]),
        ("pred", lambda d: d["predictions"][2].update(score_map="maps/nope.npy"), ["[2]", "score map not found"]),
        ("pred", lambda d: d["predictions"][2].update(masks={}), ["[2]", "exactly one of"]),
        ("pred", lambda d: d.update(thresholds=[0.5]), ["thresholds"]),
    ],
)
def test_bad_input_names_file_record_field(tmp_path, capsys, where, edit, needles):
    a, p = build_golden(tmp_path)
    target = a if where == "ann" else p
    _edit(target, edit)
    _expect_error(tmp_path, capsys, a, p, target.name, *needles)


def test_truncated_and_unreadable_files(tmp_path, capsys):
    a, p = build_golden(tmp_path)
    p.write_text(p.read_text()[:40])
    _expect_error(tmp_path, capsys, a, p, "pred.json", "not valid JSON")
    a, p = build_golden(tmp_path / "b")
    (tmp_path / "b" / "maps" / "1_1.npy").write_bytes(b"garbage")
    _expect_error(tmp_path, capsys, a, p, "1_1.npy", "cannot read score map")


def _masks_record(img: int, cat: int, arrays: list[np.ndarray]) -> dict:
    return {"image_id": img, "category_id": cat,
            "masks": {f"{t:.1f}": Mask.from_array(m).to_coco() for t, m in zip(ovs.THRESHOLDS, arrays, strict=True)}}


def test_masks_form_validation(tmp_path, capsys):
    a, p = build_golden(tmp_path)
    full, empty = np.ones((4, 5), bool), np.zeros((4, 5), bool)
    good = [full] * 4 + [empty] * 5
    _edit(p, lambda d: d["predictions"].__setitem__(3, _masks_record(1, 4, good)))
    bench = load_ovs_annotations(a)
    pred = load_ovs_predictions(p, bench)
    assert [i.mask.area for i in pred.get("1:lamp").instances] == [20] * 4 + [0] * 5
    _edit(p, lambda d: d["predictions"].__setitem__(3, _masks_record(1, 4, [empty] + [full] * 8)))
    _expect_error(tmp_path, capsys, a, p, "[3]", "masks", "is not inside")
    rec = _masks_record(1, 4, good)
    del rec["masks"]["0.9"]
    _edit(p, lambda d: d["predictions"].__setitem__(3, rec))
    _expect_error(tmp_path, capsys, a, p, "[3]", "missing thresholds 0.9")


def test_png_score_maps_and_resize(tmp_path):
    a, p = build_golden(tmp_path)
    arr = np.zeros((8, 10), np.uint8)  # twice the image size, read as v / 255
    arr[0:4, 0:4] = 153  # 0.6
    cv2.imwrite(str(tmp_path / "maps" / "big.png"), arr)
    _edit(p, lambda d: d["predictions"][1].update(score_map="maps/big.png"))
    bench = load_ovs_annotations(a)
    pred = load_ovs_predictions(p, bench)
    areas = [i.mask.area for i in pred.get("1:couch").instances]
    assert areas == [4] * 6 + [0] * 3


def test_write_predictions_round_trip(tmp_path):
    a, p = build_golden(tmp_path)
    bench = load_ovs_annotations(a)
    preds = load_ovs_predictions(p, bench)
    (tmp_path / "copy").mkdir()
    (out,) = KIND.write_predictions(bench, preds, tmp_path / "copy")  # a folder gets pred.json
    assert out == tmp_path / "copy" / "pred.json"
    (plain,) = KIND.write_predictions(bench, preds, tmp_path / "x")  # any other path is the file
    assert plain == tmp_path / "x" and plain.read_bytes() == out.read_bytes()
    again = load_ovs_predictions(out, bench)
    assert all(r.provenance["source"] == "masks" for r in again.by_prompt.values())
    assert score(KIND, bench, again).to_json() == score(KIND, bench, preds).to_json()


def test_bundled_demo_is_meaningful():
    bench = load_ovs_annotations(DEMO / "ann.json")
    res = score(KIND, bench, load_ovs_predictions(DEMO / "pred.json", bench))
    s = res.summary["all"]
    assert s["N"] >= 8 and s["outmatched"] > 0 and s["communities"] >= 3
    assert s["front"] > 0.9  # the demo model's own vocabulary, in its own palette
    comms = res.extras["ambiguity_graph"]["communities"]
    assert any({"grass", "lawn"} <= set(c) for c in comms)
    assert any({"square", "box"} <= set(c) for c in comms)
    assert any({"circle", "disc"} <= set(c) for c in comms)
    fronts = [res.summary[f"{t:.1f}"]["front"] for t in ovs.THRESHOLDS]
    assert fronts[-1] < max(fronts)  # weak objects drop out at high thresholds
    assert res.summary["0.1"]["err"] > 0


def test_demo_generator_is_seeded(tmp_path):
    import sys

    sys.path.insert(0, str(DEMO.parents[2] / "tools" / "demo"))
    import make_demo

    make_demo.make_demo(tmp_path / "a", seed=3, only=["ovs"])
    make_demo.make_demo(tmp_path / "b", seed=3, only=["ovs"])
    make_demo.make_demo(tmp_path / "c", seed=4, only=["ovs"])
    a, b, c = ((tmp_path / x / "ovs" / "ann.json").read_bytes() for x in "abc")
    assert a == b != c


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.3, 0.95))
def test_properties_on_random_images(seed, tau_av):
    rng = np.random.default_rng(seed)
    h, w = 6, 7
    overlaps = []
    for _ in range(3):
        labels = rng.integers(0, 4, size=(h, w))
        gt = {c: int((labels == c).sum()) for c in range(4) if (labels == c).any()}
        per_t = []
        scores = {c: rng.random((h, w)) * (rng.random() < 0.8) for c in range(6)}
        for t in ovs.THRESHOLDS:
            masks = {c: s >= t for c, s in scores.items() if (s >= t).any()}
            inter = {c: int((masks[c] & (labels == c)).sum()) for c in gt if c in masks}
            rem = tuple(c for c in masks if c not in gt)
            iou = np.array([[(masks[r] & (labels == g)).sum() / (masks[r] | (labels == g)).sum() for g in gt]
                            for r in rem]).reshape(len(rem), len(gt))
            per_t.append(ovs.ThresholdOverlaps({c: int(m.sum()) for c, m in masks.items()}, inter, rem, iou))
        overlaps.append(ovs.ImageOverlaps(h * w, gt, tuple(per_t)))
    readouts = [[ovs.image_readout(o, k, tau_av) for k in range(9)] for o in overlaps]
    summ = ovs.summarize(overlaps, readouts, 6)
    for s in summ.per_threshold:
        assert 0 <= s.front <= 1 and 0 <= s.back <= 1 and 0 <= s.err_rate <= 1
        assert s.err is None or 0 < s.err <= 1
    for per_image in readouts:
        for r in per_image:
            gts = [g for g, _, _ in r.pairs]
            ps = [p for _, p, _ in r.pairs]
            assert len(set(gts)) == len(gts) and len(set(ps)) == len(ps)
            assert all(iou > tau_av for _, _, iou in r.pairs)
    assert summ.auc is None or 0 <= summ.auc <= 1


def test_threshold_masks_are_the_unions_of_instances_at_or_above_each_tau() -> None:
    """B(τ) from the prefix unions equals the union of {s ≥ τ} built directly, ties and
    scores exactly at a τ included."""
    from masklens.core.kinds.ovs.kind import threshold_masks
    from masklens.core.schema import Instance, Prediction

    rng = np.random.default_rng(7)
    scores = [0.3, 0.3, 0.05, 0.95, 0.5, 0.71, 0.1]
    arrays = [rng.random((9, 11)) < 0.25 for _ in scores]
    pred = Prediction("p", [Instance(Mask.from_array(a), s) for a, s in zip(arrays, scores, strict=True)])
    got = threshold_masks(pred, 9, 11)
    assert len(got) == len(ovs.THRESHOLDS)
    for t, m in zip(ovs.THRESHOLDS, got, strict=True):
        want = np.zeros((9, 11), dtype=bool)
        for a, s in zip(arrays, scores, strict=True):
            if s >= t:
                want |= a
        assert np.array_equal(m.to_array(), want), t

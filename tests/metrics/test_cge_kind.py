"""CGEBench kind: loader, golden scoring with hand-computed values, threshold re-derivation, CLI, round-trip.

The fixture (10×10 images) is drawn by hand below; every expected number is worked out in comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from masklens.core.cli import main
from masklens.core.masks import Mask
from masklens.core.schema import Role
from masklens.core.scoring.contract import Scorer, get_kind

H = W = 10


def box(r0: int, r1: int, c0: int, c1: int, h: int = H, w: int = W) -> np.ndarray:
    """Rows r0..r1-1, columns c0..c1-1."""
    a = np.zeros((h, w), dtype=np.uint8)
    a[r0:r1, c0:c1] = 1
    return a


def rle(a: np.ndarray) -> dict:
    return Mask.from_array(a).to_coco()


def build(tmp: Path) -> tuple[Path, Path]:
    """Entry 1: |G| = 20 (rows 0-3 × cols 0-4) + a crowd box elsewhere (excluded from G).
    Entry 2: G = two annotations, rows 5-9 × cols 0-1 and rows 5-9 × cols 8-9, |G| = 20.
    Entry 3: only a crowd annotation → |G| = 0 → not scored.
    """
    images = [
        {"id": i, "file_name": f"img{i}.png", "height": H, "width": W, "text_input": f"red thing {i}",
         "hypernyms": ["thing", "object", "entity"]}
        for i in (1, 2, 3)
    ]
    anns = [
        {"id": 11, "image_id": 1, "category_id": 1, "segmentation": rle(box(0, 4, 0, 5)), "iscrowd": 0},
        {"id": 12, "image_id": 1, "category_id": 1, "segmentation": rle(box(8, 10, 8, 10)), "iscrowd": 1},
        {"id": 21, "image_id": 2, "category_id": 1, "segmentation": rle(box(5, 10, 0, 2)), "iscrowd": 0},
        {"id": 22, "image_id": 2, "category_id": 1, "segmentation": rle(box(5, 10, 8, 10))},
        {"id": 31, "image_id": 3, "category_id": 1, "segmentation": rle(box(0, 3, 0, 3)), "iscrowd": 1},
    ]
    big = np.zeros((20, 20), dtype=np.uint8)
    big[10:20, 0:4] = 1  # nearest-resized to rows 5-9 × cols 0-1 of the 10×10 image
    preds = [
        # entry 1 -- p0: exactly G (full). p1: B (8 px inside G) at s = 0.5 exactly, C (the other 12 px) at 0.4.
        {"image_id": 1, "level": 0, "segmentation": rle(box(0, 4, 0, 5)), "score": 0.9},
        {"image_id": 1, "level": 1, "segmentation": rle(box(0, 4, 0, 2)), "score": 0.5},
        {"image_id": 1, "level": 1, "segmentation": rle(box(0, 4, 2, 5)), "score": 0.4},
        # p2: rows 0-1 × all columns: 10 px inside G. p3: nothing.
        {"image_id": 1, "level": 2, "segmentation": rle(box(0, 2, 0, 10)), "score": 0.8},
        # entry 2 -- p0: the left annotation, given at 20×20 (size mismatch). p1: whole image.
        {"image_id": 2, "level": 0, "segmentation": Mask.from_array(big).to_coco(), "score": 0.7},
        {"image_id": 2, "level": 1, "segmentation": rle(np.ones((H, W), np.uint8)), "score": 0.6},
        # p2: the top half (outside G). p3: whole image at a low score.
        {"image_id": 2, "level": 2, "segmentation": rle(box(0, 5, 0, 10)), "score": 0.9},
        {"image_id": 2, "level": 3, "segmentation": rle(np.ones((H, W), np.uint8)), "score": 0.3},
        # entry 3 (|G| = 0)
        {"image_id": 3, "level": 0, "segmentation": rle(box(0, 3, 0, 3)), "score": 0.9},
    ]
    ann, pred = tmp / "ann.json", tmp / "pred.json"
    ann.write_text(json.dumps({"images": images, "annotations": anns, "categories": [{"id": 1, "name": "x"}]}))
    pred.write_text(json.dumps(preds))
    return ann, pred


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return build(tmp_path)


def scorer(files: tuple[Path, Path]) -> Scorer:
    kind = get_kind("cgebench")
    ns = {"ann": str(files[0]), "pred": str(files[1]), "images": None}
    bench = kind.load_benchmark(**ns)
    return Scorer(kind, bench, kind.load_predictions(bench, **ns))


def test_loader_builds_four_prompts_per_entry(files):
    kind = get_kind("cgebench")
    ns = {"ann": str(files[0]), "pred": str(files[1]), "images": None}
    bench = kind.load_benchmark(**ns)
    assert [s.id for s in bench] == ["1", "2", "3"]
    s = bench.sample("1")
    assert [(p.role, p.level, p.text) for p in s.prompts] == [
        (Role.POSITIVE, 0, "red thing 1"), (Role.HYPERNYM, 1, "thing"),
        (Role.HYPERNYM, 2, "object"), (Role.HYPERNYM, 3, "entity"),
    ]
    assert all(p.gt == "G" and p.source_id == 1 for p in s.prompts)
    assert s.gts["G"].union().area == 20  # the crowd box is not part of G
    assert s.gts["G"].crowd == [False, True]
    assert bench.sample("2").gts["G"].union().area == 20


def test_golden_summary_at_default_threshold(files):
    res = scorer(files).rescore()
    assert res.params == {"score_threshold": 0.5}
    s = res.summary
    # p0: entry 1 IoGT 1 (full), entry 2 IoGT 10/20 (resized prediction) -> mean 0.75
    assert s["p0"] == {"IoGT": 0.75, "cumulative": 0.75, "zero": 0.0, "full": 0.5, "partial": 0.5, "N": 2}
    # p1: entry 1 keeps B only (s = 0.5 = t is kept): 8/20; entry 2 whole image: 1.0. c(1): 8/20, 10/20
    assert s["p1"] == pytest.approx({"IoGT": 0.7, "cumulative": 0.45, "zero": 0.0, "full": 0.5, "partial": 0.5, "N": 2})
    # p2: entry 1 10/20, c(2) = G∩M0∩B∩D = rows 0-1 × cols 0-1 = 4/20; entry 2: 0, 0
    assert s["p2"] == pytest.approx({"IoGT": 0.25, "cumulative": 0.1, "zero": 0.5, "full": 0.0, "partial": 0.5, "N": 2})
    # p3: entry 1 has no prediction; entry 2's only instance (0.3) is below t
    assert s["p3"] == {"IoGT": 0.0, "cumulative": 0.0, "zero": 1.0, "full": 0.0, "partial": 0.0, "N": 2}
    assert any("empty ground truth" in n for n in res.notes)


def test_rescore_at_other_thresholds_without_touching_masks(files, monkeypatch):
    sc = scorer(files)
    from pycocotools import mask as mask_utils

    def boom(*a, **k):
        raise AssertionError("a mask was touched while re-scoring")

    for fn in ("merge", "iou", "area", "decode", "encode", "frPyObjects"):
        monkeypatch.setattr(mask_utils, fn, boom)
    s = sc.rescore({"score_threshold": 0.3}).summary
    # entry 1 p1 keeps B ∪ C = G; entry 2 p3 keeps the whole image
    assert s["p1"] == pytest.approx({"IoGT": 1.0, "cumulative": 0.75, "zero": 0.0, "full": 1.0, "partial": 0.0, "N": 2})
    assert s["p2"] == pytest.approx({"IoGT": 0.25, "cumulative": 0.25, "zero": 0.5, "full": 0.0, "partial": 0.5, "N": 2})
    assert s["p3"] == pytest.approx({"IoGT": 0.5, "cumulative": 0.0, "zero": 0.5, "full": 0.5, "partial": 0.0, "N": 2})
    # above every score: nothing kept anywhere
    s = sc.rescore({"score_threshold": 0.95}).summary
    assert all(s[g]["IoGT"] == 0.0 and s[g]["zero"] == 1.0 for g in ("p0", "p1", "p2", "p3"))


def test_sample_readout_records(files):
    res = scorer(files).rescore()
    r1, r2, r3 = res.samples
    assert r1["IoGT_p1"] == 0.4 and r1["cumulative_p2"] == 0.2 and r1["gt_area"] == 20
    lv = r1["levels"][1]
    assert (lv["kept"], lv["instances"], lv["pred_area"], lv["inter_area"], lv["outcome"]) == (1, 2, 8, 8, "partial")
    assert r2["levels"][2]["outcome"] == "zero" and r2["levels"][1]["outcome"] == "full"
    # |G| = 0: null values and a reason, no NaN
    assert r3["IoGT_p0"] is None and r3["cumulative_p0"] is None and "empty ground truth" in r3["reason"]
    json.dumps(res.to_json(), allow_nan=False)


def test_cli_writes_json(files, tmp_path, capsys):
    out = tmp_path / "o" / "res.json"
    assert main(["score", "cgebench", "--ann", str(files[0]), "--pred", str(files[1]),
                 "--score-threshold", "0.3", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["benchmark"] == "cgebench" and data["params"] == {"score_threshold": 0.3}
    assert list(data["summary"]) == ["p0", "p1", "p2", "p3"]
    assert data["summary"]["p3"]["IoGT"] == pytest.approx(0.5)
    assert len(data["samples"]) == 3


def test_cli_table_without_out(files, capsys):
    assert main(["score", "cgebench", "--ann", str(files[0]), "--pred", str(files[1])]) == 0
    text = capsys.readouterr().out
    assert "IoGT" in text and "p3" in text and "0.7500" in text


def test_write_predictions_round_trip(files, tmp_path):
    sc = scorer(files)
    kind = sc.kind
    written = kind.write_predictions(sc.benchmark, sc.predictions, tmp_path / "rt.json")
    assert written == [tmp_path / "rt.json"]
    back = kind.load_predictions(sc.benchmark, pred=str(written[0]))
    for pid, pred in sc.predictions.by_prompt.items():
        other = back.get(pid)
        assert [(i.mask, i.score) for i in pred.instances] == [(i.mask, i.score) for i in other.instances]
    assert Scorer(kind, sc.benchmark, back).rescore().summary == sc.rescore().summary
    # a folder target gets pred.json inside
    folder = tmp_path / "dir"
    folder.mkdir()
    assert kind.write_predictions(sc.benchmark, sc.predictions, folder) == [folder / "pred.json"]


def test_images_dir_resolves_paths(files, tmp_path):
    kind = get_kind("cgebench")
    ns = {"ann": str(files[0]), "images": str(tmp_path / "imgs")}
    bench = kind.load_benchmark(**ns)
    assert bench.sample("1").images["image"].path == tmp_path / "imgs" / "img1.png"
    # without --images and without files: no path (scoring needs none)
    ns["images"] = None
    assert kind.load_benchmark(**ns).sample("1").images["image"].path is None


def test_typed_prompt_replaces_its_level(files):
    """A copy of a sample whose level-2 prompt is a typed one (new id) scores the typed prediction at p2."""
    import dataclasses

    from masklens.core.schema import Instance, Prediction, PredictionSet

    sc = scorer(files)
    sample = sc.benchmark.sample("1")
    typed = dataclasses.replace(sample.prompts[2], id="typed", text="shape")
    copy = dataclasses.replace(sample, prompts=[*sample.prompts[:2], typed, sample.prompts[3]])
    preds = PredictionSet()
    preds.add(Prediction("typed", [Instance(Mask.from_array(box(0, 4, 0, 5)), 0.9)]))
    rec = sc.kind.sample_readout(copy, sc.kind.sample_overlaps(copy, preds), {"score_threshold": 0.5})
    assert rec["IoGT_p2"] == 1.0 and rec["levels"][2]["prompt_id"] == "typed"
    assert rec["IoGT_p0"] == 0.0  # the other levels had no prediction in this set


def test_empty_prediction_file_scores_zero(files):
    files[1].write_text("[]")
    s = scorer(files).rescore().summary
    assert all(s[g] == {"IoGT": 0.0, "cumulative": 0.0, "zero": 1.0, "full": 0.0, "partial": 0.0, "N": 2}
               for g in ("p0", "p1", "p2", "p3"))


def test_committed_fixture_matches_builder(tmp_path):
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "cge"
    ann, pred = build(tmp_path)
    assert (fixture / "ann.json").read_text() == ann.read_text()
    assert (fixture / "pred.json").read_text() == pred.read_text()

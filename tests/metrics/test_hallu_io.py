"""HalluSegBench: CLI, bad input (one clear message, no output), write/read round trip, properties."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hallu_golden import build_golden

from masklens.core.cli import main
from masklens.core.errors import DataFormatError
from masklens.core.kinds.hallusegbench.kind import KIND, load_hallusegbench, load_prediction_dir
from masklens.core.kinds.hallusegbench.metrics import cms, iou_from_areas, size_group
from masklens.core.masks import Mask, resize_nearest, resize_nearest_floor
from masklens.core.scoring.contract import score


def _run(tmp_path: Path, data: Path, *extra: str) -> tuple[int, Path]:
    out = tmp_path / "out.json"
    rc = main(["score", "hallusegbench", "--data", str(data), "--root", str(data.parent),
               "--pred-dir", str(data.parent / "pred"), "--out", str(out), *extra])
    return rc, out


def test_cli_writes_json(tmp_path: Path):
    data = build_golden(tmp_path)
    rc, out = _run(tmp_path, data, "--alpha", "1")
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["benchmark"] == "hallusegbench" and res["params"] == {"alpha": 1.0}
    assert set(res["summary"]) == {"all", "S", "M", "L"}
    assert res["samples"][0]["CMS_fact"] == pytest.approx(14 / 20)
    assert "orgl_orgi: 1" in res["notes"][0]
    assert res["notes"][1].startswith("1 predictions had another size")


def test_cli_table_without_out(tmp_path: Path, capsys):
    data = build_golden(tmp_path)
    assert main(["score", "hallusegbench", "--data", str(data), "--pred-dir", str(tmp_path / "pred")]) == 0
    text = capsys.readouterr().out
    assert "CCMS_item_mean" in text and "dIoU_visual" in text


def _expect_error(tmp_path: Path, capsys, data: Path, *needles: str) -> None:
    rc, out = _run(tmp_path, data)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert not out.exists()
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2
    for n in needles:
        assert n in err, err


def test_truncated_data_json(tmp_path: Path, capsys):
    data = build_golden(tmp_path)
    data.write_text(data.read_text()[:50])
    _expect_error(tmp_path, capsys, data, "data.json", "not valid JSON")


def test_missing_field_names_record_and_field(tmp_path: Path, capsys):
    data = build_golden(tmp_path)
    items = json.loads(data.read_text())
    del items[1]["counterfactual_mask_path"]
    data.write_text(json.dumps(items))
    _expect_error(tmp_path, capsys, data, "record [1]", "counterfactual_mask_path", "missing field")


def test_bad_ann_id(tmp_path: Path, capsys):
    data = build_golden(tmp_path)
    items = json.loads(data.read_text())
    items[2]["ann_id"] = [3]
    data.write_text(json.dumps(items))
    _expect_error(tmp_path, capsys, data, "record [2]", "ann_id")


def test_missing_ground_truth_png(tmp_path: Path, capsys):
    data = build_golden(tmp_path)
    (tmp_path / "masks" / "img2_2.png").unlink()
    _expect_error(tmp_path, capsys, data, "ann_id=2", "factual_mask_path", "img2_2.png")


def test_unreadable_prediction_png(tmp_path: Path, capsys):
    data = build_golden(tmp_path)
    (tmp_path / "pred" / "orgl_orgi" / "img1_1_mask.png").write_bytes(b"not a png")
    _expect_error(tmp_path, capsys, data, "img1_1_mask.png", "cannot decode")


def test_prediction_dir_without_folders(tmp_path: Path, capsys):
    data = build_golden(tmp_path)
    for f in (tmp_path / "pred").iterdir():
        f.rename(tmp_path / f"moved_{f.name}")
    _expect_error(tmp_path, capsys, data, "none of the prediction folders")


def test_non_list_data(tmp_path: Path, capsys):
    data = build_golden(tmp_path)
    data.write_text('{"items": []}')
    _expect_error(tmp_path, capsys, data, "expected a JSON list")


def test_write_predictions_round_trip(tmp_path: Path):
    data = build_golden(tmp_path)
    bench = load_hallusegbench(data)
    preds = load_prediction_dir(bench, tmp_path / "pred")
    written = KIND.write_predictions(bench, preds, tmp_path / "copy")
    assert len(written) == 4 * 4 - 3  # three PNGs are missing in the fixture
    assert (tmp_path / "copy" / "edtl_orgi" / "img3_3_mask.png") in written
    again = load_prediction_dir(bench, tmp_path / "copy")
    assert again.missing == preds.missing
    r1, r2 = score(KIND, bench, again), score(KIND, bench, preds)
    assert (r1.summary, r1.samples) == (r2.summary, r2.samples)
    assert len(r2.notes) == 2 and len(r1.notes) == 1  # the copy is written at ground-truth size


def test_cv2_nearest_differs_from_pixel_centre():
    """The official scripts resize with cv2.INTER_NEAREST (floor), not pixel-centre sampling."""
    arr = np.zeros((100, 100), np.uint8)
    arr[0:80, 0:39] = 1
    m = Mask.from_array(arr)
    assert resize_nearest_floor(m, 50, 50).area == 40 * 20
    assert resize_nearest(m, 50, 50).area == 40 * 19
    assert resize_nearest_floor(m, 100, 100) is m


@given(st.integers(0, 500), st.integers(0, 500), st.data())
def test_iou_properties(p: int, g: int, data):
    i = data.draw(st.integers(0, min(p, g)))
    v = iou_from_areas(p, g, i)
    assert 0.0 <= v <= 1.0
    assert v == iou_from_areas(g, p, i)
    assert (v == 1.0) == (p == g == i > 0)


@given(st.integers(0, 500), st.integers(1, 500), st.data(),
       st.floats(0.5, 10), st.floats(0.5, 10))
def test_cms_properties(p: int, g: int, data, a1: float, a2: float):
    i = data.draw(st.integers(0, min(p, g)))
    assert cms(p, g, i, 1.0) == pytest.approx(p / g)
    lo, hi = sorted((a1, a2))
    assert cms(p, g, i, hi) <= cms(p, g, i, lo) + 1e-12  # non-increasing in α
    assert cms(p, g, i, lo) >= 0.0
    assert cms(p, 0, 0, lo) == 0.0


@given(st.integers(0, 200 * 200))
def test_size_group_thresholds(area: int):
    assert size_group(area) == ("S" if area < 1024 else "M" if area < 9216 else "L")


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 2**16 - 1)] * 4), min_size=1, max_size=6), st.integers(0, 3))
def test_scores_match_direct_numpy(tmp_path_factory, seeds, drop):
    """Random masks on disk: the kind's per-item values equal a direct numpy computation."""
    root = tmp_path_factory.mktemp("h")
    import cv2

    items = []
    direct = []
    for k, seed4 in enumerate(seeds):
        rng = np.random.default_rng(seed4)
        h, w = 12, 9
        gt_f, gt_cf = rng.random((h, w)) < 0.4, rng.random((h, w)) < 0.3
        cv2.imwrite(str(root / f"f{k}.png"), gt_f.astype(np.uint8) * 255)
        cv2.imwrite(str(root / f"c{k}.png"), gt_cf.astype(np.uint8) * 255)
        ps = {}
        for j, folder in enumerate(("orgl_orgi", "edtl_orgi", "orgl_edti", "edtl_edti")):
            (root / "pred" / folder).mkdir(parents=True, exist_ok=True)
            if (k + j) % 4 == drop and k % 2:
                ps[folder] = None
                continue
            ps[folder] = rng.random((h, w)) < 0.5
            cv2.imwrite(str(root / "pred" / folder / f"i_{k}_mask.png"), ps[folder].astype(np.uint8) * 255)
        items.append({"factual_image_path": "i.jpg", "ann_id": k, "factual_mask_path": f"f{k}.png",
                      "counterfactual_mask_path": f"c{k}.png", "factual_label": "a", "counterfactual_label": "b"})

        def iou(p, g):
            u = (p | g).sum()
            return (p & g).sum() / u if u else 0.0

        def cms3(p, g):
            return (3 * (p & g).sum() + (p & ~g).sum()) / (3 * g.sum()) if g.sum() else 0.0

        direct.append({
            "IoU_fact": None if ps["orgl_orgi"] is None else iou(ps["orgl_orgi"], gt_f),
            "IoU_textual": None if ps["edtl_orgi"] is None else iou(ps["edtl_orgi"], gt_f),
            "CMS_fact": None if ps["edtl_orgi"] is None else cms3(ps["edtl_orgi"], gt_f),
            "CMS_counterfact": None if ps["orgl_edti"] is None else cms3(ps["orgl_edti"], gt_cf),
        })
    (root / "data.json").write_text(json.dumps(items))
    bench = load_hallusegbench(root / "data.json")
    res = score(KIND, bench, load_prediction_dir(bench, root / "pred"))
    for mine, ref in zip(res.samples, direct, strict=True):
        for key, val in ref.items():
            assert mine[key] == (None if val is None else pytest.approx(val, abs=1e-12))


def test_labels_are_optional_for_scoring(tmp_path: Path):
    data = build_golden(tmp_path)
    items = json.loads(data.read_text())
    for it in items:
        del it["factual_label"], it["counterfactual_label"]
    items[0]["label"] = "tie"
    data.write_text(json.dumps(items))
    bench = load_hallusegbench(data)
    assert bench.samples[0].prompt("img1_1:orgl_orgi").text == "tie"
    assert bench.samples[1].prompt("img2_2:edtl_orgi").text == ""
    items[1]["factual_label"] = 3
    data.write_text(json.dumps(items))
    with pytest.raises(DataFormatError, match="factual_label"):
        load_hallusegbench(data)


@pytest.mark.parametrize(("first", "second"), [("a/b", "a_b"), ("a_b", "a\\b"), (1, "1")])
def test_ann_ids_that_share_a_prediction_file_are_refused_naming_both(first, second, tmp_path, capsys):
    data = build_golden(tmp_path)
    items = json.loads(data.read_text())
    items[1] = {**items[0], "ann_id": second}
    items[0]["ann_id"] = first
    data.write_text(json.dumps(items))
    _expect_error(tmp_path, capsys, data, "record [1]", "ann_id", repr(first), repr(second),
                  "share one prediction file name")


def test_ann_ids_distinct_after_sanitising_still_load(tmp_path):
    data = build_golden(tmp_path)
    items = json.loads(data.read_text())
    items[1] = {**items[0], "ann_id": "a/b"}
    items[0]["ann_id"] = "a/c"
    data.write_text(json.dumps(items))
    bench = load_hallusegbench(data, tmp_path)
    assert [s.meta["stem"] for s in bench.samples[:2]] == ["img1_a_c", "img1_a_b"]

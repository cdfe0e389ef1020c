"""User mistakes on the command line: one clear message naming file / record / field, a non-zero
exit, no traceback and no output file. Inputs are the bundled demo with one thing broken."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import DEMO_DIR, demo_argv
from masklens.core.masks import Mask

SMALL = Mask.from_array(np.ones((10, 12), bool)).to_coco()


def _fails(capsys, argv: list[str], out: Path, *needles: str) -> str:
    rc = main([*argv, "--out", str(out)])
    _, err = capsys.readouterr()
    assert rc != 0
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[0].startswith("masklens: error:") and len(lines) <= 2, err  # message (+ hint)
    for n in needles:
        assert n in err, (n, err)
    assert not out.exists() and not list(out.parent.glob(f".{out.name}*")), "partial output left"
    return err


def _edit(src: Path, dst: Path, fn) -> Path:
    data = json.loads(src.read_text())
    fn(data)
    dst.write_text(json.dumps(data))
    return dst


def _gt(kind: str) -> list[str]:
    return demo_argv(kind, with_predictions=False)


# ------------------------------------------------------------------ prediction files
@pytest.mark.parametrize(("kind", "record"), [("r2sm", "query_id=4"), ("cgebench", "level=2"),
                                              ("cafe", "[3]"), ("pcs", "[3]")])
@pytest.mark.parametrize(("bad", "needle"), [("high", "got 'high'"), (None, "got None")])
def test_non_numeric_score(kind, record, bad, needle, tmp_path, capsys):
    src = DEMO_DIR / kind / "pred_demo.json"
    pred = _edit(src, tmp_path / "p.json", lambda d: d[3].update(score=bad))
    _fails(capsys, ["score", kind, *_gt(kind), "--pred", str(pred)], tmp_path / "o.json",
           "p.json", record, "'score'", needle)


@pytest.mark.parametrize("kind", ["r2sm", "cgebench", "ovs", "cafe"])
def test_truncated_prediction_json(kind, tmp_path, capsys):
    name = "pred.json" if kind == "ovs" else "pred_demo.json"
    pred = tmp_path / "p.json"
    pred.write_text((DEMO_DIR / kind / name).read_text()[:300])
    _fails(capsys, ["score", kind, *_gt(kind), "--pred", str(pred)], tmp_path / "o.json",
           "p.json", "not valid JSON", "line")


@pytest.mark.parametrize("kind", ["r2sm", "cgebench", "ovs", "hallusegbench"])
def test_missing_ground_truth_file(kind, tmp_path, capsys):
    argv = demo_argv(kind)
    i = argv.index("--data" if kind == "hallusegbench" else "--ann")
    argv[i + 1] = str(tmp_path / "nope.json")
    _fails(capsys, ["score", kind, *argv], tmp_path / "o.json", "nope.json", "not found")


def test_missing_prediction_folder(tmp_path, capsys):
    _fails(capsys, ["score", "hallusegbench", *_gt("hallusegbench"), "--pred-dir", str(tmp_path / "none")],
           tmp_path / "o.json", "none", "prediction directory not found")


# ------------------------------------------------------------------ ground truth
@pytest.mark.parametrize(("kind", "key", "field"), [("r2sm", "amodal_segmentation", "'amodal_segmentation'"),
                                                    ("r2sm", "segmentation", "'segmentation'"),
                                                    ("cgebench", "segmentation", "'segmentation'"),
                                                    ("ovs", "segmentation", "'segmentation'")])
def test_ground_truth_mask_of_the_wrong_size(kind, key, field, tmp_path, capsys):
    """Used to pass silently (R2SM) or hang (CGEBench): now a clear error."""
    ann = _edit(DEMO_DIR / kind / "ann.json", tmp_path / "ann.json",
                lambda d: d["annotations"][1].update({key: SMALL}))
    argv = demo_argv(kind)
    argv[argv.index("--ann") + 1] = str(ann)
    _fails(capsys, ["score", kind, *argv], tmp_path / "o.json",
           "ann.json", "annotation id", field, "10x12", "differs from the image size")


def test_hallusegbench_prediction_folder_with_other_names(tmp_path, capsys):
    """Not one PNG named as the official layout wants: an error, not a table of blanks."""
    pred = tmp_path / "pred" / "orgl_orgi"
    pred.mkdir(parents=True)
    shutil.copy(next((DEMO_DIR / "hallusegbench" / "pred_demo" / "orgl_orgi").glob("*.png")), pred / "0001.png")
    _fails(capsys, ["score", "hallusegbench", *_gt("hallusegbench"), "--pred-dir", str(pred.parent)],
           tmp_path / "o.json", "none of the 44 expected", "orgl_orgi/0001_101_mask.png", "found e.g.")


def test_hallusegbench_undecodable_prediction_png(tmp_path, capsys):
    pred = tmp_path / "pred"
    shutil.copytree(DEMO_DIR / "hallusegbench" / "pred_demo", pred)
    bad = next((pred / "edtl_orgi").glob("*.png"))
    bad.write_bytes(b"not a png")
    _fails(capsys, ["score", "hallusegbench", *_gt("hallusegbench"), "--pred-dir", str(pred)],
           tmp_path / "o.json", bad.name, "cannot decode")


def test_ovs_missing_threshold_key(tmp_path, capsys):
    pred = _edit(DEMO_DIR / "ovs" / "pred.json", tmp_path / "p.json",
                 lambda d: d["predictions"][2]["masks"].pop("0.5"))
    _fails(capsys, ["score", "ovs", *_gt("ovs"), "--pred", str(pred)], tmp_path / "o.json",
           "p.json", "[2]", "'masks'", "0.5")


def test_ovs_masks_of_mixed_sizes(tmp_path, capsys):
    pred = _edit(DEMO_DIR / "ovs" / "pred.json", tmp_path / "p.json",
                 lambda d: d["predictions"][2]["masks"].update({"0.5": SMALL}))
    _fails(capsys, ["score", "ovs", *_gt("ovs"), "--pred", str(pred)], tmp_path / "o.json",
           "p.json", "[2]", "'masks.0.5'", "10x12", "one size")


# ------------------------------------------------------------------ parameters, kinds, models
@pytest.mark.parametrize(("kind", "flag", "value"), [("r2sm", "--score-threshold", "2"),
                                                     ("cgebench", "--score-threshold", "nan"),
                                                     ("ovs", "--av-threshold", "1.5"),
                                                     ("hallusegbench", "--alpha", "-1")])
def test_parameter_out_of_range(kind, flag, value, tmp_path, capsys):
    _fails(capsys, ["score", kind, *demo_argv(kind), flag, value], tmp_path / "o.json", flag)


def test_non_numeric_parameter_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["score", "r2sm", *demo_argv("r2sm"), "--score-threshold", "abc"])
    assert exc.value.code == 2
    assert "--score-threshold" in capsys.readouterr().err


def test_unknown_kind(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["score", "nosuchkind"])
    assert exc.value.code == 2
    assert "invalid choice: 'nosuchkind'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_unknown_model(command, tmp_path, capsys):
    _fails(capsys, [command, "r2sm", *_gt("r2sm"), "--model", "nosuch"], tmp_path / "o",
           "unknown model 'nosuch'", "masklens models")


def test_predict_without_images_names_the_image(tmp_path, capsys):
    argv = _gt("r2sm")
    argv[argv.index("--images") + 1] = str(tmp_path / "noimages")
    _fails(capsys, ["predict", "r2sm", *argv, "--model", "demo", "--no-cache", "--quiet"],
           tmp_path / "o.json", "noimages", "image file not found")


def test_report_with_bad_predictions_writes_no_folder(tmp_path, capsys):
    pred = _edit(DEMO_DIR / "r2sm" / "pred_demo.json", tmp_path / "p.json", lambda d: d[3].update(score="x"))
    _fails(capsys, ["report", "r2sm", *_gt("r2sm"), "--pred", str(pred)], tmp_path / "rep",
           "p.json", "'score'")


def test_score_out_is_a_folder(tmp_path, capsys):
    (tmp_path / "dir").mkdir()
    rc = main(["score", "r2sm", *demo_argv("r2sm"), "--out", str(tmp_path / "dir")])
    assert rc != 0 and "dir" in capsys.readouterr().err


# ------------------------------------------------------------------ predictions of another benchmark
@pytest.mark.parametrize(("kind", "other", "needles"), [
    ("cafe", "cgebench", ("CGEBench predictions", "'level'")),  # image ids coincide: caught by its fields
    ("cafe", "r2sm", ("R2SM predictions", "'query_id'")),
    ("pcs", "cgebench", ("CGEBench predictions", "'level'")),
    ("pcs", "cafe", ("21 of 41 records point to no image or prompt", "another benchmark")),
])
def test_predictions_of_another_benchmark_are_refused(kind, other, needles, tmp_path, capsys):
    pred = DEMO_DIR / other / "pred_demo.json"
    _fails(capsys, ["score", kind, *_gt(kind), "--pred", str(pred)], tmp_path / "o.json",
           "pred_demo.json", *needles)

"""Hostile inputs, one by one, through the command line: each ends in one message naming
file, record and field (exit 2, no traceback, no output), or — for text a report only shows —
in a report. Inputs are a private copy of the bundled demo with one thing made hostile."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from masklens.core.cli import main
from masklens.core.kinds.demo import DEMO_DIR, demo_argv


@pytest.fixture
def demo(tmp_path):
    shutil.copytree(DEMO_DIR, tmp_path / "demo")
    return tmp_path / "demo"


def _edit(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def _fails(capsys, argv, out: Path, *needles: str) -> str:
    rc = main([*argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err, err
    assert err.startswith("masklens: error:"), err
    for n in needles:
        assert n in err, (n, err)
    assert not out.exists()
    return err


def _negative(images):
    return next(im for im in images if "fp_source_id" in im)


@pytest.mark.parametrize("value", [True, 1.0, None, [1]])
def test_cafe_fp_source_id_must_be_an_id_not_a_bool(demo, tmp_path, capsys, value):
    _edit(demo / "cafe/ann.json", lambda d: _negative(d["images"]).update(fp_source_id=value))
    _fails(capsys, ["score", "cafe", *demo_argv("cafe", root=demo)], tmp_path / "o.json",
           "ann.json", "field 'fp_source_id'")


@pytest.mark.parametrize("value", [["a"], None, {}, [0.1, "0.2"], [True] * 9, [10**400] * 9])
def test_ovs_thresholds_must_be_the_nine_numbers(demo, tmp_path, capsys, value):
    _edit(demo / "ovs/pred.json", lambda d: d.update(thresholds=value))
    _fails(capsys, ["score", "ovs", *demo_argv("ovs", root=demo)], tmp_path / "o.json",
           "pred.json", "field 'thresholds'")


@pytest.mark.parametrize("kind", ["ovs", "cafe"])
def test_file_name_must_be_a_string(demo, tmp_path, capsys, kind):
    ann = demo / kind / "ann.json"
    _edit(ann, lambda d: d["images"][0].update(file_name=5))
    _fails(capsys, ["report", kind, *demo_argv(kind, root=demo)], tmp_path / "rep", "field 'file_name'")


def test_ovs_score_maps_complex_empty_and_huge_headers(demo, tmp_path, capsys):
    pred = demo / "ovs/pred.json"
    maps = demo / "ovs/maps"
    maps.mkdir()

    def to_map(d):
        rec = d["predictions"][0]
        del rec["masks"]
        rec["score_map"] = "maps/a.npy"

    _edit(pred, to_map)
    argv = ["score", "ovs", *demo_argv("ovs", root=demo)]
    np.save(maps / "a.npy", np.full((256, 320), 0.5 + 0.5j))
    _fails(capsys, argv, tmp_path / "o.json", "field 'score_map'", "complex128")
    np.save(maps / "a.npy", np.zeros((0, 0)))
    _fails(capsys, argv, tmp_path / "o.json", "field 'score_map'", "is empty")
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000), }"
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    (maps / "a.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
    _fails(capsys, argv, tmp_path / "o.json", "field 'score_map'", "larger than the limit")
    (maps / "a.npy").unlink()
    os.mkfifo(maps / "a.npy")
    _fails(capsys, argv, tmp_path / "o.json", "field 'score_map'", "FIFO")


@pytest.mark.parametrize("kind", ["cafe", "r2sm", "ovs"])
def test_a_fifo_or_a_device_as_input_is_refused_at_once(demo, tmp_path, capsys, kind):
    argv = demo_argv(kind, root=demo)
    i = argv.index("--pred") + 1
    os.mkfifo(tmp_path / "fifo.json")
    for bad in (str(tmp_path / "fifo.json"), "/dev/zero"):
        argv[i] = bad
        _fails(capsys, ["score", kind, *argv], tmp_path / "o.json", bad, "only regular files are read")


def test_polygon_nan_and_rle_size_beyond_the_limit(demo, tmp_path, capsys):
    pred = demo / "cafe/pred_demo.json"
    _edit(pred, lambda d: d[0].update(segmentation=[[10, 10, float("nan"), 10, 50, 50]]))
    _fails(capsys, ["score", "cafe", *demo_argv("cafe", root=demo)], tmp_path / "o.json",
           "record [0]", "field 'segmentation'", "polygon coordinate x=nan")
    _edit(pred, lambda d: d[0].update(segmentation={"size": [100000, 100000], "counts": "0"}))
    _fails(capsys, ["score", "cafe", *demo_argv("cafe", root=demo)], tmp_path / "o.json",
           "field 'segmentation'", "100000 × 100000 pixels is larger than the limit")


def test_lone_surrogate_in_a_text_still_writes_the_report(demo, tmp_path, capsys):
    _edit(demo / "cafe/ann.json", lambda d: d["images"][0].update(text_input="sq\ud800uare"))
    out = tmp_path / "rep"
    assert main(["report", "cafe", *demo_argv("cafe", root=demo), "--no-sweep", "--out", str(out)]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "sq?uare" in html
    assert main(["score", "cafe", *demo_argv("cafe", root=demo)]) == 0  # the table on stdout too


@pytest.mark.parametrize("kind", ["cafe", "pcs", "r2sm"])
def test_an_integer_too_large_for_a_float_as_score_or_coordinate(demo, tmp_path, capsys, kind):
    """10**400 parses (it has fewer than 4300 digits) but math.isfinite(10**400) raises."""
    pred = next((demo / kind).glob("pred*.json"))
    _edit(pred, lambda d: d[0].update(score=10**400))
    _fails(capsys, ["score", kind, *demo_argv(kind, root=demo)], tmp_path / "o.json",
           "record [0]", "field 'score'")
    _edit(pred, lambda d: d[0].update(score=0.5, segmentation=[[10, 10, 10**400, 10, 50, 50]]))
    _fails(capsys, ["score", kind, *demo_argv(kind, root=demo)], tmp_path / "o.json",
           "field 'segmentation'", "polygon coordinate x=")


@pytest.mark.parametrize("kind", ["r2sm", "ovs"])
def test_a_lone_surrogate_as_file_name(demo, tmp_path, capsys, kind):
    """'\\ud800' cannot be encoded as a file name: a message, not a UnicodeEncodeError."""
    ann = demo / kind / "ann.json"
    ann.write_text(ann.read_text().replace('"file_name": "', '"file_name": "\\ud800', 1))
    _fails(capsys, ["report", kind, *demo_argv(kind, root=demo), "--no-sweep"], tmp_path / "rep",
           "field 'file_name'")

"""`masklens score cafe|pcs` end to end: JSON/table output, bad input (one clear message, exit 2,
no output file), and the write_predictions → load_predictions round trip."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from masklens.core.cli import main
from masklens.core.errors import DataFormatError
from masklens.core.kinds.cafe import kind as cafe
from masklens.core.kinds.pcs import kind as pcs
from masklens.core.scoring.contract import Scorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
from cafe_synth import NEG_OFFSET, synth_cafe, synth_pcs  # noqa: E402


@pytest.fixture
def cafe_files(tmp_path: Path) -> tuple[Path, Path]:
    ann, preds = synth_cafe(7, 12, height=24, width=24)
    a, p = tmp_path / "ann.json", tmp_path / "pred.json"
    a.write_text(json.dumps(ann))
    p.write_text(json.dumps(preds))
    return a, p


@pytest.fixture
def pcs_files(tmp_path: Path) -> tuple[list[Path], Path]:
    files, preds = synth_pcs(7, 10, height=24, width=24)
    gts = []
    for i, f in enumerate(files):
        gts.append(tmp_path / f"gt{i}.json")
        gts[-1].write_text(json.dumps(f))
    p = tmp_path / "pred.json"
    p.write_text(json.dumps(preds))
    return gts, p


def cafe_argv(a: Path, p: Path, out: Path) -> list[str]:
    return ["score", "cafe", "--ann", str(a), "--pred", str(p), "--out", str(out)]


def pcs_argv(gts: list[Path], p: Path, out: Path) -> list[str]:
    return [
        "score",
        "pcs",
        *sum((["--gt", str(g)] for g in gts), []),
        "--pred",
        str(p),
        "--out",
        str(out),
    ]


def test_cafe_json_output(cafe_files, tmp_path, capsys) -> None:
    out = tmp_path / "res.json"
    assert (
        main([*cafe_argv(*cafe_files, out), "--score-threshold", "0.4", "--iou-threshold", "0.5"])
        == 0
    )
    text = out.read_text()
    assert "NaN" not in text
    res = json.loads(text)
    assert res["benchmark"] == "cafe"
    assert res["params"] == {"score_threshold": 0.4, "iou_threshold": 0.5}
    assert list(res["summary"]) == ["Overall", "SM", "CC", "OC"]
    assert res["summary"]["Overall"]["N"] == 12 == len(res["samples"])
    assert sum(res["summary"][g]["N"] for g in ("SM", "CC", "OC")) == 12


def test_cafe_table_without_out(cafe_files, capsys) -> None:
    a, p = cafe_files
    assert main(["score", "cafe", "--ann", str(a), "--pred", str(p)]) == 0
    shown = capsys.readouterr().out
    assert "CAFE" in shown and "AFPR" in shown and "cgF1" in shown and "Overall" in shown


def test_pcs_json_output(pcs_files, tmp_path) -> None:
    out = tmp_path / "res.json"
    assert main(pcs_argv(*pcs_files, out)) == 0
    res = json.loads(out.read_text())
    assert list(res["summary"]) == ["all"]
    assert {"cgF1", "IL_MCC", "pmF1", "IL_FPR", "cgF1@0.5", "cgF1@0.75", "pmF1@0.5"} <= set(
        res["summary"]["all"]
    )


def _edit(path: Path, fn: Callable[[object], object]) -> None:
    path.write_text(json.dumps(fn(json.loads(path.read_text()))))


def _set(i: int, key: str, value: object) -> Callable[[list], list]:
    def fn(recs: list) -> list:
        recs[i][key] = value
        return recs

    return fn


def _ann_image(image_id: int, key: str, value: object) -> Callable[[dict], dict]:
    def fn(data: dict) -> dict:
        for im in data["images"]:
            if im["id"] == image_id:
                if value is ...:
                    im.pop(key)
                else:
                    im[key] = value
        return data

    return fn


def _first_ann(key: str, value: object) -> Callable[[dict], dict]:
    def fn(data: dict) -> dict:
        data["annotations"][0][key] = value
        return data

    return fn


BAD_CAFE = {
    "truncated pred": ("pred", None, ["pred.json", "not valid JSON"]),
    "truncated ann": ("ann", None, ["ann.json", "not valid JSON"]),
    "missing pred": ("pred", "delete", ["pred.json", "file not found"]),
    "corrupt RLE": ("pred", _set(0, "segmentation", {"size": [24, 24], "counts": "zz~~"}), ["[0]", "corrupt RLE"]),
    # '?aa0' is a sound 24x24 RLE: a non-ASCII first character must not be read as '?'
    "non-ASCII RLE": ("pred", _set(0, "segmentation", {"size": [24, 24], "counts": "\u00e9aa0"}), ["[0]", "RLE alphabet"]),
    "non-numeric score": ("pred", _set(1, "score", "high"), ["[1]", "score"]),
    "image_id nowhere": ("pred", _set(2, "image_id", 424242), ["[2]", "image_id=424242"]),
    "zero-size mask": ("pred", _set(0, "segmentation", {"size": [0, 0], "counts": ""}), ["[0]", "0x0"]),
    "gt mask wrong size": ("ann", _first_ann("segmentation", {"size": [5, 5], "counts": [25]}), ["annotation id 1", "differs"]),
    "fp_source_id nowhere": ("ann", _ann_image(1 + NEG_OFFSET, "fp_source_id", 99), ["fp_source_id", f"image id {1 + NEG_OFFSET}"]),
    "unknown edit_type": ("ann", _ann_image(1 + NEG_OFFSET, "edit_type", "Bogus"), ["edit_type", "Bogus"]),
    "no annotation at all": ("ann", lambda d: dict(d, annotations=[]), ["ann.json", "no pair to score"]),
    "missing text_input": ("ann", _ann_image(2, "text_input", ...), ["image id 2", "text_input"]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_CAFE))
def test_cafe_bad_input(case, cafe_files, tmp_path, capsys) -> None:
    a, p = cafe_files
    which, change, needles = BAD_CAFE[case]
    target = a if which == "ann" else p
    if change is None:
        target.write_text(target.read_text()[: len(target.read_text()) // 2])
    elif change == "delete":
        target.unlink()
    else:
        _edit(target, change)
    out = tmp_path / "res.json"
    assert main(cafe_argv(a, p, out)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("masklens: error:") and "Traceback" not in err
    assert len(err.splitlines()) <= 2  # the message (+ an optional hint line)
    for needle in needles:
        assert needle in err
    assert not out.exists() and not list(tmp_path.glob(".res.json*"))


BAD_PCS = {
    "corrupt gt RLE": (0, _first_ann("segmentation", {"size": [24, 24], "counts": "!!"}), ["gt0.json", "annotation id 1"]),
    "bad iscrowd": (1, _first_ann("iscrowd", "yes"), ["gt1.json", "iscrowd"]),
    "bad exhaustive flag": (2, _ann_image(100, "is_instance_exhaustive", "maybe"), ["gt2.json", "is_instance_exhaustive"]),
    "annotators disagree on entries": (2, lambda d: dict(d, images=d["images"][1:], annotations=[a for a in d["annotations"] if a["image_id"] != 100]), ["gt2.json", "image id 100", "missing image entry"]),
    "entry size differs": (1, _ann_image(101, "height", 30), ["gt1.json", "image id 101"]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_PCS))
def test_pcs_bad_input(case, pcs_files, tmp_path, capsys) -> None:
    gts, p = pcs_files
    which, change, needles = BAD_PCS[case]
    _edit(gts[which], change)
    out = tmp_path / "res.json"
    assert main(pcs_argv(gts, p, out)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("masklens: error:") and "Traceback" not in err
    for needle in needles:
        assert needle in err
    assert not out.exists()


def test_pcs_pred_pointing_nowhere(pcs_files, tmp_path, capsys) -> None:
    gts, p = pcs_files
    _edit(p, _set(0, "image_id", 5))
    assert main(pcs_argv(gts, p, tmp_path / "r.json")) == 2
    assert "image_id=5" in capsys.readouterr().err


def test_cafe_round_trip(cafe_files, tmp_path) -> None:
    a, p = cafe_files
    args = argparse.Namespace(ann=str(a), pred=str(p), images=None)
    bench = cafe.KIND.load_benchmark(**vars(args))
    preds = cafe.KIND.load_predictions(bench, **vars(args))
    (tmp_path / "out").mkdir()
    written = cafe.KIND.write_predictions(bench, preds, tmp_path / "out")  # an existing folder
    assert written == [tmp_path / "out" / "cafe_results.json"]
    plain = tmp_path / "plain"  # a path without .json, as a user types it: written as is
    assert cafe.KIND.write_predictions(bench, preds, plain) == [plain] and plain.is_file()
    again = cafe.KIND.load_predictions(bench, pred=str(written[0]))
    assert set(again.by_prompt) == set(preds.by_prompt)
    for pid, pred in preds.by_prompt.items():
        got = again.by_prompt[pid]
        assert [(i.mask, i.score) for i in got.instances] == [
            (i.mask, i.score) for i in pred.instances
        ]
    assert sum(len(x.instances) for x in preds.by_prompt.values()) > 0


def test_pcs_round_trip(pcs_files, tmp_path) -> None:
    gts, p = pcs_files
    args = argparse.Namespace(gt=[str(g) for g in gts], pred=str(p), images=None)
    bench = pcs.KIND.load_benchmark(**vars(args))
    preds = pcs.KIND.load_predictions(bench, **vars(args))
    out = tmp_path / "x.json"
    assert pcs.KIND.write_predictions(bench, preds, out) == [out]
    again = pcs.KIND.load_predictions(bench, pred=str(out))
    for pid, pred in preds.by_prompt.items():
        assert [(i.mask, i.score) for i in again.by_prompt[pid].instances] == [
            (i.mask, i.score) for i in pred.instances
        ]


def test_predictions_on_unpaired_images_count_in_cgf1(cafe_files, tmp_path) -> None:
    """Records on an image of the file that is in no pair are read and scored as that entry's
    predictions for cgF1 (CAFE's run_eval.sh runs SAM 3's CGF1Evaluator over every image
    entry of the file); they used to be dropped."""
    a, p = cafe_files
    data = json.loads(a.read_text())
    data["images"] = [im for im in data["images"] if im["id"] != 3 + NEG_OFFSET]  # unpair image 3
    a.write_text(json.dumps(data))
    args = argparse.Namespace(ann=str(a), pred=str(p), images=None)
    bench = cafe.KIND.load_benchmark(**vars(args))
    assert len(bench.samples) == 11 and bench.meta["unpaired_positives"] == 1
    recs = json.loads(p.read_text())
    assert sum(r["image_id"] == 3 + NEG_OFFSET for r in recs) == 3  # (seed 7)
    with pytest.raises(DataFormatError, match="points to no image"):  # the removed negative's
        cafe.KIND.load_predictions(bench, **vars(args))
    p.write_text(json.dumps([r for r in recs if r["image_id"] != 3 + NEG_OFFSET]))
    preds = cafe.KIND.load_predictions(bench, **vars(args))
    on_3 = sum(r["image_id"] == 3 for r in json.loads(p.read_text()))
    assert preds.provenance["ignored_records"] == 0
    assert len(preds.get("entry:3").instances) == on_3 == 5
    res = Scorer(cafe.KIND, bench, preds).rescore()
    assert res.summary["Overall"]["N"] == 11 and res.summary["Overall"]["N_entries"] == 23

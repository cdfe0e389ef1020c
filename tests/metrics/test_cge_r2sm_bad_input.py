"""Bad input for `masklens score cgebench|r2sm`: exit 2, one clear line naming file/record/field, no output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cge_kind import build as build_cge
from test_r2sm_kind import build as build_r2sm

from masklens.core.cli import main


def run(capsys, argv: list[str], out: Path) -> str:
    code = main([*argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert not out.exists()
    assert "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if not ln.strip().startswith("hint:")]
    assert len(lines) == 1, err
    return err


def edit(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


# ------------------------------------------------------------------ CGEBench
CGE_CASES = {
    "truncated ann": ("ann", lambda p: p.write_text(p.read_text()[:50]), ["not valid JSON"]),
    "missing hypernyms": ("ann", lambda p: edit(p, lambda d: d["images"][1].pop("hypernyms")),
                          ["image id 2", "'hypernyms'", "missing"]),
    "two hypernyms": ("ann", lambda p: edit(p, lambda d: d["images"][0].update(hypernyms=["a", "b"])),
                      ["image id 1", "'hypernyms'"]),
    "no text_input": ("ann", lambda p: edit(p, lambda d: d["images"][0].pop("text_input")), ["image id 1", "'text_input'"]),
    "corrupt gt RLE": ("ann", lambda p: edit(p, lambda d: d["annotations"][0]["segmentation"].update(counts="zz!")),
                       ["annotation id 11", "'segmentation'", "corrupt RLE"]),
    "bad iscrowd": ("ann", lambda p: edit(p, lambda d: d["annotations"][0].update(iscrowd=7)), ["annotation id 11", "'iscrowd'"]),
    "non-numeric score": ("pred", lambda p: edit(p, lambda d: d[2].update(score="high")), ["[2]", "'score'"]),
    "image_id nowhere": ("pred", lambda p: edit(p, lambda d: d[0].update(image_id=99)), ["[0]", "image_id=99", "points to no"]),
    "missing level": ("pred", lambda p: edit(p, lambda d: d[1].pop("level")), ["[1]", "'level'", "missing"]),
    "level out of range": ("pred", lambda p: edit(p, lambda d: d[1].update(level=4)), ["level=4", "'level'", "0..3"]),
    "corrupt pred RLE": ("pred", lambda p: edit(p, lambda d: d[0]["segmentation"].update(size=[10])), ["[0]", "'segmentation'"]),
    "missing pred file": ("pred", lambda p: p.unlink(), ["file not found"]),
}


# ------------------------------------------------------------------ R2SM
R2SM_CASES = {
    "truncated ann": ("ann", lambda p: p.write_text(p.read_text()[:-3]), ["not valid JSON"]),
    "no queries": ("ann", lambda p: edit(p, lambda d: d.pop("queries")), ["'queries'"]),
    "ann_ids nowhere": ("ann", lambda p: edit(p, lambda d: d["queries"][2].update(ann_ids=[102, 999])),
                        ["query id 3", "'ann_ids'", "ann_ids[1] = 999 points to no annotation"]),
    "ann of other image": ("ann", lambda p: edit(p, lambda d: d["queries"][0].update(ann_ids=[201])),
                           ["query id 1", "'ann_ids'", "belongs to image 2"]),
    "amodal not bool": ("ann", lambda p: edit(p, lambda d: d["queries"][1].update(amodal="yes")), ["query id 2", "'amodal'"]),
    "query image nowhere": ("ann", lambda p: edit(p, lambda d: d["queries"][1].update(image_id=42)),
                            ["query id 2", "'image_id'"]),
    "duplicate query id": ("ann", lambda p: edit(p, lambda d: d["queries"][1].update(id=1)), ["query id 1", "duplicate"]),
    "missing amodal mask": ("ann", lambda p: edit(p, lambda d: d["annotations"][1].pop("amodal_segmentation")),
                            ["annotation id 102", "'amodal_segmentation'"]),
    "corrupt amodal RLE": ("ann", lambda p: edit(p, lambda d: d["annotations"][0]["amodal_segmentation"].update(counts="!!!!")),
                           ["annotation id 101", "'amodal_segmentation'", "corrupt RLE"]),
    "query_id nowhere": ("pred", lambda p: edit(p, lambda d: d[1].update(query_id=77)), ["[1]", "query_id=77", "points to no"]),
    "query_id missing": ("pred", lambda p: edit(p, lambda d: d[1].pop("query_id")), ["[1]", "'query_id'", "missing"]),
    "image_id mismatch": ("pred", lambda p: edit(p, lambda d: d[0].update(image_id=2)), ["query_id=1", "'image_id'"]),
    "nan score": ("pred", lambda p: p.write_text(p.read_text().replace('"score": 0.9', '"score": NaN')), ["[1]", "'score'"]),
    "pred not a list": ("pred", lambda p: p.write_text('{"a": 1}'), ["expected a JSON list"]),
}


KINDS = {"cgebench": (build_cge, CGE_CASES), "r2sm": (build_r2sm, R2SM_CASES)}


@pytest.mark.parametrize(("kind", "case"), [(k, c) for k, (_, cases) in KINDS.items() for c in sorted(cases)])
def test_bad_input(kind, case, tmp_path, capsys):
    build, cases = KINDS[kind]
    ann, pred = build(tmp_path)
    which, spoil, expected = cases[case]
    target = ann if which == "ann" else pred
    spoil(target)
    err = run(capsys, ["score", kind, "--ann", str(ann), "--pred", str(pred)], tmp_path / "out.json")
    assert str(target) in err
    for piece in expected:
        assert piece in err, (piece, err)


def test_existing_output_is_left_untouched_on_error(tmp_path, capsys):
    ann, pred = build_r2sm(tmp_path)
    out = tmp_path / "out.json"
    out.write_text("previous")
    edit(pred, lambda d: d[0].update(score=None))
    assert main(["score", "r2sm", "--ann", str(ann), "--pred", str(pred), "--out", str(out)]) == 2
    assert out.read_text() == "previous"

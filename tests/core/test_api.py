"""The Python API (masklens.core.api, re-exported from masklens.core): keyword names of the CLI
flags, the same results as the CLI, re-scoring, prediction, clear errors, a light import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import masklens.core as ml
from masklens.core.cli import main
from masklens.core.errors import MasklensError

ROOT = Path(__file__).resolve().parents[2]
D = "resources/demo"

#: kind -> (API keywords named as the CLI flags, the same as CLI words, a parameter to set)
CASES = {
    "cafe": ({"ann": f"{D}/cafe/ann.json", "pred": f"{D}/cafe/pred_demo.json"},
             ["--ann", f"{D}/cafe/ann.json", "--pred", f"{D}/cafe/pred_demo.json"],
             ("score_threshold", "--score-threshold", 0.4)),
    "pcs": ({"gt": [f"{D}/pcs/gold_annotator_{i}.json" for i in (1, 2, 3)], "pred": f"{D}/pcs/pred_demo.json"},
            [w for i in (1, 2, 3) for w in ("--gt", f"{D}/pcs/gold_annotator_{i}.json")]
            + ["--pred", f"{D}/pcs/pred_demo.json"],
            ("score_threshold", "--score-threshold", 0.4)),
    "hallusegbench": ({"data": f"{D}/hallusegbench/data.json", "root": f"{D}/hallusegbench",
                       "pred_dir": f"{D}/hallusegbench/pred_demo"},
                      ["--data", f"{D}/hallusegbench/data.json", "--root", f"{D}/hallusegbench",
                       "--pred-dir", f"{D}/hallusegbench/pred_demo"],
                      ("alpha", "--alpha", 2.0)),
    "cgebench": ({"ann": f"{D}/cgebench/ann.json", "pred": f"{D}/cgebench/pred_demo.json"},
                 ["--ann", f"{D}/cgebench/ann.json", "--pred", f"{D}/cgebench/pred_demo.json"],
                 ("score_threshold", "--score-threshold", 0.6)),
    "r2sm": ({"ann": f"{D}/r2sm/ann.json", "pred": f"{D}/r2sm/pred_demo.json"},
             ["--ann", f"{D}/r2sm/ann.json", "--pred", f"{D}/r2sm/pred_demo.json"],
             ("score_threshold", "--score-threshold", 0.3)),
    "ovs": ({"ann": f"{D}/ovs/ann.json", "pred": f"{D}/ovs/pred.json"},
            ["--ann", f"{D}/ovs/ann.json", "--pred", f"{D}/ovs/pred.json"],
            ("av_threshold", "--av-threshold", 0.6)),
}


@pytest.fixture(autouse=True)
def in_repo(monkeypatch):
    monkeypatch.chdir(ROOT)  # the paths above are relative, as a notebook beside the repo has them


def test_the_notebook_line_scores_the_demo(tmp_path):
    r = ml.score("cafe", ann="resources/demo/cafe/ann.json",
                 pred="resources/demo/cafe/pred_demo.json", score_threshold=0.5)
    out = tmp_path / "s.json"
    assert main(["score", "cafe", "--ann", "resources/demo/cafe/ann.json",
                 "--pred", "resources/demo/cafe/pred_demo.json", "--out", str(out)]) == 0
    assert r.summary == json.loads(out.read_text())["summary"]
    assert r.samples == json.loads(out.read_text())["samples"]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_score_equals_the_cli_for_every_demo_kind(kind, tmp_path):
    files, words, (name, flag, value) = CASES[kind]
    out = tmp_path / "s.json"
    assert main(["score", kind, *words, flag, str(value), "--out", str(out)]) == 0
    cli = json.loads(out.read_text())
    r = ml.score(kind, **files, **{name: value})
    assert r.summary == cli["summary"]
    assert r.params == cli["params"] and r.params[name] == value
    assert r.samples == cli["samples"]
    default = ml.score(kind, **files)  # the parameter took effect
    assert default.params[name] != value


def test_out_writes_what_the_cli_writes(tmp_path):
    files, words, _ = CASES["r2sm"]
    assert main(["score", "r2sm", *words, "--out", str(tmp_path / "cli.json")]) == 0
    ml.score("r2sm", **files, out=tmp_path / "api.json")
    api, cli = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("api", "cli"))
    for written in (api, cli):  # the time each was written at (a second apart on a busy machine)
        assert written["provenance"].pop("created_utc")
    assert api == cli


def test_scorer_rescores_at_new_parameters_without_reloading():
    files, _, _ = CASES["cafe"]
    s = ml.Scorer("cafe", **files)
    overlaps = list(s.overlaps)
    low = s.rescore(score_threshold=0.2, iou_threshold=0.5)
    assert low.summary == ml.score("cafe", **files, score_threshold=0.2, iou_threshold=0.5).summary
    assert s.rescore().summary == ml.score("cafe", **files).summary
    assert low.summary != s.rescore().summary
    assert s.rescore({"score_threshold": 0.2}, iou_threshold=0.5).summary == low.summary
    assert all(a is b for a, b in zip(s.overlaps, overlaps, strict=True))  # nothing recomputed


def test_loaded_objects_stand_in_for_files():
    files, _, _ = CASES["cgebench"]
    bench = ml.load_benchmark("cgebench", ann=files["ann"])
    preds = ml.load_predictions("cgebench", bench, pred=files["pred"])
    assert len(bench.samples) > 0 and preds.by_prompt
    assert ml.score("cgebench", bench, preds).summary == ml.score("cgebench", **files).summary
    assert ml.score("cgebench", benchmark=bench, pred=files["pred"]).summary == ml.score("cgebench", **files).summary


def test_one_gt_file_may_be_given_without_a_list():
    bench = ml.load_benchmark("pcs", gt=f"{D}/pcs/gold_annotator_1.json")
    assert bench.samples


def test_bad_keywords_and_values_are_clear_errors():
    files, _, _ = CASES["cafe"]
    with pytest.raises(MasklensError, match=r"(?s)CAFE takes no argument annotations=.*ann= \(--ann\)"):
        ml.score("cafe", annotations=files["ann"], pred=files["pred"])
    with pytest.raises(MasklensError, match=r"CAFE needs ann= \(--ann\)"):
        ml.load_benchmark("cafe")
    with pytest.raises(MasklensError, match=r"CAFE needs pred= \(--pred\)"):
        ml.score("cafe", ann=files["ann"])
    with pytest.raises(MasklensError, match=r"score_threshold= must be a number in \[0, 1\], got 2"):
        ml.score("cafe", **files, score_threshold=2)
    with pytest.raises(MasklensError, match="unknown benchmark kind 'coco'"):
        ml.score("coco", **files)


def test_to_dataframe_when_pandas_is_installed_else_a_clear_error():
    r = ml.score("cafe", **CASES["cafe"][0])
    try:
        import pandas  # noqa: F401 - not a dependency of masklens
    except ModuleNotFoundError:
        with pytest.raises(MasklensError, match="needs pandas, which is not installed: pip install pandas"):
            r.to_dataframe()
        return
    frame = r.to_dataframe()
    assert len(frame) == len(r.samples)
    assert list(frame["id"]) == [s["id"] for s in r.samples]


def test_predict_with_the_demo_model_equals_the_cli_output(tmp_path):
    ann, images = f"{D}/cafe/ann.json", f"{D}/cafe/images"
    preds = ml.predict("cafe", "demo", ann=ann, images=images, no_cache=True, out=tmp_path / "api.json")
    assert main(["predict", "cafe", "--model", "demo", "--ann", ann, "--images", images, "--no-cache",
                 "--quiet", "--out", str(tmp_path / "cli.json")]) == 0
    assert json.loads((tmp_path / "api.json").read_text()) == json.loads((tmp_path / "cli.json").read_text())
    bench = ml.load_benchmark("cafe", ann=ann, images=images)
    assert ml.score("cafe", bench, preds).summary == ml.score("cafe", ann=ann, pred=tmp_path / "api.json").summary


def test_segmenter_by_name_and_predict_with_it(tmp_path):
    seg = ml.segmenter("demo", device="cpu")
    assert seg.info.name == "demo"
    ann, images = f"{D}/r2sm/ann.json", f"{D}/r2sm/images"
    a = ml.predict("r2sm", seg, ann=ann, images=images, cache_dir=tmp_path / "cache")
    b = ml.predict("r2sm", "demo", ann=ann, images=images, cache_dir=tmp_path / "cache")  # from the cache
    assert set(a.by_prompt) == set(b.by_prompt) and a.by_prompt
    assert "demo" in ml.model_names() and "cafe" in ml.kind_names()
    with pytest.raises(MasklensError, match="unknown model 'nope'"):
        ml.segmenter("nope")


def test_import_masklens_core_is_light_and_lazy():
    code = (
        "import json, sys\n"
        "import masklens.core as ml\n"
        "first = sorted(m for m in ('masklens.core.api', 'numpy', 'argparse') if m in sys.modules)\n"
        "ml.score, ml.Scorer, ml.segmenter, ml.predict, ml.load_benchmark, ml.__version__\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'PySide6', 'huggingface_hub', 'sam2') "
        "if m in sys.modules)\n"
        "print(json.dumps([first, heavy, 'masklens.core.api' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [[], [], True]

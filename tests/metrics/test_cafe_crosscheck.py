"""masklens vs the official CAFE and SAM 3 evaluators, run side by side on generated fixtures.

SAM 3's ``cgf1_eval.py`` (facebookresearch/sam3, ``sam3/eval/``) is read from the ``sam3``
package on the index, which ``make setup`` installs without its dependencies: the file is loaded
on its own, never through ``import sam3`` (whose model code needs torch). ``MASKLENS_OFFICIAL``
may name a folder holding the official files instead, unmodified and never committed here:
``cgf1_eval.py`` and CAFE's ``eval_cafe_metrics.py`` (T-S-Liang/CAFE, tools/), without which
the CAFE classification check is skipped. They need numpy, scipy, pycocotools, tqdm.
The HalluSegBench scripts are checked in ``test_hallu_crosscheck.py``; all of them run with
``MASKLENS_OFFICIAL=<folder> pytest -m crosscheck tests/metrics`` (docs/metrics.md).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import sys
from pathlib import Path

import pytest

from masklens.core.errors import DataFormatError
from masklens.core.kinds.cafe import kind as cafe
from masklens.core.kinds.pcs import kind as pcs
from masklens.core.scoring.contract import Scorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
from cafe_synth import synth_cafe, synth_pcs, synth_pcs_categories  # noqa: E402

OFFICIAL = os.environ.get("MASKLENS_OFFICIAL")


def _official_file(name: str) -> Path | None:
    """An official script: from ``MASKLENS_OFFICIAL`` when it holds it, SAM 3's ``cgf1_eval``
    otherwise from the installed ``sam3`` package (found, not imported)."""
    if OFFICIAL and (Path(OFFICIAL) / f"{name}.py").exists():
        return Path(OFFICIAL) / f"{name}.py"
    if name != "cgf1_eval":
        return None
    spec = importlib.util.find_spec("sam3")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / "eval" / "cgf1_eval.py").exists():
            return Path(folder) / "eval" / "cgf1_eval.py"
    return None


pytestmark = [
    pytest.mark.crosscheck,
    pytest.mark.skipif(
        _official_file("cgf1_eval") is None,
        reason="SAM 3's cgf1_eval.py is absent: `pip install --no-deps sam3` (make setup does), "
        "or set MASKLENS_OFFICIAL to a folder holding it",
    ),
]
PCS_KEYS = {"cgF1": "cgF1", "cgF1@0.5": "cgF1@0.5", "cgF1@0.75": "cgF1@0.75", "IL_MCC": "IL_MCC",
            "positive_micro_F1": "pmF1", "positive_micro_F1@0.5": "pmF1@0.5",
            "positive_micro_F1@0.75": "pmF1@0.75", "IL_FPR": "IL_FPR", "IL_F1": "IL_F1",
            "IL_precision": "IL_precision", "IL_recall": "IL_recall", "precision": "precision",
            "recall": "recall", "F1": "F1", "positive_micro_precision": "positive_micro_precision",
            "positive_macro_F1": "positive_macro_F1"}  # fmt: skip


def _load(name: str):
    path = _official_file(name)
    assert path is not None, name
    spec = importlib.util.spec_from_file_location(f"official_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look themselves up there
    spec.loader.exec_module(mod)
    return mod


def _official_cgf1(gts: list[Path], pred: Path, t: float) -> dict[str, float]:
    mod = _load("cgf1_eval")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        ev = mod.CGF1Evaluator(gt_path=[str(g) for g in gts], verbose=False, iou_type="segm")
        for ce in ev.coco_evals:
            ce.threshold = t
        out = ev.evaluate(str(pred))
    return {k.replace("cgF1_eval_segm_", ""): v for k, v in out.items()}


def _close(official: float, ours: float | None) -> bool:
    if ours is None:
        return official == -1  # the official "undefined"
    return abs(official - ours) <= 1e-12


CAFE_FIXTURES = {  # name: synth_cafe keywords
    "plain": {},
    # positives without annotation (dropped pairs) and unpaired positives;
    # several category ids on annotations and predictions
    "orphans": {"p_no_annotation": 0.1, "p_unpaired": 0.1, "p_multi": 0.5},
    "categories": {"p_multi": 0.6, "n_categories": 3, "p_no_annotation": 0.05},
}


def _cafe_scored(tmp_path: Path, fixture: str, t: float, tau: float):
    """The fixture's files, and masklens' scores of them."""
    extra = CAFE_FIXTURES[fixture]
    ann, preds = synth_cafe(21, 120, height=40, width=40, **{"p_multi": 0.2, **extra})
    a, p = tmp_path / "ann.json", tmp_path / "pred.json"
    a.write_text(json.dumps(ann))
    p.write_text(json.dumps(preds))
    args = argparse.Namespace(ann=str(a), pred=str(p), images=None)
    bench = cafe.KIND.load_benchmark(**vars(args))
    ours = Scorer(cafe.KIND, bench, cafe.KIND.load_predictions(bench, **vars(args))).rescore(
        {"score_threshold": t, "iou_threshold": tau}
    )
    return ann, a, p, ours


@pytest.mark.skipif(
    _official_file("eval_cafe_metrics") is None,
    reason="set MASKLENS_OFFICIAL to a folder with CAFE's eval_cafe_metrics.py",
)
@pytest.mark.parametrize("fixture", sorted(CAFE_FIXTURES))
@pytest.mark.parametrize(("t", "tau"), [(0.5, 0.3), (0.2, 0.6)])
def test_cafe_against_official(tmp_path: Path, t: float, tau: float, fixture: str) -> None:
    _, a, p, ours = _cafe_scored(tmp_path, fixture, t, tau)
    off = _load("eval_cafe_metrics")
    pairs = off.build_pairs(a, off.load_predictions(p))
    res = [off.classify_pair(x, t, tau) for x in pairs]
    names = {
        "TA-TP": "TA_TP",
        "TA-FN": "TA_FN",
        "TA-FP": "TA_FP",
        "UA-FP": "UA_FP",
        "IL-FPR": "IL_FPR",
    }
    for full, g in off.EDIT_TYPE_ABBR.items():
        for k, v in off.aggregate([r for r in res if r.edit_type == full]).items():
            assert _close(v, ours.summary[g][names.get(k, k)]), (g, k)
    for k, v in off.aggregate(res).items():
        assert _close(v, ours.summary["Overall"][names.get(k, k)]), k


#: CAFE's edit types, as its files name them, and their abbreviations (its EDIT_TYPE_ABBR)
EDIT_TYPES = {"Superficial Mimicry": "SM", "Context Conflict": "CC", "Ontological Conflict": "OC"}


@pytest.mark.parametrize("fixture", sorted(CAFE_FIXTURES))
@pytest.mark.parametrize(("t", "tau"), [(0.5, 0.3), (0.2, 0.6)])
def test_cafe_cgf1_against_official(tmp_path: Path, t: float, tau: float, fixture: str) -> None:
    """CAFE's cgF1 part, as its run_eval.sh runs SAM 3's evaluator: over the whole file, and
    over each edit type's file."""
    ann, a, p, ours = _cafe_scored(tmp_path, fixture, t, tau)
    subsets = {"Overall": a}
    for full, g in EDIT_TYPES.items():
        subsets[g] = tmp_path / f"ann_{g}.json"
        subsets[g].write_text(json.dumps(_subset(ann, full)))
    for g, path in subsets.items():
        for k, v in _official_cgf1([path], p, t).items():
            if k in PCS_KEYS:
                key = {"IL_FPR": "IL_FPR_pcs"}.get(PCS_KEYS[k], PCS_KEYS[k])
                assert _close(v, ours.summary[g][key]), (g, k, v, ours.summary[g][key])


def _subset(ann: dict, edit_type: str) -> dict:
    """The image entries of one edit type and their annotations (CAFEval2026_{SM,CC,OC}.json)."""
    images = [im for im in ann["images"] if im.get("edit_type") == edit_type]
    ids = {im["id"] for im in images}
    return {**ann, "images": images, "annotations": [x for x in ann["annotations"] if x["image_id"] in ids]}


@pytest.mark.parametrize("n_files", [1, 3])
@pytest.mark.parametrize("seed", [3, 4, 5])
@pytest.mark.parametrize("t", [0.5, 0.3])
def test_pcs_category_order_against_official(tmp_path: Path, seed: int, t: float, n_files: int) -> None:
    """Tied Hungarian assignments resolved in SAM 3's category order (each
    annotator's instances in its own order; the same entries, other annotations per file)."""
    gts = []
    for k in range(n_files):
        gts.append(tmp_path / f"gt{k}.json")
        gts[-1].write_text(json.dumps(synth_pcs_categories(seed + 100 * k, 120)[0]))
    p = tmp_path / "pred.json"
    p.write_text(json.dumps(synth_pcs_categories(seed, 120)[1]))
    args = argparse.Namespace(gt=[str(g) for g in gts], pred=str(p), images=None)
    bench = pcs.KIND.load_benchmark(**vars(args))
    ours = Scorer(pcs.KIND, bench, pcs.KIND.load_predictions(bench, **vars(args))).rescore(
        {"score_threshold": t}
    )
    for k, v in _official_cgf1(gts, p, t).items():
        if k in PCS_KEYS:
            assert _close(v, ours.summary["all"][PCS_KEYS[k]]), k


def test_official_ignores_unknown_image_ids(tmp_path: Path) -> None:
    """SAM 3's evaluator silently ignores a prediction whose image_id is not
    an entry of the file (it loops over the file's entries only); masklens refuses the file."""
    files, preds = synth_pcs(22, 40, n_annotators=1)
    g, p, p2 = tmp_path / "gt.json", tmp_path / "pred.json", tmp_path / "pred2.json"
    g.write_text(json.dumps(files[0]))
    p.write_text(json.dumps(preds))
    stray = {**preds[0], "image_id": 987654321}
    p2.write_text(json.dumps([*preds, stray]))
    assert _official_cgf1([g], p2, 0.5) == _official_cgf1([g], p, 0.5)
    args = argparse.Namespace(gt=[str(g)], pred=str(p2), images=None)
    bench = pcs.KIND.load_benchmark(**vars(args))
    with pytest.raises(DataFormatError, match="points to no image"):
        pcs.KIND.load_predictions(bench, **vars(args))


@pytest.mark.parametrize(("n_files", "t"), [(1, 0.5), (3, 0.5), (3, 0.3)])
def test_pcs_against_official(tmp_path: Path, n_files: int, t: float) -> None:
    files, preds = synth_pcs(22, 150, height=32, width=32)
    gts = []
    for i, f in enumerate(files[:n_files]):
        gts.append(tmp_path / f"gt{i}.json")
        gts[-1].write_text(json.dumps(f))
    p = tmp_path / "pred.json"
    p.write_text(json.dumps(preds))
    args = argparse.Namespace(gt=[str(g) for g in gts], pred=str(p), images=None)
    bench = pcs.KIND.load_benchmark(**vars(args))
    ours = Scorer(pcs.KIND, bench, pcs.KIND.load_predictions(bench, **vars(args))).rescore(
        {"score_threshold": t}
    )
    for k, v in _official_cgf1(gts, p, t).items():
        if k in PCS_KEYS:
            assert _close(v, ours.summary["all"][PCS_KEYS[k]]), k

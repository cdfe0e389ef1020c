"""The bundled demo loads through every kind's own loader and scores to non-trivial numbers."""

from __future__ import annotations

import importlib.util
import json

import pytest

from masklens.core.kinds.demo import DEMO_DIR, demo_argv, demo_kinds, demo_namespace
from masklens.core.schema import Role
from masklens.core.scoring.contract import get_kind, score

KINDS = ["cafe", "pcs", "hallusegbench", "cgebench", "r2sm", "ovs"]


def _need(kind: str):
    if importlib.util.find_spec(f"masklens.core.kinds.{kind}.kind") is None:
        pytest.skip(f"the {kind} loader module does not exist yet")
    return get_kind(kind)


@pytest.fixture(scope="module")
def scored():
    cache = {}

    def run(kind: str):
        if kind not in cache:
            k = _need(kind)
            ns = demo_namespace(kind)
            bench = k.load_benchmark(**vars(ns))
            preds = k.load_predictions(bench, **vars(ns))
            cache[kind] = (bench, preds, score(k, bench, preds))
        return cache[kind]

    return run


def test_every_kind_has_a_demo():
    assert demo_kinds() == KINDS


@pytest.mark.parametrize("kind", KINDS)
def test_demo_loads_through_the_kinds_loader(kind, scored):
    bench, preds, result = scored(kind)
    assert len(bench) >= 5
    assert all(s.prompts for s in bench.samples)
    for sample in bench.samples:  # images are bundled (the GUI and `predict` need them)
        for ref in sample.images.values():
            if ref.path is not None:
                assert ref.path.exists(), ref.path
    assert preds.by_prompt, "demo predictions are empty"
    assert result.summary


@pytest.mark.parametrize("kind", KINDS)
def test_demo_namespace_without_predictions_loads_ground_truth(kind):
    k = _need(kind)
    bench = k.load_benchmark(**vars(demo_namespace(kind, with_predictions=False)))
    assert len(bench) >= 5


def test_cafe_demo_is_non_trivial(scored):
    bench, _, result = scored("cafe")
    groups = result.summary
    assert {g: groups[g]["N"] for g in ("SM", "CC", "OC")} == {"SM": 6, "CC": 6, "OC": 6}
    overall = groups["Overall"]
    # the demo model finds the targets but is fooled by some counterfactuals, not all
    assert overall["TA_TP"] >= 15 and overall["TA_FN"] >= 1
    assert overall["TA_FP"] >= 5 and overall["TN"] >= 3 and overall["UA_FP"] >= 1
    assert 0.0 < overall["IL_FPR"] < 1.0
    assert 0.0 < overall["cgF1"] < 1.0
    assert abs(overall["IL_FPR"] - overall["AFPR"] - overall["UFPR"]) < 1e-9
    negatives = [p for s in bench.samples for p in s.prompts if p.role == Role.NEGATIVE]
    assert len(negatives) == 18


def test_pcs_demo_is_non_trivial(scored):
    _, _, result = scored("pcs")
    s = result.summary["all"]
    assert 0.3 < s["cgF1"] < 0.99
    assert s["IL_FP"] >= 1 and s["IL_TN"] >= 5


def test_hallusegbench_demo_is_non_trivial(scored):
    _, preds, result = scored("hallusegbench")
    s = result.summary
    assert s["all"]["N"] >= 10 and all(s[g]["N"] >= 1 for g in ("S", "M", "L"))
    assert s["all"]["IoU_fact"] > 0.8
    assert 0.0 < s["all"]["CMS_fact"] < 0.5 and 0.0 < s["all"]["CMS_counterfact"] < 0.5
    assert 0.0 < s["all"]["dIoU_textual"] < 1.0
    assert s["all"]["CCMS_item_n"] >= 2 and s["all"]["CCMS_item_mean"] > 0.0
    assert not preds.missing


def test_cgebench_demo_is_non_trivial(scored):
    _, _, result = scored("cgebench")
    s = result.summary
    assert s["p0"]["IoGT"] > 0.9
    assert s["p3"]["IoGT"] < s["p0"]["IoGT"]  # generic prompts lose small targets
    assert s["p3"]["zero"] > 0 and s["p3"]["partial"] > 0
    assert s["p3"]["cumulative"] <= s["p3"]["IoGT"]


def test_r2sm_demo_is_non_trivial(scored):
    _, _, result = scored("r2sm")
    s = result.summary
    assert s["amodal"]["N"] >= 10 and s["modal"]["N"] >= 10
    assert s["modal"]["gIoU"] > 0.95
    assert 0.8 < s["amodal"]["gIoU"] < s["modal"]["gIoU"]  # completion is imperfect


def test_r2sm_masks_are_exact():
    ann = json.loads((DEMO_DIR / "r2sm" / "ann.json").read_text())
    from masklens.core.masks import Mask, intersect_all

    occluded = 0
    for a in ann["annotations"]:
        modal, amodal = Mask.from_coco(a["segmentation"]), Mask.from_coco(a["amodal_segmentation"])
        assert intersect_all([modal, amodal]) == modal  # visible ⊆ complete
        occluded += amodal.area > modal.area
    assert occluded >= 8
    assert {q["amodal"] for q in ann["queries"]} == {True, False}
    assert any(len(q["ann_ids"]) > 1 for q in ann["queries"])


def test_cafe_release_format():
    ann = json.loads((DEMO_DIR / "cafe" / "ann.json").read_text())
    pos = {i["id"]: i for i in ann["images"] if "fp_source_id" not in i}
    neg = [i for i in ann["images"] if "fp_source_id" in i]
    assert {i["edit_type"] for i in pos.values()} == {
        "Superficial Mimicry", "Context Conflict", "Ontological Conflict"}
    for n in neg:
        assert n["fp_source_id"] in pos and n["id"] == n["fp_source_id"] + 1_000_000_000
        assert n["text_input"] != pos[n["fp_source_id"]]["text_input"]


@pytest.mark.parametrize("kind", KINDS)
def test_masklens_score_cli_on_the_demo(kind, tmp_path, capsys):
    _need(kind)
    from masklens.core.cli import main

    out = tmp_path / "score.json"
    rc = main(["score", kind, *demo_argv(kind), "--out", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["benchmark"] == kind and data["summary"] and data["samples"]

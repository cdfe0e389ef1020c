"""core/scoring/readout.py without Qt: role-implied ground truth, generic and benchmark readouts."""

from __future__ import annotations

import argparse
import dataclasses
import sys

import pytest
import toykind

from masklens.core.schema import Instance, Prediction, Role
from masklens.core.scoring.readout import (
    benchmark_readout,
    generic_readout,
    implied_gt,
    make_typed_prompt,
    replaced_prompt,
)


@pytest.fixture
def bench(tmp_path):
    files = toykind.write_toy(tmp_path, n=2)
    ns = argparse.Namespace(ann=str(files["ann"]), pred=str(files["pred"]), images=None)
    b = toykind.KIND.load_benchmark(**vars(ns))
    return b, toykind.KIND.load_predictions(b, **vars(ns))


def test_core_readout_imports_no_qt():
    import subprocess

    code = "import sys, masklens.core.scoring.readout; print([m for m in sys.modules if m.startswith('PySide6')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("role", "level", "gt"), [
    ("positive", None, "target"), ("negative", None, "target"), ("hypernym", 1, "G"),
    ("modal", None, "target"), ("amodal", None, "amodal"),
])
def test_implied_gt_per_role(bench, role, level, gt):
    sample = bench[0].samples[0]
    assert implied_gt(sample, role, level).key == gt
    assert make_typed_prompt(sample, "x", role, level=level).gt == gt


def test_fallbacks_when_the_sample_has_no_prompt_of_the_role(bench):
    sample = bench[0].samples[0]
    only_pos = dataclasses.replace(sample, prompts=[p for p in sample.prompts if p.role == Role.POSITIVE])
    assert replaced_prompt(only_pos, Role.NEGATIVE) is None
    assert implied_gt(only_pos, Role.NEGATIVE).key == "target"  # negative → the positive's target
    assert implied_gt(only_pos, Role.AMODAL).key == "amodal"  # by the ground truth's key
    # a hypernym of a level the sample does not have falls back to the positive target
    assert implied_gt(only_pos, Role.HYPERNYM, 3).key == "target"


def test_generic_readout_unions_accepted_instances_only(bench):
    sample = bench[0].samples[0]  # target box [8, 8, 28, 28] (400 px)
    prompt = make_typed_prompt(sample, "left half", Role.POSITIVE)
    pred = Prediction(prompt.id, [
        Instance(toykind.box_mask([8, 8, 18, 28]), 0.8),  # left half: IoU 0.5
        Instance(toykind.box_mask([18, 8, 28, 28]), 0.4),  # right half, below t
    ])
    g = generic_readout(sample, prompt, pred, 0.5)
    assert g["iou"] == pytest.approx(0.5)
    assert g["n_accepted"] == 1 and g["n_instances"] == 2
    assert [i["accepted"] for i in g["instances"]] == [True, False]
    assert [round(i["iou"], 6) for i in g["instances"]] == [0.5, 0.5]
    # inclusive threshold: s = t counts, and then the union covers the target exactly
    assert generic_readout(sample, prompt, pred, 0.4)["iou"] == pytest.approx(1.0)
    # nothing accepted: IoU 0
    assert generic_readout(sample, prompt, pred, 0.9)["iou"] == 0.0


def test_benchmark_readout_replaces_the_prompt_of_the_same_role(bench):
    b, preds = bench
    sample = b.samples[0]
    kind = toykind.KIND
    params = kind.default_params()
    base = kind.sample_readout(sample, kind.sample_overlaps(sample, preds), params)
    assert base["positive"]["hit"] is True
    typed = make_typed_prompt(sample, "blue square", Role.POSITIVE)
    pred = Prediction(typed.id, [Instance(toykind.box_mask([36, 36, 56, 56]), 0.9)])
    rec = benchmark_readout(kind, sample, typed, pred, params, preds)
    assert rec["positive"] == {"best_iou": 0.0, "hit": False, "n_kept": 1}
    assert rec["negative"] == base["negative"]  # the other prompts keep their predictions
    # the original sample is untouched
    assert sample.prompts[0].text == "red square"
    # a role without a benchmark prompt gives no benchmark readout
    only_pos = dataclasses.replace(sample, prompts=sample.prompts[:1])
    neg = make_typed_prompt(only_pos, "blue", Role.NEGATIVE)
    assert benchmark_readout(kind, only_pos, neg, pred, params, preds) is None


def test_which_prompt_a_typed_prompt_replaces(bench):
    sample = bench[0].samples[0]
    two = dataclasses.replace(sample, prompts=[
        *sample.prompts, dataclasses.replace(sample.prompts[3], id="m2", text="other modal", gt="G")])
    # several modal prompts: same text wins, then an explicit id, else the first
    assert replaced_prompt(two, Role.MODAL, text="Other Modal").id == "m2"
    assert replaced_prompt(two, Role.MODAL, text="nothing like it").id == sample.prompts[3].id
    assert replaced_prompt(two, Role.MODAL, prompt_id="m2", text="visible red square").id == "m2"
    typed = make_typed_prompt(two, "other modal", Role.MODAL)
    assert typed.gt == "G" and typed.meta["replaces"] == "m2"

"""CAFE's bulk stage 1 and its shortcuts equal the straightforward per-sample computation.

* ``iou_batch.IouJobs`` (many jobs per pycocotools call) = one ``iou_matrix`` per job;
* ``all_overlaps`` (every sample at once) = the per-sample stage 1 written plainly here
  (one ``iou_matrix`` per prompt and entry), field by field;
* the stacks gathered from a run's flat arrays = the pair-by-pair stacks, entry for entry;
* ``single_stack`` (flat arrays) = ``EntryStack.from_single``;
* records and summaries of a Scorer over the bulk overlaps = those over per-sample overlaps.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import masklens.core.scoring.iou_batch as iou_batch
from masklens.core.kinds.cafe.kind import KIND
from masklens.core.kinds.cafe.stacks import _whole_batch, build_stacks, single_stack
from masklens.core.kinds.common.cgf1.io import (
    categories_of,
    instances_of,
    non_crowd,
    non_crowd_categories,
)
from masklens.core.kinds.common.cgf1.tables import EntryStack, EntryTable, ordered_entry_table
from masklens.core.masks import Mask, iou_matrix
from masklens.core.schema import Role
from masklens.core.scoring.contract import Scorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
from cafe_synth import rle as poly_rle  # noqa: E402
from cafe_synth import synth_cafe  # noqa: E402


# ------------------------------------------------------------------ IoU jobs
@st.composite
def mask_of(draw, h: int, w: int) -> Mask:
    kind = draw(st.sampled_from(["random", "random", "empty", "full", "box"]))
    if kind == "empty":
        return Mask.from_array(np.zeros((h, w), bool))
    if kind == "full":
        return Mask.from_array(np.ones((h, w), bool))
    if kind == "box":
        y0, x0 = draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1))
        a = np.zeros((h, w), bool)
        a[y0 : draw(st.integers(y0 + 1, h)), x0 : draw(st.integers(x0 + 1, w))] = True
        return Mask.from_array(a)
    bits = draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w))
    return Mask.from_array(np.array(bits, bool).reshape(h, w))


@st.composite
def job(draw):
    h, w = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    preds = draw(st.lists(mask_of(h, w), max_size=4))
    gts = draw(st.lists(mask_of(h, w), max_size=3))
    if preds and gts and draw(st.integers(0, 9)) == 0:  # a ground truth of another size
        gts[-1] = draw(mask_of(h + 1, w))
    return preds, gts


@settings(max_examples=200, deadline=None)
@given(st.lists(job(), max_size=12), st.integers(1, 5))
def test_iou_jobs_equal_one_iou_matrix_per_job(jobs, block) -> None:
    iou_batch.BLOCK, old = block, iou_batch.BLOCK
    try:
        got = iou_batch.iou_jobs(jobs)
    finally:
        iou_batch.BLOCK = old
    want = [iou_matrix(p, g).ravel() for p, g in jobs]
    assert np.array_equal(got, np.concatenate([np.zeros(0), *want]))


def test_iou_jobs_on_polygon_masks_of_several_sizes() -> None:
    rng = random.Random(5)
    jobs = []
    for _ in range(60):
        h, w = rng.choice([(40, 30), (41, 30), (40, 31), (64, 64)])
        shapes = [poly_rle([rng.uniform(0, w) if k % 2 else rng.uniform(0, h) for k in range(12)], h, w)
                  for _ in range(rng.randint(0, 6))]  # fmt: skip
        masks = [Mask.from_coco(s) for s in shapes]
        jobs.append((masks[1:], masks[:1]))
    got = iou_batch.iou_jobs(jobs)
    assert np.array_equal(got, np.concatenate([iou_matrix(p, g).ravel() for p, g in jobs]))
    assert (got > 0).sum() > 20  # real overlaps were computed


# ------------------------------------------------------------------ stage 1
def reference_overlaps(sample, predictions) -> dict[str, Any]:
    """Stage 1 of one sample written plainly: one iou_matrix per prompt and per entry."""
    pos = next(p for p in sample.prompts if p.role == Role.POSITIVE)
    neg = next(p for p in sample.prompts if p.role == Role.NEGATIVE)
    target = sample.gts[pos.gt or "target"]
    h, w = target.height, target.width
    pos_pred, neg_pred = predictions.get(pos.id), predictions.get(neg.id)
    pos_masks, pos_scores = instances_of(pos_pred, h, w)
    neg_masks, neg_scores = instances_of(neg_pred, h, w)

    def target_ious(masks):
        if not target.masks:
            return tuple(0.0 for _ in masks)
        return tuple(iou_matrix(masks, target.masks[:1])[:, 0].tolist())

    def source(masks, scores, gt, pred):
        gts = non_crowd(gt) if gt is not None else []
        if not gts:
            return (scores, None)
        if len(gts) == 1:
            return (scores, tuple(iou_matrix(masks, gts)[:, 0].tolist()))
        return ordered_entry_table(scores, [iou_matrix(masks, gts)], categories_of(pred),
                                   [non_crowd_categories(gt)])  # fmt: skip

    pos_ious, neg_ious = target_ious(pos_masks), target_ious(neg_masks)
    pos_gt = sample.gts.get(pos.meta.get("entry_gt", ""), target)
    neg_gt = sample.gts.get(neg.meta.get("entry_gt", ""))
    orphans = []
    for o in sample.meta.get("orphan_entries", []):
        if o.exhaustive:
            pred = predictions.get(o.prompt_id)
            masks, scores = instances_of(pred, o.gt.height, o.gt.width)
            orphans.append((o.image_id, source(masks, scores, o.gt, pred), o.group))
    pos_max, neg_max = max(pos_scores, default=0.0), max(neg_scores, default=0.0)
    return {
        "pair": (pos_scores, pos_ious, neg_scores, neg_ious),
        "pos_table": source(pos_masks, pos_scores, pos_gt, pos_pred),
        "neg_table": source(neg_masks, neg_scores, neg_gt, neg_pred),
        "pos_entry": (pos.source_id, bool(pos.meta.get("exhaustive", True))),
        "neg_entry": (neg.source_id, bool(neg.meta.get("exhaustive", True))),
        "entry_groups": (pos.meta.get("entry_group"), neg.meta.get("entry_group")),
        "orphans": orphans,
        "static": {
            "id": sample.id, "edit_type": sample.group, "pos_image_id": pos.source_id,
            "neg_image_id": neg.source_id, "SoftSwap": int(neg_max > pos_max),
            "pos_max_score": pos_max, "neg_max_score": neg_max,
            "pos_max_iou": max(pos_ious, default=0.0), "neg_max_iou": max(neg_ious, default=0.0),
            "pos_missing": pos_pred is None, "neg_missing": neg_pred is None,
            "pos_instances": [{"score": a, "iou": b} for a, b in zip(pos_scores, pos_ious, strict=True)],
            "neg_instances": [{"score": a, "iou": b} for a, b in zip(neg_scores, neg_ious, strict=True)],
        },
    }  # fmt: skip


def same_source(a, b) -> bool:
    if isinstance(a, EntryTable) or isinstance(b, EntryTable):
        return (
            isinstance(a, EntryTable) and isinstance(b, EntryTable) and a.levels == b.levels
            and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("ndt", "tp", "ngt"))
        )  # fmt: skip
    return a == b


def cafe_files(tmp: Path, seed: int) -> tuple[Path, Path]:
    """A CAFE set with every shape stage 1 knows: images of two sizes, several instances per
    entry (two categories), crowd instances (the target among them at times), negatives with
    annotations, a positive with several negatives, unpaired and dropped entries, entries that
    are not exhaustive or have no edit type, missing predictions, predictions of another
    size (resized)."""
    rng = random.Random(seed)
    ann_a, pred_a = synth_cafe(seed, 14, height=24, width=18, p_multi=0.5, p_no_annotation=0.15,
                               p_unpaired=0.15, n_categories=2)  # fmt: skip
    ann_b, pred_b = synth_cafe(seed + 1, 10, height=20, width=26, p_multi=0.3, n_categories=2)
    shift = 10_000
    for im in ann_b["images"]:
        im["id"] += shift
        if "fp_source_id" in im:
            im["fp_source_id"] += shift
    for a in ann_b["annotations"]:
        a["image_id"] += shift
        a["id"] += shift
    for p in pred_b:
        p["image_id"] += shift
    images = ann_a["images"] + ann_b["images"]
    anns = ann_a["annotations"] + ann_b["annotations"]
    preds = pred_a + pred_b
    by_image: dict[int, list] = {}
    for a in anns:
        by_image.setdefault(a["image_id"], []).append(a)
        a["iscrowd"] = int(rng.random() < 0.15)
    negatives = [im for im in images if "fp_source_id" in im]
    for im in rng.sample(negatives, 6):  # negatives with their own instances
        src = by_image.get(im["fp_source_id"], [])
        for a in src[: rng.randint(1, 2)]:
            anns.append({**a, "id": len(anns) + 100_000, "image_id": im["id"]})
    for im in rng.sample(negatives, 3):  # a second negative of the same positive
        twin = {**im, "id": im["id"] + 500_000, "text_input": "twin"}
        if rng.random() < 0.5:
            twin.pop("edit_type")
        images.append(twin)
        preds += [{**p, "image_id": twin["id"]} for p in preds if p["image_id"] == im["id"]]
    for im in rng.sample(images, 5):
        im["is_instance_exhaustive"] = False
    for im in rng.sample([im for im in images if "fp_source_id" not in im], 3):
        im["edit_type"] = rng.choice(["SM", "CC", "OC"])
    dropped = set(rng.sample(sorted({p["image_id"] for p in preds}), 4))
    preds = [p for p in preds if p["image_id"] not in dropped]
    small = synth_cafe(seed + 2, 3, height=12, width=9)[1]
    for p, q in zip(rng.sample(preds, 4), small, strict=False):  # predictions at another size
        p["segmentation"] = q["segmentation"]
    a_path, p_path = tmp / f"ann{seed}.json", tmp / f"pred{seed}.json"
    a_path.write_text(json.dumps({**ann_a, "images": images, "annotations": anns}))
    p_path.write_text(json.dumps(preds))
    return a_path, p_path


def load(a: Path, p: Path):
    """The set, with two prompts that have no prediction entry at all (scored as empty)."""
    args = argparse.Namespace(ann=str(a), pred=str(p), images=None)
    bench = KIND.load_benchmark(**vars(args))
    preds = KIND.load_predictions(bench, **vars(args))
    for s in bench.samples[1:3]:
        preds.by_prompt.pop(s.prompts[len(s.id) % 2].id)
    return bench, preds


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 10_000))
def test_all_overlaps_equal_plain_stage_one(tmp_path: Path, seed: int) -> None:
    bench, preds = load(*cafe_files(tmp_path, seed))
    bulk = KIND.all_overlaps(bench.samples, preds)
    assert len(bulk) == len(bench.samples)
    for s, o in zip(bench.samples, bulk, strict=True):
        want = reference_overlaps(s, preds)
        single = KIND.sample_overlaps(s, preds)
        for got in (o, single):
            p = got.pair
            assert (p.pos_scores, p.pos_ious, p.neg_scores, p.neg_ious) == want["pair"]
            assert same_source(got.pos_table, want["pos_table"])
            assert same_source(got.neg_table, want["neg_table"])
            assert (got.pos_entry, got.neg_entry) == (want["pos_entry"], want["neg_entry"])
            assert got.entry_groups == want["entry_groups"]
            assert got.static == want["static"] and list(got.static) == list(want["static"])
            assert len(got.orphans) == len(want["orphans"])
            for (k1, t1, g1), (k2, t2, g2) in zip(got.orphans, want["orphans"], strict=True):
                assert (k1, g1) == (k2, g2) and same_source(t1, t2)


def assert_same_stack(a: EntryStack, b: EntryStack) -> None:
    for f in ("n", "level_values", "level_owner", "offsets", "ndt", "tp", "ngt"):
        x, y = np.asarray(getattr(a, f)), np.asarray(getattr(b, f))
        assert x.dtype == y.dtype and np.array_equal(x, y), f


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 10_000))
def test_gathered_stacks_and_results_equal_pair_by_pair(tmp_path: Path, seed: int) -> None:
    bench, preds = load(*cafe_files(tmp_path, seed))
    bulk = KIND.all_overlaps(bench.samples, preds)
    plain = [dataclasses.replace(o, batch=None) for o in bulk]  # no run: pair by pair
    size = next(k for k in (4, 5, 6) if len(bulk) % k != 1)  # stage 1 in chunks (none of one)
    chunked = [o for a in range(0, len(bulk), size)
               for o in KIND.all_overlaps(bench.samples[a : a + size], preds)]  # fmt: skip
    assert _whole_batch(chunked) is not None and _whole_batch(plain) is None
    assert _whole_batch(bulk[:-1]) is None and _whole_batch(bulk[::-1]) is None
    slow = build_stacks(bench.samples, plain)
    for fast in (build_stacks(bench.samples, bulk), build_stacks(bench.samples, chunked)):
        check_same_stacks(fast, slow)
    per_sample = Scorer(KIND, bench, preds)  # the Scorer's own per-sample stage 1
    for params in ({}, {"score_threshold": 0.2, "iou_threshold": 0.6}, {"score_threshold": 0.5},
                   {"score_threshold": 0.0, "iou_threshold": 0.0}, {"score_threshold": 1.0}):  # fmt: skip
        p = KIND.resolve_params(params)
        want = per_sample.rescore(params)
        for overlaps in (bulk, plain, chunked):
            recs = KIND.sample_readouts(bench.samples, overlaps, p)
            assert recs == want.samples and [list(r) for r in recs] == [list(r) for r in want.samples]
            assert KIND.summarize(bench.samples, overlaps, recs, p) == want.summary
        for i in (1, len(bulk) - 2):  # the GUI's one shown sample
            assert KIND.sample_readouts([bench.samples[i]], [bulk[i]], p) == [want.samples[i]]
        subset = [0, len(bulk) // 2, len(bulk) - 1]  # a report's subset of samples
        sub = [bench.samples[i] for i in subset]
        assert KIND.summarize(sub, [bulk[i] for i in subset], [], p) == KIND.summarize(
            sub, [per_sample.overlaps[i] for i in subset], [], p
        )


def check_same_stacks(fast: dict[str, Any], slow: dict[str, Any]) -> None:
    assert fast["missing"] == slow["missing"]
    assert_same_stack(fast["entries"], slow["entries"])
    assert np.array_equal(fast["entry_members"], slow["entry_members"])
    assert all(np.array_equal(x, y) for x, y in zip(fast["pair_members"], slow["pair_members"], strict=True))
    for f in ("pos", "neg"):
        for x, y in zip(getattr(fast["pairs"], f), getattr(slow["pairs"], f), strict=True):
            assert x.dtype == y.dtype and np.array_equal(x, y)
    assert np.array_equal(fast["pairs"].soft, slow["pairs"].soft)


# ------------------------------------------------------------------ flat single-entry stack
@st.composite
def single_entries(draw):
    level = st.sampled_from([0.0, 0.25, 0.5, 0.5, 0.75, 1.0]) | st.floats(0, 1)
    iou = st.sampled_from([0.0, 0.5, 0.55, 0.95, 1.0]) | st.floats(0, 1)
    out = []
    for _ in range(draw(st.integers(0, 8))):
        scores = tuple(draw(st.lists(level, max_size=6)))
        has = draw(st.booleans())
        out.append((scores, tuple(draw(iou) for _ in scores) if has else None))
    return out


@settings(max_examples=300, deadline=None)
@given(single_entries())
def test_single_stack_equals_from_single(entries) -> None:
    sizes = np.array([len(s) for s, _ in entries], dtype=np.int64)
    s = np.array([x for sc, _ in entries for x in sc], dtype=np.float64)
    v = np.array([x for sc, io in entries for x in (io if io is not None else [-1.0] * len(sc))],
                 dtype=np.float64)  # fmt: skip
    has = np.array([io is not None for _, io in entries], dtype=bool)
    assert_same_stack(single_stack(s, v, sizes, has), EntryStack.from_single(entries))


def test_bulk_stage_one_reports_a_sample_without_negative_prompt(tmp_path: Path) -> None:
    from masklens.core.errors import DataFormatError

    bench, preds = load(*cafe_files(tmp_path, 3))
    s = bench.samples[2]
    s.prompts = [p for p in s.prompts if p.role != Role.NEGATIVE]
    with pytest.raises(DataFormatError, match="no negative prompt") as err:
        KIND.all_overlaps(bench.samples, preds)
    assert err.value.record == s.id

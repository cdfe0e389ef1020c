"""CAFE/PCS fast paths equal their plain forms: batch RLE validation, vectorised records."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from masklens.core.files.rle_validation import rle_counts_problem, rle_counts_problems
from masklens.core.kinds.cafe.kind import KIND
from masklens.core.masks import Mask
from masklens.core.scoring.contract import Scorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cafe"))
from cafe_synth import synth_cafe  # noqa: E402

ALPHABET = bytes(range(48, 112))


@st.composite
def rle_case(draw) -> tuple[bytes, int]:
    h, w = draw(st.integers(0, 9)), draw(st.integers(0, 9))
    bits = draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w))
    counts = (
        Mask.from_array(np.array(bits, dtype=bool).reshape(h, w)).rle["counts"] if h * w else b""
    )
    how = draw(st.sampled_from(["keep", "keep", "flip", "append", "random", "truncate"]))
    if how == "flip" and counts:
        i = draw(st.integers(0, len(counts) - 1))
        c = draw(
            st.sampled_from([draw(st.integers(0, 255)), draw(st.sampled_from(list(ALPHABET)))])
        )
        counts = counts[:i] + bytes([c]) + counts[i + 1 :]
    elif how == "append":
        counts += bytes([draw(st.sampled_from(list(ALPHABET)))])
    elif how == "random":
        counts = bytes(draw(st.lists(st.sampled_from(list(ALPHABET)), max_size=10)))
    elif how == "truncate" and counts:
        counts = counts[: draw(st.integers(0, len(counts) - 1))]
    pixels = h * w + draw(st.sampled_from([0, 0, 0, 1, -1]))
    return counts, pixels


@settings(max_examples=400, deadline=None)
@given(st.lists(rle_case(), min_size=1, max_size=8))
def test_batch_rle_validation_equals_single(cases) -> None:
    counts = [c for c, _ in cases]
    pixels = [p for _, p in cases]
    assert rle_counts_problems(counts, pixels) == [rle_counts_problem(c, p) for c, p in cases]


def test_batch_rle_validation_on_real_sized_masks() -> None:
    ann, preds = synth_cafe(3, 40, height=300, width=200)
    counts = [p["segmentation"]["counts"].encode() for p in preds]
    assert rle_counts_problems(counts, [300 * 200] * len(counts)) == [None] * len(counts)
    bad = list(counts)
    bad[5] = bad[5][:-1] + b"1"  # breaks the total
    got = rle_counts_problems(bad, [300 * 200] * len(bad))
    assert got[5] == rle_counts_problem(bad[5], 300 * 200) is not None
    assert got[:5] == [None] * 5 and got[6:] == [None] * (len(bad) - 6)


def test_batch_rle_validation_across_chunks(monkeypatch) -> None:
    import masklens.core.files.rle_validation as validation

    monkeypatch.setattr(validation, "_CHUNK_BYTES", 500)  # many small chunks
    _, preds = synth_cafe(4, 30, height=120, width=90)
    counts = [p["segmentation"]["counts"].encode() for p in preds]
    n = 120 * 90
    for k in (0, len(counts) // 2, len(counts) - 1):
        bad = list(counts)
        bad[k] = bad[k] + b"3"
        want = [rle_counts_problem(c, n) for c in bad]
        assert rle_counts_problems(bad, [n] * len(bad)) == want
        assert [i for i, w in enumerate(want) if w] == [k]


def test_vectorised_records_equal_per_sample_records(tmp_path: Path) -> None:
    ann, preds = synth_cafe(11, 60, height=32, width=32, p_multi=0.3)
    a, p = tmp_path / "a.json", tmp_path / "p.json"
    a.write_text(json.dumps(ann))
    p.write_text(json.dumps(preds))
    args = argparse.Namespace(ann=str(a), pred=str(p), images=None)
    bench = KIND.load_benchmark(**vars(args))
    scorer = Scorer(KIND, bench, KIND.load_predictions(bench, **vars(args)))
    for params in ({}, {"score_threshold": 0.2, "iou_threshold": 0.6}, {"score_threshold": 0.5}):
        resolved = KIND.resolve_params(params)
        batch = scorer.readouts(resolved)
        single = [
            KIND.sample_readout(s, o, resolved)
            for s, o in zip(bench.samples, scorer.overlaps, strict=True)
        ]
        assert batch == single
        assert [list(r) for r in batch] == [list(r) for r in single]  # same key order
    first = scorer.readouts()
    first[0]["verdict"] = "mine"  # a consumer's edit does not leak into later results
    assert "verdict" not in scorer.readouts()[0]


def test_two_scorers_and_a_replaced_sample_keep_their_own_results(tmp_path: Path) -> None:
    """The kind caches stacks per overlaps list: alternating scorers and update_sample stay exact."""
    runs = []
    for seed in (1, 2):
        ann, preds = synth_cafe(seed, 30, height=24, width=24)
        a, p = tmp_path / f"a{seed}.json", tmp_path / f"p{seed}.json"
        a.write_text(json.dumps(ann))
        p.write_text(json.dumps(preds))
        args = argparse.Namespace(ann=str(a), pred=str(p), images=None)
        bench = KIND.load_benchmark(**vars(args))
        runs.append((bench, KIND.load_predictions(bench, **vars(args))))
    s1, s2 = (Scorer(KIND, b, p) for b, p in runs)
    r1, r2 = s1.rescore().summary, s2.rescore().summary
    assert r1 != r2
    assert s1.rescore().summary == r1 and s2.rescore().summary == r2
    fresh = Scorer(KIND, *runs[0]).rescore().summary
    assert fresh == r1
    bench, preds = runs[0]
    empty = type(preds)(name="empty")
    s1.update_sample(0, empty)  # sample 0 now has no predictions at all
    changed = s1.rescore()
    assert changed.samples[0]["pos_instances"] == [] and changed.samples[0]["pos_missing"]
    assert changed.summary["Overall"]["TA_TP"] <= r1["Overall"]["TA_TP"]


def test_stage_one_equals_iou_per_prompt(tmp_path: Path) -> None:
    """The one-call stage 1 gives what separate IoU calls per prompt and entry give."""
    from masklens.core.kinds.common.cgf1.io import instances_of, non_crowd
    from masklens.core.kinds.common.cgf1.tables import EntryTable, entry_table
    from masklens.core.masks import iou_matrix
    from masklens.core.schema import Role

    ann, preds = synth_cafe(12, 80, height=40, width=30, p_multi=0.4, p_no_annotation=0.1)
    for a in ann["annotations"][::7]:
        a["iscrowd"] = 1  # some crowd instances, the target among them at times
    a, p = tmp_path / "a.json", tmp_path / "p.json"
    a.write_text(json.dumps(ann))
    p.write_text(json.dumps(preds))
    args = argparse.Namespace(ann=str(a), pred=str(p), images=None)
    bench = KIND.load_benchmark(**vars(args))
    pset = KIND.load_predictions(bench, **vars(args))
    scorer = Scorer(KIND, bench, pset)
    multi = 0
    for s, o in zip(bench.samples, scorer.overlaps, strict=True):
        pos, neg = (next(x for x in s.prompts if x.role == r) for r in (Role.POSITIVE, Role.NEGATIVE))
        target = s.gts["target"]
        for prompt, scores, ious, table in (
            (pos, o.pair.pos_scores, o.pair.pos_ious, o.pos_table),
            (neg, o.pair.neg_scores, o.pair.neg_ious, o.neg_table),
        ):
            masks, want_scores = instances_of(pset.get(prompt.id), target.height, target.width)
            assert scores == want_scores
            assert ious == tuple(iou_matrix(masks, target.masks[:1])[:, 0].tolist())
            gts = non_crowd(s.gts[prompt.meta["entry_gt"]])
            mat = iou_matrix(masks, gts)
            if isinstance(table, EntryTable):
                multi += 1
                want = entry_table(want_scores, [mat])
                assert table.levels == want.levels and table.ngt.tolist() == want.ngt.tolist()
                assert np.array_equal(table.ndt, want.ndt) and np.array_equal(table.tp, want.tp)
            else:
                assert table == (want_scores, tuple(mat[:, 0].tolist()) if gts else None)
    assert multi > 0

"""Backend `replay`: answers from a prediction file, matched by image content and prompt text."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from test_predict_toykind import ColourSegmenter, build_toy

from masklens.core.cache.predictions import PredictionCache
from masklens.core.errors import MasklensError, ModelError
from masklens.core.inference.runner import RunStats, load_image, run_benchmark
from masklens.core.models.base import SegmentRequest
from masklens.core.models.registry import create_segmenter
from masklens.core.models.replay import ReplaySegmenter, create, kind_namespace
from masklens.core.schema import PredictionSet


@pytest.fixture
def recorded(tmp_path):
    """The toy benchmark, predictions of the colour segmenter written in its format."""
    kind, args, bench = build_toy(tmp_path)
    original = run_benchmark(ColourSegmenter(), bench)
    pred = tmp_path / "pred.json"
    kind.write_predictions(bench, original, pred)
    return kind, args, bench, original, pred


def test_replay_reproduces_the_file_through_the_runner(recorded, tmp_path):
    kind, args, bench, original, pred = recorded
    seg = create_segmenter("replay", kind=kind, ann=args.ann, pred=str(pred))
    assert isinstance(seg, ReplaySegmenter)
    cache = PredictionCache(tmp_path / "cache")
    stats = RunStats()
    replayed = run_benchmark(seg, bench, cache=cache, stats=stats)
    assert len(cache) == 0  # replay bypasses the prediction cache
    assert set(replayed.by_prompt) == set(original.by_prompt) and not replayed.missing
    for pid, want in original.by_prompt.items():
        got = replayed.get(pid)
        assert [i.mask for i in got.instances] == [i.mask for i in want.instances]
        assert [i.score for i in got.instances] == pytest.approx([i.score for i in want.instances])
        assert got.provenance["model"] == "replay" and got.provenance["pred"] == str(pred)


def test_matching_is_by_content_and_normalised_text(recorded, tmp_path):
    kind, args, bench, original, pred = recorded
    src = bench.samples[0].images["img"].path
    copy = tmp_path / "renamed.png"
    shutil.copy(src, copy)
    seg = create(kind=kind, argv=["--ann", args.ann, "--pred", str(pred)])
    image = load_image(copy)  # same pixels, another file
    res = seg.segment(image, SegmentRequest("  RED "))
    assert res.provenance["prompt_id"] == "1" and len(res.masks) == 1
    assert res.masks == [i.mask for i in original.get("1").instances]
    assert seg.segment(image, SegmentRequest("blue")).provenance["prompt_id"] == "2"
    # a prompt never asked on this image: flagged missing, not an empty answer
    res = seg.segment(image, SegmentRequest("purple"))
    assert res.masks == [] and res.provenance["missing"] is True
    # only images carrying the asked text were read: "red" and "blue" are asked on a.png only
    assert {r.path.name for r in seg._ref_keys} == {"a.png"}
    # an image not in the benchmark (one pixel changed)
    other = image.copy()
    other[0, 0, 0] ^= 1
    assert seg.segment(other, SegmentRequest("red")).provenance["missing"] is True
    # "green" is asked on both files: content decides which recorded answer is returned
    b = load_image(bench.samples[3].images["img"].path)
    assert seg.segment(b, SegmentRequest("green")).provenance["prompt_id"] == "4"
    assert seg.segment(image, SegmentRequest("green")).provenance["prompt_id"] == "3"


def test_missing_predictions_become_missing_prompts(recorded):
    kind, args, bench, original, pred = recorded
    partial = PredictionSet(name="partial")
    partial.add(original.get("1"))
    partial.missing.add("2")
    seg = create(kind=kind, benchmark=bench, predictions=partial)
    ps = run_benchmark(seg, bench)
    assert set(ps.by_prompt) == {"1"} and ps.missing == {"2", "3", "4", "5"}


def test_score_threshold_and_weights_shorthand(recorded):
    kind, args, bench, original, pred = recorded
    seg = create(kind=kind, ann=args.ann, weights=str(pred), score_threshold=0.95)
    ps = run_benchmark(seg, bench)
    assert all(p.instances == [] for p in ps.by_prompt.values())  # all scored 0.9
    seg = create(kind=kind, ann=args.ann, weights=str(pred), score_threshold=0.9)
    assert len(run_benchmark(seg, bench).get("1").instances) == 1  # inclusive


def test_unknown_kind_and_missing_arguments_are_clear(recorded):
    kind, args, bench, original, pred = recorded
    with pytest.raises(MasklensError, match="unknown benchmark kind 'nope'"):
        create(kind="nope")
    with pytest.raises(ModelError, match="needs the benchmark kind"):
        create()
    with pytest.raises(MasklensError, match="--pred"):
        create(kind=kind, ann=args.ann)
    with pytest.raises(MasklensError, match="unrecognized arguments"):
        kind_namespace(kind, argv=["--bogus", "1"])
    seg = create(kind=kind, ann=args.ann, pred=str(pred) + ".missing")
    with pytest.raises(MasklensError, match="not found"):
        seg.segment(np.zeros((48, 64, 3), np.uint8), SegmentRequest("red"))


def test_unload_rebuilds_the_index(recorded):
    kind, args, bench, original, pred = recorded
    seg = create(kind=kind, ann=args.ann, pred=str(pred))
    image = load_image(bench.samples[0].images["img"].path)
    assert seg.segment(image, SegmentRequest("red")).provenance["prompt_id"] == "1"
    seg.unload()
    assert seg.segment(image, SegmentRequest("red")).provenance["prompt_id"] == "1"


def _demo_kinds():
    try:
        from masklens.core.kinds.demo import demo_kinds
    except ImportError:  # pragma: no cover
        return []
    return demo_kinds()


@pytest.mark.parametrize("kind_name", _demo_kinds())
def test_replay_of_every_demo_kind_matches_its_loader(kind_name):
    """Through the real kinds: replaying the bundled predictions via image content + text gives
    back, prompt by prompt, what the kind's own loader reads (missing stays missing)."""
    from masklens.core.kinds.demo import demo_namespace
    from masklens.core.scoring.contract import get_kind

    kind = get_kind(kind_name)
    ns = demo_namespace(kind_name)
    bench = kind.load_benchmark(**vars(ns))
    direct = kind.load_predictions(bench, **vars(ns))
    replayed = run_benchmark(create(kind=kind_name, args=ns), bench)
    assert set(replayed.by_prompt) | replayed.missing == {p.id for s in bench for p in s.prompts}
    for s in bench:
        for p in s.prompts:
            want = direct.get(p.id)
            if want is None:
                assert p.id in replayed.missing
                continue
            got = replayed.get(p.id)
            assert got is not None, p
            assert [i.mask for i in got.instances] == [i.mask for i in want.instances], p
            assert [i.score for i in got.instances] == [i.score for i in want.instances], p

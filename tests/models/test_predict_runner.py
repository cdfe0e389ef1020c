"""The benchmark runner: one encode per image, the prediction cache, resume after interruption."""

from __future__ import annotations

import threading

import cv2
import numpy as np
import pytest
from test_predict_toykind import ColourSegmenter, build_toy

from masklens.core.cache.predictions import PredictionCache
from masklens.core.errors import Cancelled, DataFormatError
from masklens.core.inference.runner import RunStats, load_image, run_benchmark
from masklens.core.masks import iou


@pytest.fixture
def toy(tmp_path):
    return build_toy(tmp_path)


def test_groups_prompts_by_image_and_encodes_each_once(toy, tmp_path):
    kind, args, bench = toy
    seg = ColourSegmenter()
    stats = RunStats()
    ps = run_benchmark(seg, bench, cache=None, stats=stats)
    assert (stats.prompts, stats.images, stats.computed, stats.cached) == (5, 2, 5, 0)
    assert seg.calls == 5 and seg.encodes == 2  # a.png carries three prompts, encoded once
    assert stats.model_calls == 2  # one segment_many per image
    # answers are right: red and blue found, absent green empty, "dark red" matches by colour
    for s in bench:
        pred = ps.get(s.prompts[0].id)
        gt = s.gts["gt"]
        if gt.masks:
            assert iou(pred.instances[0].mask, gt.union()) == 1.0
    assert ps.get("3").instances == [] and ps.get("5").instances == []


def test_rerun_costs_no_model_call_and_no_image_read(toy, tmp_path):
    kind, args, bench = toy
    cache = PredictionCache(tmp_path / "cache")
    first = run_benchmark(ColourSegmenter(), bench, backend="toy", cache=cache)
    seg = ColourSegmenter()
    reads = []

    def loader(path):
        reads.append(path)
        return load_image(path)

    stats = RunStats()
    again = run_benchmark(seg, bench, backend="toy", cache=cache, image_loader=loader, stats=stats)
    assert seg.calls == 0 and seg.encodes == 0 and reads == []
    assert (stats.cached, stats.computed) == (5, 0)
    for pid, pred in first.by_prompt.items():
        other = again.get(pid)
        assert [i.mask for i in other.instances] == [i.mask for i in pred.instances]
        assert [i.score for i in other.instances] == [i.score for i in pred.instances]
        assert other.presence == pred.presence


def test_cache_key_follows_options_and_image_content(toy, tmp_path):
    kind, args, bench = toy
    cache = PredictionCache(tmp_path / "cache")
    run_benchmark(ColourSegmenter(), bench, backend="toy", cache=cache, options={"score_threshold": 0.5})
    seg = ColourSegmenter()
    run_benchmark(seg, bench, backend="toy", cache=cache, options={"score_threshold": 0.3})
    assert seg.calls == 5  # other threshold: recomputed
    seg = ColourSegmenter()
    run_benchmark(seg, bench, backend="toy", cache=cache, options={"score_threshold": 0.3, "device": "cpu"})
    assert seg.calls == 0  # the device is not part of the key
    # change one image's pixels: only its prompts are recomputed
    path = bench.samples[3].images["img"].path  # b.png
    img = cv2.imread(str(path))
    img[0, 0] = (1, 2, 3)
    cv2.imwrite(str(path), img)
    seg = ColourSegmenter()
    run_benchmark(seg, bench, backend="toy", cache=cache, options={"score_threshold": 0.3})
    assert seg.calls == 2 and seg.encodes == 1


@pytest.mark.parametrize("exc", [Cancelled, KeyboardInterrupt])
def test_interrupted_run_resumes(toy, tmp_path, exc):
    """Interrupt from the progress callback after the first image; the re-run computes only the rest."""
    kind, args, bench = toy
    cache = PredictionCache(tmp_path / "cache")
    seg = ColourSegmenter()

    def progress(done, total):
        if done > 0:
            raise exc()

    with pytest.raises(exc):
        run_benchmark(seg, bench, backend="toy", cache=cache, progress=progress)
    assert seg.calls == 3  # a.png's three prompts done and stored
    assert len(cache) == 3
    seg2 = ColourSegmenter()
    stats = RunStats()
    ps = run_benchmark(seg2, bench, backend="toy", cache=cache, stats=stats)
    assert seg2.calls == 2 and (stats.cached, stats.computed) == (3, 2)
    assert len(ps.by_prompt) == 5


def test_interrupt_inside_the_model_keeps_previous_images(toy, tmp_path):
    kind, args, bench = toy
    cache = PredictionCache(tmp_path / "cache")
    seg = ColourSegmenter()

    def hook(request):
        if seg.calls == 4:  # the second prompt of the second image
            raise KeyboardInterrupt

    seg.hook = hook
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(seg, bench, backend="toy", cache=cache)
    assert len(cache) == 3  # the half-done image stored nothing
    seg2 = ColourSegmenter()
    run_benchmark(seg2, bench, backend="toy", cache=cache)
    assert seg2.calls == 2


def test_cancel_event_and_progress_reports(toy):
    kind, args, bench = toy
    seen = []
    run_benchmark(ColourSegmenter(), bench, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(0, 5), (3, 5), (5, 5)]
    ev = threading.Event()
    seg = ColourSegmenter()

    def progress(done, total):
        if done:
            ev.set()

    with pytest.raises(Cancelled):
        run_benchmark(seg, bench, progress=progress, cancel=ev)
    assert seg.calls == 3


def test_missing_and_undecodable_images_name_the_path(toy, tmp_path):
    kind, args, bench = toy
    path = bench.samples[0].images["img"].path
    path.write_bytes(b"not a png")
    with pytest.raises(DataFormatError) as err:
        run_benchmark(ColourSegmenter(), bench)
    assert str(path) in str(err.value) and "decode" in str(err.value)
    path.unlink()
    with pytest.raises(DataFormatError) as err:
        run_benchmark(ColourSegmenter(), bench)
    assert str(path) in str(err.value) and "not found" in str(err.value)


def test_images_dir_is_searched(toy, tmp_path):
    kind, args, bench = toy
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    for name in ("a.png", "b.png"):
        src = bench.samples[0].images["img"].path.parent / name
        src.rename(moved / name)
    ps = run_benchmark(ColourSegmenter(), bench, images_dir=moved)
    assert len(ps.by_prompt) == 5


def test_load_image_converts_to_rgb(tmp_path):
    bgr = np.zeros((4, 5, 3), np.uint8)
    bgr[..., 0] = 255  # blue in BGR
    cv2.imwrite(str(tmp_path / "x.png"), bgr)
    rgb = load_image(tmp_path / "x.png")
    assert rgb.shape == (4, 5, 3) and rgb.dtype == np.uint8 and (rgb[..., 2] == 255).all()
    cv2.imwrite(str(tmp_path / "g.png"), np.full((3, 3), 7, np.uint8))
    assert load_image(tmp_path / "g.png").shape == (3, 3, 3)


def test_segment_cached_for_live_prompts(toy, tmp_path):
    from masklens.core.inference.runner import segment_cached
    from masklens.core.models.base import SegmentRequest

    kind, args, bench = toy
    cache = PredictionCache(tmp_path / "cache")
    image = load_image(bench.samples[0].images["img"].path)
    seg = ColourSegmenter()
    first, hit1 = segment_cached(seg, image, SegmentRequest("red", role="positive"), cache=cache)
    again, hit2 = segment_cached(seg, image, SegmentRequest("red", role="positive"), cache=cache)
    assert (hit1, hit2, seg.calls) == (False, True, 1)
    assert again.masks == first.masks and again.scores == first.scores
    # the same prompt inside a benchmark run is answered from the same entry
    run_benchmark(seg, bench, backend="toy-colour", cache=cache)
    assert seg.calls == 1 + 4


def test_an_image_without_a_file_name_asks_for_images_dir(tmp_path):
    import json

    from test_predict_toykind import ToyKind, make_toy_benchmark

    ann = make_toy_benchmark(tmp_path)
    data = json.loads(ann.read_text())
    del data["images"][1]["file_name"]
    ann.write_text(json.dumps(data))

    bench = ToyKind().load_benchmark(ann=str(ann))
    with pytest.raises(DataFormatError) as err:
        run_benchmark(ColourSegmenter(), bench)
    msg = str(err.value)
    assert str(ann) in msg and "sample 2" in msg and "--images" in msg

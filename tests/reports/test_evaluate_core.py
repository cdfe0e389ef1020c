"""core.evaluate: subsets, cancel mid-run and resume from the prediction cache, outputs."""

import json
import threading

import pytest

from masklens.core.cache.predictions import PredictionCache
from masklens.core.errors import Cancelled, MasklensError
from masklens.core.inference.evaluate import ModelSpec, evaluate, safe_label, subset

from .toykind import BrightSegmenter, install, install_backend, write_fixture


@pytest.fixture
def bench(tmp_path):
    kind = install()
    install_backend()
    files = write_fixture(tmp_path)
    return kind, kind.load_benchmark(ann=str(files["ann"]))


def test_subset_by_ids_and_groups(bench):
    _, b = bench
    assert [s.id for s in subset(b, samples=["s3", "s1"]).samples] == ["s1", "s3"]
    assert [s.id for s in subset(b, groups=["B"]).samples] == ["s3", "s4"]
    assert [s.id for s in subset(b, samples=["s1", "s3"], groups=["B"]).samples] == ["s3"]
    assert subset(b) is b
    with pytest.raises(MasklensError, match="unknown sample id"):
        subset(b, samples=["s9"])
    assert safe_label("sam3@/ckpt/a b") == "sam3@_ckpt_a_b"


def test_cancel_midway_then_resume_from_cache(bench, tmp_path):
    kind, b = bench
    cache = PredictionCache(tmp_path / "cache")
    stop = threading.Event()
    BrightSegmenter.calls = 0

    def progress(label, done, total):
        if done >= 4:  # two of four images done: the user presses Cancel
            stop.set()

    with pytest.raises(Cancelled):
        evaluate(kind, b, [ModelSpec("bright")], tmp_path / "out", cache=cache,
                 progress=progress, cancel=stop)
    first = BrightSegmenter.calls
    assert 0 < first < 8
    assert not (tmp_path / "out" / "summary.json").exists()  # nothing half-written
    res = evaluate(kind, b, [ModelSpec("bright")], tmp_path / "out", cache=cache)
    assert BrightSegmenter.calls - first == 8 - first  # only what was not finished
    assert res.stats["bright"]["cached"] == first and res.stats["bright"]["computed"] == 8 - first
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["models"]["bright"]["summary"]["all"]["N"] == 4
    cache.close()


def test_two_checkpoints_are_cached_apart(bench, tmp_path):
    kind, b = bench
    cache = PredictionCache(tmp_path / "cache")
    BrightSegmenter.calls = 0
    res = evaluate(kind, b, [ModelSpec("bright", "w1"), ModelSpec("bright", "w2")], None,
                   cache=cache)
    assert [r.name for r in res.runs] == ["bright@w1", "bright@w2"]
    assert BrightSegmenter.calls == 16
    cache.close()

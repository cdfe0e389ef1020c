"""`--ray` on a real local Ray (2 CPUs, no dashboard, a small object store), started once for the
module: the demo segmenter and a tiny random SAM 3 over the CAFE and HalluSegBench demos equal
the single-process outputs; an actor that dies mid-run is replaced and every result comes back
exactly once; an interrupted run resumes from the prediction cache."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest

from masklens.core import api
from masklens.core.cli import main
from masklens.core.errors import Cancelled

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
demo = pytest.importorskip("masklens.core.kinds.demo")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def local_ray():
    for key, value in {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled",
                       "RAY_DEDUP_LOGS": "0"}.items():
        os.environ.setdefault(key, value)
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024 * 1024,
                 log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def tree(path: Path) -> dict[str, bytes]:
    """The files of an output, without its output-folder marker (which names the folder itself)."""
    from masklens.core.files.output_dirs import MARKER

    if path.is_file():
        return {"": path.read_bytes()}
    return {str(f.relative_to(path)): f.read_bytes() for f in sorted(path.rglob("*"))
            if f.is_file() and f.name != MARKER}


def out_path(tmp_path: Path, kind: str, name: str) -> Path:
    return tmp_path / (name if kind == "hallusegbench" else f"{name}.json")


@pytest.mark.parametrize("kind", ["cafe", "hallusegbench"])
def test_cli_ray_equals_single_process(kind, local_ray, tmp_path, capsys):
    argv = ["predict", kind, *demo.demo_argv(kind, with_predictions=False), "--model", "demo", "--quiet"]
    single, on_ray = out_path(tmp_path, kind, "single"), out_path(tmp_path, kind, "ray")
    assert main([*argv, "--no-cache", "--out", str(single)]) == 0
    cache = str(tmp_path / "cache")
    rc = main([*argv, "--cache-dir", cache, "--ray", "--ray-workers", "2", "--ray-batch", "3",
               "--out", str(on_ray)])
    assert rc == 0, capsys.readouterr().err
    assert tree(on_ray) == tree(single) and tree(single)
    assert local_ray.is_initialized()  # the test's Ray was used, not shut down
    # everything is now in the cache: a re-run sends nothing to Ray
    capsys.readouterr()
    assert main([*argv, "--cache-dir", cache, "--ray", "--out", str(on_ray)]) == 0
    assert " 0 computed" in capsys.readouterr().err
    assert tree(on_ray) == tree(single)


def test_ray_batches_over_the_decoded_budget_are_split(local_ray, tmp_path, capsys, monkeypatch):
    """MASKLENS_MAX_BATCH_BYTES below three demo images (320 × 320 × 3 bytes each): the
    --ray-batch 3 calls are split into pairs, said once naming the images and the limit, and
    the output equals the single-process one."""
    import masklens.core.files.image_batches as batches

    monkeypatch.setattr(batches, "_said", False)
    argv = ["predict", "cafe", *demo.demo_argv("cafe", with_predictions=False), "--model", "demo",
            "--quiet", "--no-cache"]
    assert main([*argv, "--out", str(tmp_path / "single.json")]) == 0
    capsys.readouterr()
    monkeypatch.setenv("MASKLENS_MAX_BATCH_BYTES", str(2 * 320 * 320 * 3 + 10))
    rc = main([*argv, "--ray", "--ray-workers", "2", "--ray-batch", "3", "--out", str(tmp_path / "ray.json")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "Ray batch split before" in err and "over the limit of 1 MiB per batch" in err
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "single.json").read_bytes()


def test_evaluate_on_ray_equals_single_process(local_ray, tmp_path, capsys):
    argv = ["evaluate", "cafe", *demo.demo_argv("cafe", with_predictions=False), "--model", "demo",
            "--no-cache", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "single")]) == 0
    assert main([*argv, "--ray", "--ray-workers", "2", "--out", str(tmp_path / "ray")]) == 0, \
        capsys.readouterr().err
    assert tree(tmp_path / "ray" / "predictions") == tree(tmp_path / "single" / "predictions")
    assert tree(tmp_path / "ray" / "scores") == tree(tmp_path / "single" / "scores")


@pytest.mark.parametrize("kind", ["cafe", "hallusegbench"])
def test_tiny_sam3_on_ray_equals_single_process(kind, local_ray, tiny_sam3, tmp_path):
    from masklens.core.inference.ray_runner import RayConfig, run_benchmark_ray

    files = demo.demo_files(kind, with_predictions=False)
    opts = {"weights": str(tiny_sam3), "device": "cpu", "score_threshold": 0.0}
    single = api.predict(kind, "sam3", **opts, no_cache=True, out=out_path(tmp_path, kind, "single"),
                         **files)
    # one actor: each loads torch + transformers (the 2-actor pool is covered by the demo tests)
    runner = functools.partial(run_benchmark_ray, config=RayConfig(workers=1, batch_size=2))
    on_ray = api.predict(kind, "sam3", **opts, no_cache=True, out=out_path(tmp_path, kind, "ray"),
                         runner=runner, **files)
    assert set(on_ray.by_prompt) == set(single.by_prompt) and single.by_prompt
    assert sum(len(p.instances) for p in single.by_prompt.values()) > 0
    assert tree(out_path(tmp_path, kind, "ray")) == tree(out_path(tmp_path, kind, "single"))


class CrashOnce:
    """A segmenter factory whose segmenter kills its actor process (os._exit) on its Nth image,
    once per marker file: Ray Data must restart the actor and retry the lost batch."""

    def __init__(self, marker: Path, nth: int) -> None:
        self.marker, self.nth = marker, nth

    def __call__(self):
        from masklens.core.inference.prediction_io import PREDICTION_SCORE_FLOOR
        from masklens.core.models.registry import create_segmenter

        seg = create_segmenter("demo", score_threshold=PREDICTION_SCORE_FLOOR)  # as predict's default
        inner, calls, marker, nth = seg.segment_many, [0], self.marker, self.nth

        def segment_many(image, requests):
            calls[0] += 1
            if calls[0] == nth and not marker.exists():
                marker.write_text(str(os.getpid()))
                os._exit(1)
            return inner(image, requests)

        seg.segment_many = segment_many
        return seg


def test_an_actor_dying_mid_run_loses_and_repeats_nothing(local_ray, tmp_path):
    from masklens.core.cache.predictions import PredictionCache
    from masklens.core.inference.ray_runner import RayConfig, run_benchmark_ray
    from masklens.core.inference.runner import RunStats

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    files = demo.demo_files("cafe", with_predictions=False)
    bench = api.load_benchmark("cafe", **files)
    api.predict("cafe", "demo", bench, no_cache=True, out=tmp_path / "single.json",
                images=files["images"])
    marker = tmp_path / "crashed"
    stats = RunStats()
    runner = functools.partial(run_benchmark_ray, config=RayConfig(
        workers=2, batch_size=1, factory=CrashOnce(marker, nth=3)))
    result = api.predict("cafe", "demo", bench, cache_dir=tmp_path / "cache", out=tmp_path / "ray.json",
                         images=files["images"], runner=runner, stats=stats)
    assert marker.exists()  # an actor did die
    prompts = [p.id for s in bench.samples for p in s.prompts]
    assert set(result.by_prompt) == set(prompts)
    assert stats.computed == len(prompts) and stats.images_read == stats.images  # each once
    with PredictionCache(tmp_path / "cache") as cache:
        assert len(cache) == len(set(prompts))
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "single.json").read_bytes()


def test_interrupted_ray_run_resumes_from_the_cache(local_ray, tmp_path):
    from masklens.core.inference.ray_runner import RayConfig, run_benchmark_ray
    from masklens.core.inference.runner import RunStats

    files = demo.demo_files("hallusegbench", with_predictions=False)
    runner = functools.partial(run_benchmark_ray, config=RayConfig(workers=2, batch_size=1))
    seen: list[int] = []

    def stop_after_some(done: int, total: int) -> None:
        seen.append(done)
        if len(seen) == 4:  # the start, then three images
            raise Cancelled("stop")

    with pytest.raises(Cancelled):
        api.predict("hallusegbench", "demo", cache_dir=tmp_path / "cache", runner=runner,
                    progress=stop_after_some, **files)
    first = seen[-1]
    stats = RunStats()
    api.predict("hallusegbench", "demo", cache_dir=tmp_path / "cache", runner=runner, stats=stats,
                out=tmp_path / "ray", **files)
    assert stats.cached == first > 0 and stats.computed == stats.prompts - first
    api.predict("hallusegbench", "demo", no_cache=True, out=tmp_path / "single", **files)
    assert tree(tmp_path / "ray") == tree(tmp_path / "single")


def test_ray_missing_is_one_line_with_the_extra(tmp_path, capsys, monkeypatch):
    """Without Ray installed, `--ray` names the extra; no Ray is started here."""
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    rc = main(["predict", "cafe", *demo.demo_argv("cafe", with_predictions=False), "--model", "demo",
               "--ray", "--out", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "pip install 'masklens[ray]'" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()

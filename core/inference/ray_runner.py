"""Run a segmenter over a benchmark on Ray: the (image, prompts) work items as a Ray Data dataset,
answered by a pool of segmenter actors (``map_batches`` with an actor class).

Each actor creates the segmenter once and answers every prompt of an image in one
``segment_many`` call (:func:`~masklens.core.inference.runner.segment_image`, the model work the
single-process path does). The driver answers what the prediction cache holds before
anything is sent, and writes each finished image to the cache as its result streams back,
so a killed or interrupted run resumes where it stopped; a lost actor is restarted by Ray
Data and its unfinished batches retried, and the driver keeps each item exactly once.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from masklens.core.cache.entries import result_from_json, result_to_json
from masklens.core.cache.model_cache import image_key
from masklens.core.cache.predictions import PredictionCache
from masklens.core.errors import Cancelled, MasklensError
from masklens.core.files.image_batches import plan_batches
from masklens.core.inference.runner import (
    CancelCheck,
    Progress,
    RunStats,
    answer_from_cache,
    cache_keys,
    checkpoint_identity,
    is_cancelled,
    key_params,
    load_image,
    plan_images,
    remember_image_key,
    request_for,
    segment_image,
    store_computed,
)
from masklens.core.models.base import Segmenter, SegmentRequest
from masklens.core.schema import Benchmark, PredictionSet

INSTALL_HINT = "pip install 'masklens[ray]'"


@dataclass
class RayConfig:
    """How to run on Ray. ``address``: None starts a local instance (or uses the one this process
    already started), ``"auto"``/``"ray://host:10001"`` joins a cluster. ``workers``: actors
    (default: one per GPU, else one per CPU). ``batch_size``: images per actor call.
    ``factory``: makes the segmenter inside an actor (default: the backend by name)."""

    address: str | None = None
    workers: int | None = None
    batch_size: int = 4
    factory: Callable[[], Segmenter] | None = None


def import_ray() -> Any:
    """``ray`` with Ray Data, or a one-line MasklensError naming the extra to install."""
    try:
        import ray
        import ray.data  # noqa: F401 - needs pandas/pyarrow (the extra's ray[data])
    except ImportError as exc:
        raise MasklensError(f"--ray needs Ray Data ({exc.name or 'ray'} is not installed): "
                            f"{INSTALL_HINT}") from None
    return ray


class SegmenterActor:
    """A Ray Data actor: one segmenter per actor, one ``segment_many`` per image. Each row is
    one planned batch of images (core/files/image_batches.py: within the decoded-size budget),
    decoded one after the other."""

    def __init__(self, factory: Callable[[], Segmenter], backend: str) -> None:
        self.segmenter = factory()
        self.backend = backend

    def __call__(self, batch: Mapping[str, np.ndarray]) -> dict[str, list[Any]]:
        import orjson

        out = []
        for text in batch["images"]:
            answers = []
            for entry in orjson.loads(text):
                t0 = time.perf_counter()
                h, w = (int(v) for v in entry["size"])
                image = load_image(entry["path"], (h, w) if h > 0 else None)  # the one decoder
                results = segment_image(self.segmenter, image, [_request(r) for r in entry["requests"]],
                                        backend=self.backend)
                answers.append({"item": entry["item"], "image_key": image_key(image),
                                "results": [result_to_json(r) for r in results],
                                "seconds": time.perf_counter() - t0})
                del image  # one decoded image at a time
            out.append(orjson.dumps(answers).decode())
        return {"answers": out}


def _request(r: Mapping[str, Any]) -> SegmentRequest:
    """A SegmentRequest back from its JSON form (boxes and points as tuples again)."""
    return SegmentRequest(
        text=r["text"], role=r.get("role"),
        boxes=[tuple(b) for b in r["boxes"]] if r.get("boxes") else None,
        points=[tuple(p) for p in r["points"]] if r.get("points") else None,
    )


def connect(ray: Any, address: str | None) -> bool:
    """Join or start Ray; True when this call started it (and must shut it down)."""
    if ray.is_initialized():
        return False
    try:
        if address:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        else:
            ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise MasklensError(f"cannot reach the Ray cluster at '{address or 'local'}' ({exc})",
                            field="--ray", hint="start it with `ray start --head`, or omit ADDRESS "
                            "for a local instance") from None
    return True


def actor_resources(ray: Any, workers: int | None, device: str | None) -> tuple[int, dict[str, float]]:
    """How many actors and what each asks for: one GPU where the cluster has GPUs (and the
    device is not forced to CPU), else one CPU."""
    res = ray.cluster_resources()
    gpus = int(res.get("GPU", 0)) if device not in ("cpu",) else 0
    if gpus:
        return workers or gpus, {"num_gpus": 1.0}
    return workers or max(1, int(res.get("CPU", 1))), {"num_cpus": 1.0}


def run_benchmark_ray(
    segmenter: Segmenter,
    benchmark: Benchmark,
    *,
    backend: str | None = None,
    options: Mapping[str, Any] | None = None,
    cache: PredictionCache | None = None,
    images_dir: str | Path | None = None,
    progress: Progress | None = None,
    cancel: CancelCheck = None,
    stats: RunStats | None = None,
    config: RayConfig | None = None,
) -> PredictionSet:
    """:func:`~masklens.core.inference.runner.run_benchmark` with the model work on Ray actors;
    the same arguments and the same PredictionSet. ``segmenter`` is only asked for its name and
    cache identity here (it is not loaded on the driver)."""
    config = config or RayConfig()
    ray = import_ray()
    if not getattr(segmenter, "cacheable", True):
        raise MasklensError("--ray runs a model; this backend replays a file (nothing to distribute)",
                            hint="drop --ray")
    t0 = time.perf_counter()
    stats = stats if stats is not None else RunStats()
    name = backend or segmenter.info.name
    opts = dict(options or {})
    params = key_params(opts)
    ckpt = checkpoint_identity(segmenter, opts) if cache is not None else ""
    jobs = plan_images(benchmark, images_dir)
    total = sum(len(j.prompts) for j in jobs)
    stats.prompts, stats.images = total, len(jobs)
    out = PredictionSet(name=name, provenance={"model": name, **opts})
    todo: dict[int, list[Any]] = {}
    for i, job in enumerate(jobs):
        _, _, left = answer_from_cache(job, out, cache=cache, backend=name, checkpoint=ckpt,
                                       params=params, read=False, stats=stats)
        if left:
            todo[i] = left
    done = total - sum(len(v) for v in todo.values())
    if progress is not None:
        progress(done, total)
    if todo:
        order = list(todo)  # batches within the decoded-size budget, planned before Ray starts
        plan = plan_batches([jobs[i].path for i in order], max(1, config.batch_size), what="Ray batch")
        batches = [[order[k] for k in b] for b in plan.batches]
        started = connect(ray, config.address)
        try:
            workers, resources = actor_resources(ray, config.workers, opts.get("device"))
            actor_opts = dict(opts)
            if "num_gpus" in resources and str(opts.get("device") or "").startswith("cuda:"):
                actor_opts["device"] = "cuda"  # an actor sees only the GPU Ray gave it
            factory = config.factory or functools.partial(_create, name, actor_opts)
            for item, ikey, results, busy in _stream(ray, jobs, todo, factory, name, batches,
                                                     workers, resources):
                if is_cancelled(cancel):
                    raise Cancelled(f"cancelled after {done} of {total} prompts")
                prompts = todo.pop(item)
                keys = cache_keys(prompts, backend=name, checkpoint=ckpt, image=ikey, params=params)
                store_computed(out, prompts, results, cache=cache, keys=keys if cache else None)
                if cache is not None:
                    remember_image_key(cache, jobs[item].path, ikey)
                stats.computed += len(prompts)
                stats.images_read += 1
                stats.model_calls += 1
                stats.worker_seconds += busy
                done += len(prompts)
                if progress is not None:
                    progress(done, total)
        finally:
            if started:
                ray.shutdown()
        if todo:  # pragma: no cover - Ray Data returned without every item
            raise RuntimeError(f"Ray returned no result for {len(todo)} image(s)")
    stats.seconds = time.perf_counter() - t0
    return out


def _create(name: str, options: Mapping[str, Any]) -> Segmenter:
    from masklens.core.models.registry import create_segmenter

    return create_segmenter(name, **options)


def _stream(ray: Any, jobs: list[Any], todo: Mapping[int, list[Any]], factory: Callable[[], Segmenter],
            name: str, batches: list[list[int]], workers: int, resources: Mapping[str, float]):
    """Yield (item, image key, results, worker seconds) as the actors finish them; each item at
    most once. ``batches``: the items of each actor call."""
    import orjson

    logging.getLogger("ray.data").setLevel(logging.ERROR)  # its INFO lines would break the bar
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False  # the driver shows one bar, fed by the results
    ctx.print_on_execution_start = False
    rows = [{"images": orjson.dumps([
        {"item": i, "path": str(jobs[i].path), "size": list(jobs[i].size or (0, 0)),
         "requests": [asdict(request_for(p)) for p in todo[i]]} for i in batch]).decode()}
        for batch in batches]
    ds = ray.data.from_items(rows, override_num_blocks=len(rows))
    mapped = ds.map_batches(
        SegmenterActor, fn_constructor_args=(factory, name), batch_size=1,
        compute=ray.data.ActorPoolStrategy(size=workers), **resources,
    )
    seen: set[int] = set()
    for out in mapped.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=0):
        for text in out["answers"]:
            for answer in orjson.loads(text):
                item = int(answer["item"])
                if item in seen:  # a retried batch whose first answer already came back
                    continue
                seen.add(item)
                yield (item, str(answer["image_key"]), [result_from_json(r) for r in answer["results"]],
                       float(answer["seconds"]))

"""Job functions run on the thread pool (no widgets touched here): loading, scoring, inference.

Each takes a :class:`~masklens.gui.jobs.workers.JobContext` first, reports progress through it
(which raises Cancelled once the user cancelled) and returns plain data for the GUI thread.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from masklens.core.errors import MasklensError
from masklens.core.schema import Benchmark, PredictionSet, Role, Sample
from masklens.core.scoring.contract import BenchmarkKind, PredictionsAhead, Scorer
from masklens.core.scoring.kind_args import kind_files
from masklens.core.scoring.readout import (
    benchmark_overlaps,
    benchmark_readout,
    generic_readout,
    make_typed_prompt,
    replaced_prompt,
)
from masklens.core.scoring.records import Records


@dataclass
class Loaded:
    """A benchmark loaded; ``predictions_ahead``: its prediction files being read ahead, for
    :func:`score_predictions` (whoever takes the Loaded closes it when it does not pass it on)."""

    kind: BenchmarkKind
    benchmark: Benchmark
    namespace: argparse.Namespace
    argv: list[str]
    predictions_ahead: PredictionsAhead | None = None


def load_benchmark(ctx: Any, kind: BenchmarkKind, namespace: argparse.Namespace, argv: list[str],
                   read_ahead: bool = False) -> Loaded:
    """Load the benchmark ``namespace`` names. ``read_ahead``: start reading its prediction
    files first, where the kind reads ahead (:meth:`BenchmarkKind.read_predictions_ahead`);
    closed here when the load fails or is cancelled."""
    ctx.progress(0, 1, f"loading {kind.title or kind.name}…")
    files = kind_files(kind, namespace)
    ahead = kind.read_predictions_ahead(**files) if read_ahead else None
    try:
        bench = kind.load_benchmark(**files)
        if not bench.samples:
            raise MasklensError(f"{kind.title or kind.name}: the benchmark has no samples",
                                path=next(iter(bench.sources.values()), None))
        ctx.progress(1, 1, f"{len(bench.samples)} samples")
    except BaseException:
        if ahead is not None:
            ahead.close()
        raise
    return Loaded(kind, bench, namespace, argv, ahead)


@dataclass
class Scored:
    """A prediction set scored in the worker pool, with its readouts at ``params``."""

    predictions: PredictionSet
    scorer: Scorer
    params: dict[str, float]
    readouts: Records


def score_predictions(
    ctx: Any, kind: BenchmarkKind, benchmark: Benchmark, namespace: argparse.Namespace,
    params: Mapping[str, float], predictions: PredictionSet | None = None,
    ahead: PredictionsAhead | None = None,
) -> Scored:
    """Load predictions (unless given; ``ahead``: the files read ahead, closed here in any
    case), compute every sample's overlaps, with progress, and the readouts at ``params`` (the
    window's values: SA-Co/Gold's tables of 168,000 entries take seconds to build, here rather
    than on the GUI thread)."""
    try:
        if predictions is None:
            ctx.progress(0, 1, "reading predictions…")
            given = {"ahead": ahead} if ahead is not None else {}
            predictions = kind.load_predictions(benchmark, **kind_files(kind, namespace), **given)
    finally:
        if ahead is not None:
            ahead.close()
    n = len(benchmark.samples)
    step = max(1, n // 200)

    def progress(i: int, total: int) -> None:
        if i % step == 0 or i == total:
            ctx.progress(i, total, "scoring")
        else:
            ctx.check()

    scorer = Scorer(kind, benchmark, predictions, progress=progress)
    ctx.progress(n, n, "tabulating")
    return Scored(predictions, scorer, dict(params), scorer.readouts(params))


def with_predictions(namespace: argparse.Namespace, dest_values: dict[str, Any]) -> argparse.Namespace:
    ns = copy.copy(namespace)
    for k, v in dest_values.items():
        setattr(ns, k, v)
    return ns


@dataclass
class PromptRun:
    sample_id: str
    prompt: Any
    model: str
    prediction: Any
    generic: dict[str, Any]
    benchmark: dict[str, Any] | None
    replaced: str | None
    seconds: float
    device: str | None
    staged: Any = None  # (substituted sample, overlaps): re-derive the readout for new params
    base: Any = None  # the prediction set the other prompts were answered from
    from_cache: bool = False  # answered from the on-disk prediction cache (no model call)
    cache_problem: str | None = None  # why the prediction cache could not be opened


def run_prompt(
    ctx: Any,
    models: Any,
    model: str,
    options: dict[str, Any],
    image: np.ndarray,
    kind: BenchmarkKind,
    sample: Sample,
    text: str,
    role: Role,
    level: int | None,
    image_key: str | None,
    params: dict[str, float],
    base: PredictionSet | None,
    serial: int,
    replaces: str | None = None,
    cache: Any = None,
    visual: dict[str, Any] | None = None,
    prepare: Callable[[Any], Any] | None = None,
) -> PromptRun:
    """Run one typed prompt on one model and derive both readouts.

    With a PredictionCache, a prompt asked before (same backend, checkpoint, image content,
    text, role, drawn boxes/points, options) is answered from disk: the model is not even
    loaded. ``cache`` may also be a function giving (the cache or None, why not), called here,
    so that opening it stays off the GUI thread. ``visual`` holds boxes/points drawn on the
    canvas (joined to the prompt's meta). ``prepare(prediction)`` is called here with the
    result: the window makes its overlay in this thread (gui/canvas/prepared.py)."""
    from masklens.core.inference.runner import request_for, segment_cached, to_prediction
    from masklens.core.models.interrupt import cancel_check

    prompt = make_typed_prompt(sample, text, role, level=level, image=image_key,
                               prompt_id=f"live:{serial}", replaces=replaces)
    if visual:
        import dataclasses

        prompt = dataclasses.replace(prompt, meta={**prompt.meta, **visual})
    ctx.progress(0, 2, f"{model}: “{text}”")
    t0 = time.perf_counter()
    cache_problem = None
    if callable(cache):
        cache, cache_problem = cache()
    request = request_for(prompt)
    # the manager loads lazily, unloads models that would not fit beside it, retries after OOM;
    # Cancel interrupts the forward pass itself (a hook before every submodule checks the flag)
    with cancel_check(ctx.check):
        result, from_cache = models.call(
            model,
            lambda seg: segment_cached(seg, image, request, cache=cache, backend=model, options=options),
            **options,
        )
    seconds = time.perf_counter() - t0
    ctx.progress(1, 2, "scoring")
    prediction = to_prediction(prompt.id, result)
    t = params.get("score_threshold", 0.0)
    generic = generic_readout(sample, prompt, prediction, t)
    staged = benchmark_overlaps(kind, sample, prompt, prediction, base)
    bench = benchmark_readout(kind, sample, prompt, prediction, params, base, cached=staged)
    replaced = replaced_prompt(sample, prompt.role, prompt.level, prompt.image, text=prompt.text,
                               prompt_id=prompt.meta.get("replaces"))
    device = (models.get(model, **options).provenance() or {}).get("device")
    if prepare is not None:
        ctx.check()
        prepare(prediction)
    ctx.progress(2, 2, "done")
    return PromptRun(sample.id, prompt, model, prediction, generic, bench,
                     replaced.id if replaced else None, seconds, device, staged, base, from_cache, cache_problem)

"""The Python API: load, score and predict from a notebook or a script, with the same keyword
names as the command-line flags (``--ann`` -> ``ann=``, ``--pred-dir`` -> ``pred_dir=``,
``--score-threshold`` -> ``score_threshold=``).

    >>> import masklens.core as ml
    >>> r = ml.score("cafe", ann="resources/demo/cafe/ann.json",
    ...              pred="resources/demo/cafe/pred_demo.json", score_threshold=0.5)
    >>> r.summary["Overall"]["N"]
    18

``masklens score|predict`` are thin layers over these functions. Everything is re-exported
from :mod:`masklens.core` and imported lazily there, so ``import masklens.core`` stays light.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from masklens.core.schema import Benchmark, PredictionSet
from masklens.core.scoring import contract as scoring
from masklens.core.scoring.contract import BenchmarkKind, PredictionsAhead, ScoreResult
from masklens.core.scoring.kind_args import check_files, check_keywords, kind_files

__all__ = [
    "Benchmark",
    "PredictionSet",
    "ScoreResult",
    "Scorer",
    "get_kind",
    "kind_names",
    "load_benchmark",
    "load_predictions",
    "model_names",
    "predict",
    "score",
    "segmenter",
]

KindLike = str | BenchmarkKind[Any]


def get_kind(kind: KindLike) -> BenchmarkKind[Any]:
    """The benchmark kind named ``kind`` (``"cafe"``, ``"pcs"``, …), or ``kind`` itself."""
    return scoring.get_kind(kind) if isinstance(kind, str) else kind


def kind_names() -> list[str]:
    """The names of the registered benchmark kinds."""
    return scoring.kind_names()


def model_names() -> list[str]:
    """The names of the registered model backends (see `masklens models`)."""
    from masklens.core.models.registry import backend_names

    return backend_names()


def load_benchmark(kind: KindLike, **files: Any) -> Benchmark:
    """Load a benchmark's ground truth from its files, named as the flags of
    ``masklens score KIND`` (``ann=``, ``gt=[…]``, ``data=`` and ``root=``, ``images=``…).
    Prediction keywords (``pred=``) are accepted and ignored, so one dict can serve both loaders."""
    k = get_kind(kind)
    check_files(k, files, predictions=False)
    return k.load_benchmark(**_local(k, kind_files(k, files)))


def load_predictions(kind: KindLike, benchmark: Benchmark, *, ahead: PredictionsAhead | None = None,
                     **files: Any) -> PredictionSet:
    """Load a prediction set for ``benchmark`` (``pred=`` or ``pred_dir=``, as the CLI flags).
    ``ahead``: what the kind's ``read_predictions_ahead`` gave for the same files (the caller
    closes it)."""
    k = get_kind(kind)
    check_files(k, files, predictions=True)
    given = {"ahead": ahead} if ahead is not None else {}
    return k.load_predictions(benchmark, **_local(k, kind_files(k, files)), **given)


def _load_both(kind: KindLike, **files: Any) -> tuple[Benchmark, PredictionSet]:
    """:func:`load_benchmark` and :func:`load_predictions` of the same files, the prediction
    files read ahead while the benchmark loads where the kind does that (large files; in a
    worker process)."""
    k = get_kind(kind)
    ahead = k.read_predictions_ahead(**kind_files(k, files))
    try:
        benchmark = load_benchmark(k, **files)
        return benchmark, load_predictions(k, benchmark, ahead=ahead, **files)
    finally:
        if ahead is not None:
            ahead.close()


def _local(k: BenchmarkKind[Any], files: dict[str, Any]) -> dict[str, Any]:
    """``files`` with ``hf://datasets/…`` paths fetched into the Hugging Face cache."""
    from masklens.core.interop.hub import local_files

    return local_files(k, files)


def _split(k: BenchmarkKind[Any], kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(files, params): a kind's scoring parameters apart from its file arguments."""
    names = {p.name for p in k.params}
    params = {key: v for key, v in kwargs.items() if key in names}
    files = {key: v for key, v in kwargs.items() if key not in names}
    return files, params


class Scorer(scoring.Scorer[Any]):
    """Scores a benchmark against a prediction set once, then re-scores at new parameters
    without touching masks again::

        s = Scorer("cafe", ann=..., pred=...)
        s.rescore(score_threshold=0.3).summary

    ``benchmark``/``predictions`` may be given as loaded objects instead of files.
    """

    def __init__(
        self,
        kind: KindLike,
        /,
        benchmark: Benchmark | None = None,
        predictions: PredictionSet | None = None,
        *,
        progress: Callable[[int, int], None] | None = None,
        **files: Any,
    ) -> None:
        k = get_kind(kind)
        if benchmark is None and predictions is None:
            benchmark, predictions = _load_both(k, **files)
        elif benchmark is None:
            benchmark = load_benchmark(k, **files)
        if predictions is None:
            predictions = load_predictions(k, benchmark, **files)
        elif files:
            check_files(k, files, predictions=False)
        super().__init__(k, benchmark, predictions, progress=progress)

    def rescore(self, params: Mapping[str, Any] | None = None, /, **values: Any) -> ScoreResult:
        """The result at ``params`` (a mapping and/or keywords such as ``score_threshold=0.3``;
        parameters left out take the kind's defaults)."""
        return super().rescore({**(params or {}), **values})


def score(
    kind: KindLike,
    /,
    benchmark: Benchmark | None = None,
    predictions: PredictionSet | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    pretty: bool = False,
    **kwargs: Any,
) -> ScoreResult:
    """Score predictions against a benchmark, as ``masklens score KIND``.

    ``kwargs`` are the command's flags as keywords: the kind's files (``ann=``, ``pred=``,
    ``gt=[…]``, ``data=``, ``pred_dir=``…) and its parameters (``score_threshold=``,
    ``iou_threshold=``, ``alpha=``…; defaults as on the CLI). A loaded ``benchmark`` and
    ``predictions`` may stand in for the files. ``out=`` also writes the JSON ``--out`` writes
    (compact; ``pretty=True``: indented, as ``--pretty``), its last key ``provenance`` (the
    masklens version, each input's path, sha256 and Hub revision, the parameters, the time:
    :mod:`masklens.core.scoring.provenance`).
    """
    k = get_kind(kind)
    files, params = _split(k, kwargs)
    check_keywords(k, files, params=[p.name for p in k.params])  # score_treshold= names its fix
    resolved = k.resolve_params(params)  # bad values fail before any file is read
    given = {d: v for d, v in files.items() if v is not None}
    local = _local(k, given)  # once: the files scored are the files the provenance names
    if out is not None:  # never over one of the files it reads (or their folders)
        from masklens.core.files.output_dirs import refuse_inputs

        refuse_inputs(out, [*given.values(), *local.values(), *(benchmark.sources.values() if benchmark else ())])
    result = Scorer(k, benchmark, predictions, **local).rescore(resolved)
    if out is not None:
        from masklens.core.files.io import atomic_write_json_fast
        from masklens.core.scoring.provenance import score_provenance

        data = {**result.to_json(), "provenance": score_provenance(k.name, given, local, result.params)}
        atomic_write_json_fast(Path(out), data, pretty=pretty)
    return result


def segmenter(
    name: str, weights: str | os.PathLike[str] | None = None, device: str | None = None, **options: Any
) -> Any:
    """A model backend by name (``"demo"``, ``"sam3"``, ``"clipseg"``…; see :func:`model_names`), as
    ``masklens predict --model NAME --weights … --device …``; weights load on first use.
    Backend-specific ``options`` are what ``--option KEY=VALUE`` passes."""
    from masklens.core.models.registry import create_segmenter

    given = {"weights": str(weights) if weights is not None else None, "device": device}
    return create_segmenter(name, **{k: v for k, v in given.items() if v is not None}, **options)


def predict(
    kind: KindLike,
    model: str | Any,
    /,
    benchmark: Benchmark | None = None,
    *,
    weights: str | os.PathLike[str] | None = None,
    device: str | None = None,
    score_threshold: float | None = None,
    option: Mapping[str, Any] | None = None,
    images: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    no_cache: bool = False,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    stats: Any = None,
    runner: Callable[..., PredictionSet] | None = None,
    **files: Any,
) -> PredictionSet:
    """Run a model over a benchmark's prompts, as ``masklens predict KIND --model NAME``.

    ``model`` is a backend name (created with ``weights``/``device``/``option``) or a segmenter
    from :func:`segmenter`. The benchmark is given loaded or by its files (``ann=``…). Finished
    images go to the prediction cache (``cache_dir``; ``no_cache=True`` to skip it), so a re-run
    is fast. ``score_threshold`` keeps instances scored at least that (default: 0.05, or the
    backend's own where lower, so files keep low-scored instances for the scorer's t; the
    backend's own on HalluSegBench, whose masks carry no score); ``out=`` writes the kind's
    own prediction format atomically (what :func:`load_predictions` reads back). ``progress(done,
    total)`` is called per image; ``stats`` (a ``runner.RunStats``) collects counts and times.
    ``runner`` replaces ``runner.run_benchmark`` (same arguments), e.g. a bound
    ``ray_runner.run_benchmark_ray`` to run on Ray.
    """
    from masklens.core.cache.predictions import PredictionCache
    from masklens.core.inference.prediction_io import (
        default_output_threshold,
        keep_scored,
        write_atomically,
    )
    from masklens.core.inference.runner import run_benchmark

    k = get_kind(kind)
    if benchmark is None:
        # images= only where given: HalluSegBench names its image folder root=
        benchmark = load_benchmark(k, **({"images": images} if images is not None else {}), **files)
    options: dict[str, Any] = dict(option or {})  # what the model was made with: the cache key
    given = {"weights": str(weights) if weights is not None else None, "device": device,
             "score_threshold": score_threshold}
    if isinstance(model, str) and score_threshold is None and "score_threshold" not in options:
        given["score_threshold"] = default_output_threshold(k, model)
    options.update({key: v for key, v in given.items() if v is not None})
    if isinstance(model, str):
        name, seg = model, segmenter(model, **options)
    else:
        name, seg = model.info.name, model
    cache = None if no_cache else PredictionCache(None if cache_dir is None else Path(cache_dir))
    try:
        predictions = (runner or run_benchmark)(seg, benchmark, backend=name, options=options, cache=cache,
                                    images_dir=None if images is None else Path(images), progress=progress,
                                    stats=stats)
    finally:
        if cache is not None:
            cache.close()
    # backends already drop instances below their own threshold; an explicit one is applied
    # once more to the output so that it holds for every backend alike
    if options.get("score_threshold") is not None:
        predictions = keep_scored(predictions, float(options["score_threshold"]))
    if out is not None:
        write_atomically(k, benchmark, predictions, Path(out))
    return predictions


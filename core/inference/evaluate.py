"""Evaluate: run one or several models over a benchmark (or a subset), then score them.

Each model runs through :func:`masklens.core.inference.runner.run_benchmark`, which
answers finished prompts from the prediction cache, so an interrupted evaluation
(Ctrl-C, Cancel in the GUI) resumes where it stopped. For each model the output
folder gets its predictions in the benchmark's own format
(``predictions/<label>/``, written with the kind's ``write_predictions``) and its
scores (``scores/<label>.json``, as `masklens score --out` writes them); a
``summary.json`` lists every model's summary and run statistics.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masklens.core.errors import Cancelled, MasklensError
from masklens.core.files.io import atomic_write_json
from masklens.core.files.output_dirs import Checked, check_replaceable
from masklens.core.reports.runs import ModelRun, run_provenance, unique_names
from masklens.core.schema import Benchmark
from masklens.core.scoring.contract import BenchmarkKind, Scorer

#: progress(label, done, total): per model, prompts done of total (scoring reported as label + " · scoring")
Progress = Callable[[str, int, int], None]


@dataclass
class ModelSpec:
    """One model (or checkpoint) to evaluate: backend name, weights, backend options, label."""

    name: str
    weights: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    label: str | None = None

    def display(self) -> str:
        if self.label:
            return self.label
        if self.weights:
            return f"{self.name}@{Path(str(self.weights).rstrip('/')).name}"
        return self.name

    def create_options(self) -> dict[str, Any]:
        opts = dict(self.options)
        if self.weights is not None:
            opts["weights"] = self.weights
        return opts


@dataclass
class EvaluateResult:
    runs: list[ModelRun]
    outputs: dict[str, list[Path]] = field(default_factory=dict)
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)


def subset(
    benchmark: Benchmark,
    *,
    samples: Iterable[str] | None = None,
    groups: Iterable[str] | None = None,
) -> Benchmark:
    """The benchmark restricted to some sample ids and/or groups (unknown ids/groups are errors)."""
    ids = [s for s in (samples or []) if s]
    gs = [g for g in (groups or []) if g]
    if not ids and not gs:
        return benchmark
    known = {s.id for s in benchmark.samples}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise MasklensError(
            f"unknown sample id(s): {', '.join(unknown[:5])}{' …' if len(unknown) > 5 else ''}",
            field="--samples", hint=f"{len(known)} samples, e.g. {', '.join(list(known)[:3])}",
        )
    present = {s.group for s in benchmark.samples}
    bad = [g for g in gs if g not in present]
    if bad:
        raise MasklensError(
            f"unknown group(s): {', '.join(bad)}", field="--group",
            hint=f"groups of this benchmark: {', '.join(sorted(str(g) for g in present))}",
        )
    id_set, group_set = set(ids), set(gs)
    keep = [
        s for s in benchmark.samples
        if (not ids or s.id in id_set) and (not gs or s.group in group_set)
    ]
    return Benchmark(benchmark.kind, benchmark.name, keep, dict(benchmark.sources),
                     {**benchmark.meta, "subset": {"samples": ids, "groups": gs}})


def safe_label(label: str) -> str:
    """A file-name-safe version of a model label."""
    return re.sub(r"[^A-Za-z0-9._@+-]+", "_", label).strip("._") or "model"


def evaluate(
    kind: BenchmarkKind,
    benchmark: Benchmark,
    models: Sequence[ModelSpec],
    out: str | Path | None,
    *,
    params: Mapping[str, Any] | None = None,
    cache: Any = None,
    images_dir: str | Path | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | Callable[[], bool] | None = None,
    manager: Any = None,
    runner: Callable[..., Any] | None = None,
) -> EvaluateResult:
    """Run each model over ``benchmark`` (cached), write its predictions and scores under ``out``.

    ``cache`` is a :class:`~masklens.core.cache.predictions.PredictionCache` (None: no caching);
    ``manager`` a :class:`~masklens.core.models.manager.ModelManager` (one is made
    when None); ``runner`` replaces ``run_benchmark`` (e.g. the Ray runner). Raises :class:`Cancelled` when ``cancel`` fires; what finished is
    in the cache and a re-run continues.
    """
    from masklens.core.inference.prediction_io import default_output_threshold
    from masklens.core.inference.runner import RunStats, is_cancelled, run_benchmark
    from masklens.core.models.manager import ModelManager

    if not models:
        raise MasklensError("evaluate needs at least one --model")
    p = kind.resolve_params(params)
    manager = manager or ModelManager()
    labels = unique_names([m.display() for m in models])
    if len({safe_label(x) for x in labels}) != len(labels):  # e.g. "a/b" vs "a_b"
        labels = [f"{x} ({i + 1})" for i, x in enumerate(labels)]
    result = EvaluateResult([])
    root = Path(out) if out is not None else None
    inputs = [*benchmark.sources.values(), images_dir]
    checked = None if root is None else check_replaceable(root, inputs=inputs)  # before the work
    for spec, label in zip(models, labels, strict=True):
        options = spec.create_options()
        if "score_threshold" not in options:  # as `predict`: files keep low-scored instances
            floor = default_output_threshold(kind, spec.name)
            options.update({} if floor is None else {"score_threshold": floor})
        segmenter = manager.get(spec.name, **options)
        stats = RunStats()
        cb = (lambda d, n, _l=label: progress(_l, d, n)) if progress else None
        predictions = (runner or run_benchmark)(
            segmenter, benchmark, backend=spec.name, options=options, cache=cache,
            images_dir=images_dir, progress=cb, cancel=cancel, stats=stats,
        )
        predictions.name = label
        predictions.provenance.update(_segmenter_provenance(segmenter))
        if is_cancelled(cancel):
            raise Cancelled("cancelled before scoring")
        scb = (lambda d, n, _l=label: progress(f"{_l} · scoring", d, n)) if progress else None
        scorer = Scorer(kind, benchmark, predictions, progress=scb)
        run = ModelRun(label, predictions, scorer, scorer.rescore(p), run_provenance(predictions))
        result.runs.append(run)
        result.stats[label] = {
            "prompts": stats.prompts, "cached": stats.cached, "computed": stats.computed,
            "images": stats.images, "seconds": round(stats.seconds, 3),
        }
    if root is not None:
        _write_evaluation(kind, benchmark, result, p, root, inputs, checked)
    return result


def _write_evaluation(kind: BenchmarkKind, benchmark: Benchmark, result: EvaluateResult,
                      params: dict[str, Any], root: Path, inputs: Sequence[Any],
                      checked: Checked | None) -> None:
    """The evaluation folder, written whole into a staging folder and put in place in one step
    (a full disk or a Ctrl+C leaves the previous ``--out`` as it was; ``checked``: ``root``
    as it was checked before the work)."""
    from masklens.core.files.io import atomic_directory
    from masklens.core.inference.shards import write_sidecar

    with atomic_directory(root, what="evaluation", inputs=inputs, checked=checked) as tmp:
        for run in result.runs:
            pred_dir = tmp / "predictions" / safe_label(run.name)
            pred_dir.mkdir(parents=True, exist_ok=True)
            written = kind.write_predictions(benchmark, run.predictions, pred_dir)
            if "shard" in benchmark.meta:  # a shard's predictions/<label> merge with `masklens merge`
                write_sidecar(pred_dir, kind.name, benchmark, run.predictions)
            score_file = tmp / "scores" / f"{safe_label(run.name)}.json"
            atomic_write_json(score_file, run.result.to_json())
            result.outputs[run.name] = [root / Path(f).relative_to(tmp) for f in [*written, score_file]]
        atomic_write_json(tmp / "summary.json", {
            "benchmark": kind.name,
            "samples": len(benchmark.samples),
            "subset": benchmark.meta.get("subset"),
            "params": params,
            "models": {
                r.name: {"summary": r.result.summary, "stats": result.stats[r.name],
                         "provenance": r.provenance,
                         "files": [str(x) for x in result.outputs.get(r.name, [])]}
                for r in result.runs
            },
        })


def _segmenter_provenance(segmenter: Any) -> dict[str, Any]:
    try:
        return dict(segmenter.provenance())
    except Exception:  # noqa: BLE001 - provenance is informative; never fail a run on it
        return {}

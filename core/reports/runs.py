"""What a report is made of: a benchmark, one scored run per model, reviewers' verdicts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from masklens.core.review.verdicts import Verdict
from masklens.core.schema import Benchmark, PredictionSet
from masklens.core.scoring.contract import BenchmarkKind, Scorer, ScoreResult


@dataclass
class ModelRun:
    """One model's predictions, scored once (overlaps cached in ``scorer``)."""

    name: str
    predictions: PredictionSet
    scorer: Scorer
    result: ScoreResult
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReportContext:
    """Everything the report sections read."""

    kind: BenchmarkKind
    benchmark: Benchmark
    runs: list[ModelRun]
    params: dict[str, float]
    verdicts: list[Verdict] = field(default_factory=list)
    #: ground-truth corrections (core/review/corrections.py) for the "Ground-truth corrections" section
    corrections: list[Any] = field(default_factory=list)
    title: str = ""
    command: str = ""


def unique_names(names: Sequence[str]) -> list[str]:
    """Make model names unique (``a``, ``a (2)``) so columns and CSV rows stay apart."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


def score_runs(
    kind: BenchmarkKind,
    benchmark: Benchmark,
    predictions: Sequence[PredictionSet],
    params: Mapping[str, Any] | None = None,
    *,
    names: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[ModelRun]:
    """Score each prediction set once; the runs keep their scorers for sweeps."""
    p = kind.resolve_params(params)
    labels = unique_names(list(names) if names else [ps.name for ps in predictions])
    total = len(benchmark.samples) * len(predictions)
    runs = []
    for i, (name, ps) in enumerate(zip(labels, predictions, strict=True)):
        base = i * len(benchmark.samples)
        cb = (lambda d, _n, b=base: progress(b + d, total)) if progress else None
        scorer = Scorer(kind, benchmark, ps, progress=cb)
        runs.append(ModelRun(name, ps, scorer, scorer.rescore(p), provenance=run_provenance(ps)))
    return runs


def run_provenance(ps: PredictionSet) -> dict[str, Any]:
    """Model, checkpoint and its hash, thresholds… as the predictions recorded them."""
    prov = dict(ps.provenance)
    first = next(iter(ps.by_prompt.values()), None)
    if first is not None:
        for k, v in first.provenance.items():
            if k not in prov and k not in ("latency", "latency_ms", "seconds"):
                prov[k] = v
    prov.setdefault("predictions", ps.name)
    prov["prompts_answered"] = len(ps.by_prompt)
    prov["prompts_missing"] = len(ps.missing)
    return prov

"""What every export writes, computed once: the images, the prompts' categories, and per
prediction set each prompt's :class:`~masklens.core.interop.outcomes.PromptOutcomes` and the
per-sample readouts at the chosen parameters, plus the reviewers' current verdicts."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from masklens.core.interop.annotators import annotators, as_annotator
from masklens.core.interop.outcomes import PromptOutcomes, prompt_outcomes, unique_prompts
from masklens.core.review.verdicts import Verdict
from masklens.core.schema import Benchmark, ImageRef, PredictionSet, Prompt, Sample
from masklens.core.scoring.contract import BenchmarkKind, Scorer, ScoreResult


@dataclass(frozen=True)
class ImageEntry:
    """One image of the benchmark (an image shared by several prompts or samples is one entry)."""

    id: int
    ref: ImageRef
    sample_id: str


@dataclass
class PredictionRun:
    """One prediction set: its label, the per-prompt outcomes and the kind's score at the params."""

    label: str
    predictions: PredictionSet
    outcomes: dict[str, PromptOutcomes]
    result: ScoreResult
    #: annotator key -> prompt id -> the outcomes against that annotator's ground truth (every
    #: annotator of a benchmark with several, the first included; empty otherwise)
    by_annotator: dict[str, dict[str, PromptOutcomes]] = field(default_factory=dict)

    @property
    def attr(self) -> str:
        """The label as an attribute name (``eval_<field>`` on ground-truth annotations)."""
        return field_name(self.label)


@dataclass
class ExportTable:
    kind: BenchmarkKind
    benchmark: Benchmark
    params: dict[str, float]
    t: float
    tau: float
    images: list[ImageEntry]
    image_of: dict[tuple[str, str], ImageEntry]  # (sample id, image key) -> entry
    prompts: list[tuple[Sample, Prompt]]
    category_of: dict[str, int]  # prompt text -> category id
    runs: list[PredictionRun]
    verdicts: list[Verdict] = field(default_factory=list)
    #: the annotators' ground-truth keys (SA-Co/Gold: ``gt0``, ``gt1``, …; first: the prompts'
    #: own) when a benchmark has several, else empty (:mod:`~masklens.core.interop.annotators`)
    annotators: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_sample: dict[str, list[Verdict]] = {}
        for v in self.verdicts:
            self._by_sample.setdefault(v.sample_id, []).append(v)

    def verdicts_of(self, sample_id: str, prompt_id: str | None = None) -> str:
        """``reviewer:verdict`` of a sample (all of them, or those on the whole sample and on one
        prompt of it), ``; ``-joined as the report's samples.csv writes them; prompt-level
        verdicts are marked ``@prompt``."""
        return "; ".join(
            f"{v.reviewer}:{v.verdict}" + (f"@{v.prompt_id}" if v.prompt_id else "")
            for v in self._by_sample.get(sample_id, ())
            if prompt_id is None or v.prompt_id in ("", prompt_id)
        )

    def prompts_of(self, annotator: str | None = None) -> list[tuple[Sample, Prompt]]:
        """The prompts, scored against ``annotator``'s ground truth (None: their own)."""
        if annotator is None:
            return self.prompts
        return [(s, as_annotator(s, p, annotator)) for s, p in self.prompts]

    def outcomes_of(self, run: PredictionRun, annotator: str | None = None) -> dict[str, PromptOutcomes]:
        return run.outcomes if annotator is None else run.by_annotator[annotator]


def field_name(label: str) -> str:
    """``label`` with every character outside ``[A-Za-z0-9_]`` replaced by ``_``."""
    return re.sub(r"\W", "_", label, flags=re.ASCII) or "predictions"


def _image_identity(sample: Sample, key: str, ref: ImageRef) -> str:
    return str(Path(ref.path).resolve()) if ref.path is not None else f"{sample.id}\0{key}"


def build_table(
    kind: BenchmarkKind,
    benchmark: Benchmark,
    prediction_sets: Sequence[tuple[str, PredictionSet]],
    params: Mapping[str, float],
    t: float,
    tau: float,
    verdicts: Sequence[Verdict] = (),
) -> ExportTable:
    """Score each prediction set at ``params`` and label every instance at (``t``, ``tau``)."""
    images: list[ImageEntry] = []
    by_identity: dict[str, ImageEntry] = {}
    image_of: dict[tuple[str, str], ImageEntry] = {}
    for sample in benchmark.samples:
        for key, ref in sample.images.items():
            ident = _image_identity(sample, key, ref)
            if ident not in by_identity:
                by_identity[ident] = ImageEntry(len(images) + 1, ref, sample.id)
                images.append(by_identity[ident])
            image_of[(sample.id, key)] = by_identity[ident]
    prompts = list(unique_prompts(benchmark))
    category_of: dict[str, int] = {}
    for _, prompt in prompts:
        category_of.setdefault(prompt.text, len(category_of) + 1)
    labels = [label for label, _ in prediction_sets]
    if len(set(map(field_name, labels))) != len(labels):
        from masklens.core.errors import MasklensError

        raise MasklensError(f"prediction sets need distinct labels, got {', '.join(labels)}",
                            hint="name them with --label")
    keys = annotators(kind.name, benchmark)
    runs = []
    for label, preds in prediction_sets:
        outcomes = {p.id: prompt_outcomes(s, p, preds.get(p.id), t, tau) for s, p in prompts}
        by_annotator = {
            key: {p.id: prompt_outcomes(s, a, preds.get(p.id), t, tau)
                  for s, p in prompts for a in [as_annotator(s, p, key)]}
            for key in keys
        }
        result = Scorer(kind, benchmark, preds).rescore(params)
        runs.append(PredictionRun(label, preds, outcomes, result, by_annotator))
    return ExportTable(kind, benchmark, dict(params), t, tau, images, image_of, prompts,
                       category_of, runs, list(verdicts), keys)


def sample_counts(table: ExportTable, run: PredictionRun, sample: Sample,
                  annotator: str | None = None) -> dict[str, Any]:
    """TP/FP/FN instance counts of one sample's prompts at (t, τ) (against ``annotator``'s
    ground truth; None: the prompts' own)."""
    totals = {"tp": 0, "fp": 0, "fn": 0}
    outcomes = table.outcomes_of(run, annotator)
    for prompt in sample.prompts:
        for k, v in outcomes[prompt.id].counts().items():
            totals[k] += v
    return totals

"""The scorer contract shared by the CLI, the GUI and the reports.

Each benchmark kind (CAFE, PCS/SA-Co, HalluSegBench, CGEBench, R2SM, OVS) is one
module that subclasses :class:`BenchmarkKind`. Scoring has two stages:

1. :meth:`BenchmarkKind.sample_overlaps` touches masks once per sample and returns
   a small, threshold-free cache (IoUs, areas, prefix-union intersections, …);
2. :meth:`BenchmarkKind.sample_readout` and :meth:`BenchmarkKind.summarize` turn
   those caches into readouts for given parameters (score threshold t, IoU
   threshold τ, α, …) without touching masks again.

:class:`Scorer` keeps the caches so that moving a slider only re-runs stage 2.
"""

from __future__ import annotations

import argparse
import numbers
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from masklens.core import plugins
from masklens.core.errors import MasklensError, argument_name
from masklens.core.plugins import Plugins
from masklens.core.runtime.gc_pause import gc_paused
from masklens.core.schema import Benchmark, Prediction, PredictionSet, Prompt, Sample
from masklens.core.scoring.overlaps import Overlaps, OverlapsT
from masklens.core.scoring.records import Records

Value = float | int | None
PathLike = str | os.PathLike[str]
T = TypeVar("T")


@dataclass(frozen=True)
class ParamSpec:
    """A tunable scoring parameter: its key, CLI flag, default, valid range and meaning."""

    name: str  # key in params dicts, e.g. "score_threshold"
    flag: str  # CLI flag, e.g. "--score-threshold"
    default: float
    minimum: float = 0.0
    maximum: float = 1.0
    help: str = ""
    symbol: str = ""  # short label for sliders, e.g. "t", "τ", "α"


@dataclass
class ScoreResult:
    """What `masklens score --out` writes: benchmark, params, summary per group, per-sample records.

    ``samples``: the per-sample records as a read-only :class:`~masklens.core.scoring.records.Records`
    sequence (a list given is taken as it): each record a dict this result owns, copied from the
    kind's memo when first read; ``list(samples)`` for a plain list."""

    benchmark: str
    params: dict[str, Any]
    summary: dict[str, dict[str, Value]]
    samples: Records
    notes: list[str] = field(default_factory=list)
    #: optional structured results beyond the per-group numbers (e.g. OVS's ambiguity graph)
    extras: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.samples = Records.of(self.samples)

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready result (``samples`` a plain list of this result's records)."""
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "params": self.params,
            "summary": self.summary,
            "samples": list(self.samples),
        }
        if self.notes:
            out["notes"] = self.notes
        if self.extras:
            out["extras"] = self.extras
        return out

    def to_dataframe(self) -> Any:
        """The per-sample records as a pandas DataFrame (pandas is not a dependency of masklens:
        install it to use this)."""
        try:
            import pandas as pd
        except ModuleNotFoundError as exc:
            raise MasklensError("ScoreResult.to_dataframe needs pandas, which is not installed: "
                                "pip install pandas") from exc
        return pd.json_normalize(list(self.samples))

    def __repr__(self) -> str:  # the dataclass's would print every record
        from masklens.core.scoring.result_repr import short_repr

        return short_repr(self)

    def _repr_html_(self) -> str:
        """The summary as a table in a notebook."""
        from masklens.core.scoring.result_repr import html_table

        return html_table(self)


class PredictionsAhead(Protocol):
    """Prediction files being read before their benchmark is loaded
    (:meth:`BenchmarkKind.read_predictions_ahead`), e.g. in a worker process while this one
    loads the ground truth. Whoever started it hands it to :meth:`BenchmarkKind.load_predictions`
    as ``ahead=`` and closes it in any case: a load that failed or was cancelled ends the
    reading; closing one already used does nothing."""

    def close(self) -> None: ...


class BenchmarkKind(ABC, Generic[OverlapsT]):
    """One benchmark family: how to load it, score a sample, and aggregate. Generic over the
    type of one sample's overlaps (stage 1's cache): ``class CafeKind(BenchmarkKind[CafeOverlaps])``.

    A kind keeps no state of its own: one instance serves every thread and every
    :class:`Scorer`. What it derives from a whole overlaps list (stacks, tables) it memoises
    on the :class:`~masklens.core.scoring.overlaps.Overlaps` a Scorer passes
    (:func:`~masklens.core.scoring.overlaps.derived`). Optional capabilities are the Protocols
    below (:class:`SharedGroundTruth`, :class:`InstanceMatches`)."""

    #: registry key and CLI word, e.g. "cafe"
    name: str = ""
    #: human-readable name, e.g. "CAFE"
    title: str = ""
    #: summary group names in display order, e.g. ("Overall", "SM", "CC", "OC")
    groups: tuple[str, ...] = ()
    #: what the kind calls a sample's group (:attr:`Sample.group <masklens.core.schema.Sample.group>`)
    #: wherever a user reads it: the column of the CSV exports and the report's samples.csv, the
    #: image field of the COCO and FiftyOne exports, the report's table headers (CAFE: "edit_type")
    group_name: str = "group"
    #: tunable parameters (sliders in the GUI, flags on the CLI)
    params: tuple[ParamSpec, ...] = ()
    #: metric definitions for tooltips and docs: key -> one-line definition
    metric_help: Mapping[str, str] = {}
    #: fields that mark a result record as this kind's (besides image_id), e.g. CGEBench's
    #: "level": another kind reading such a file says so (core/scoring/prediction_check.py)
    result_keys: tuple[str, ...] = ()
    #: whether the kind's prediction files keep each instance's score (the scorer applies the
    #: threshold), so `predict` keeps low-scored instances by default; False for a format of
    #: plain masks (HalluSegBench's PNGs), where the model's own threshold decides
    scored_predictions: bool = True

    # ------------------------------------------------------------ loading
    @abstractmethod
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the benchmark's file arguments (ground truth, predictions) to a CLI parser."""

    @abstractmethod
    def load_benchmark(self, *args: Any, **files: Any) -> Benchmark:
        """Load the ground truth named by keyword arguments named as the destinations of
        :meth:`add_arguments` (``ann=``, ``gt=[…]``, ``data=``, ``images=``…). Callers may pass
        every file argument of the kind; a loader ignores those it does not read.

        ``*args: Any, **files: Any`` is the signature a type checker reads as "any parameters":
        each kind declares its own keywords, required or not, and callers pass them by name."""

    @abstractmethod
    def load_predictions(self, benchmark: Benchmark, /, *args: Any, **files: Any) -> PredictionSet:
        """Load the predictions named by keyword arguments (``pred=``, ``pred_dir=``…, as for
        :meth:`load_benchmark`; the kind declares its own), keyed by prompt id. A kind that
        reads ahead (:meth:`read_predictions_ahead`) also takes ``ahead=``, the handle that
        gave for the same files; it is passed only where there is one."""

    def read_predictions_ahead(self, **files: Any) -> PredictionsAhead | None:
        """Start reading the prediction files named in ``files`` (the keywords of
        :meth:`load_predictions`; ground-truth ones may be there too) before the benchmark is
        loaded, where that saves time (large files), for :meth:`load_predictions` to finish
        once it is; None (the default) where the kind reads them only then."""
        return None

    def write_predictions(
        self, benchmark: Benchmark, predictions: PredictionSet, out: Path
    ) -> list[Path]:
        """Write predictions in the benchmark's own prediction format (read back by
        :meth:`load_predictions`); returns the files written. Used by `masklens predict`."""
        raise NotImplementedError(f"{self.name} cannot write predictions yet")

    # ------------------------------------------------------------ corrections
    #: ground truths that repeat another's instances: key -> the ground truth whose instances
    #: they are (CAFE: "target" -> "pos_entry"); a correction of one lands in the other
    gt_aliases: Mapping[str, str] = {}

    def corrected_sample(self, sample: Sample) -> Sample:
        """A sample after ground-truth corrections (core/review/corrections.py), fixed up for
        what the kind derives from the instances (as its loader would); itself by default."""
        return sample

    def write_corrected(
        self, original: Benchmark, corrected: Benchmark, out: Path, files: Mapping[str, Any]
    ) -> list[Path]:
        """Write ``corrected`` (``original`` with corrections applied) in the kind's own format
        at ``out``, never over the input ``files``; returns the files written, main one first."""
        raise MasklensError(f"{self.title or self.name} cannot write corrected ground truth yet",
                            hint="score with the corrections applied in Python "
                                 "(masklens.core.review.corrections.corrected_benchmark)")

    def __repr__(self) -> str:
        """A short summary: name and title, groups, parameters with their defaults."""
        params = ", ".join(f"{p.name}={p.default:g}" for p in self.params) or "–"
        return "\n".join([
            f"BenchmarkKind {self.name!r} ({self.title or self.name})",
            f"  groups:      {', '.join(self.groups) or '–'}",
            f"  parameters:  {params}",
        ])

    # ------------------------------------------------------------ interop
    def coco_units(self, prompts: Sequence[tuple[Sample, Prompt]]) -> list[tuple[Sample, Prompt]] | None:
        """The prompts in the order of their COCO image ids when the kind's AP evaluates each
        prompt as an image of its own, class-agnostic (the COCO export then writes one image per
        prompt and one category, so that plain ``COCOeval`` reproduces the kind's AP); None
        (the default): one COCO image per image and one category per prompt text."""
        return None

    # ------------------------------------------------------------ scoring
    @abstractmethod
    def sample_overlaps(self, sample: Sample, predictions: PredictionSet) -> OverlapsT:
        """Threshold-free cache for one sample; the only stage that touches masks."""

    def all_overlaps(
        self, samples: list[Sample], predictions: PredictionSet, progress: Progress | None = None
    ) -> list[OverlapsT]:
        """:meth:`sample_overlaps` of consecutive ``samples`` (same list, same order, same first
        error); a kind overrides it to batch the mask work across samples. ``progress(done)``
        is called as the samples' overlaps are done (here after each sample; a bulk stage at
        its own steps, the last with every sample done) and may raise to cancel."""
        out = []
        for done, sample in enumerate(samples, 1):
            out.append(self.sample_overlaps(sample, predictions))
            if progress is not None:
                progress(done)
        return out

    @abstractmethod
    def sample_readout(
        self, sample: Sample, overlaps: OverlapsT, params: Mapping[str, float]
    ) -> Mapping[str, Any]:
        """Per-sample record (JSON-ready, no NaN) for given parameters."""

    def sample_readouts(
        self, samples: Sequence[Sample], overlaps: Sequence[OverlapsT], params: Mapping[str, float]
    ) -> Sequence[Mapping[str, Any]]:
        """Every sample's record for ``params`` (what :meth:`Scorer.readouts` calls): a list of
        fresh dicts, or a :class:`~masklens.core.scoring.records.Records` over memoised ones (same
        records). The default calls :meth:`sample_readout` per sample; a kind may vectorise it."""
        return [self.sample_readout(s, o, params) for s, o in zip(samples, overlaps, strict=True)]

    @abstractmethod
    def summarize(
        self,
        samples: Sequence[Sample],
        overlaps: Sequence[OverlapsT],
        readouts: Sequence[Mapping[str, Any]],
        params: Mapping[str, float],
    ) -> dict[str, dict[str, Value]]:
        """Aggregate metrics per group for given parameters."""

    # ------------------------------------------------------------ helpers
    def default_params(self) -> dict[str, float]:
        return {p.name: p.default for p in self.params}

    def resolve_params(self, given: Mapping[str, Any] | None = None) -> dict[str, float]:
        """Defaults overlaid with the given values (unknown keys and values outside a
        parameter's valid range are errors)."""
        out = self.default_params()
        specs = {p.name: p for p in self.params}
        for key, value in (given or {}).items():
            if value is None:
                continue
            if key not in out:
                raise MasklensError(f"unknown parameter '{key}' for {self.title or self.name}",
                                    hint=f"its parameters: {', '.join(argument_name(p.flag) for p in self.params)}")
            spec = specs.get(key)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):  # "0.7" is no number
                raise MasklensError(f"{argument_name(spec.flag) if spec else key} must be a number, "
                                    f"got {value!r} ({type(value).__name__})")
            out[key] = float(value)
            if spec is not None and not spec.minimum <= out[key] <= spec.maximum:  # NaN fails too
                raise MasklensError(
                    f"{argument_name(spec.flag)} must be a number in [{spec.minimum:g}, {spec.maximum:g}], "
                    f"got {value}")
        return out

    def notes(self, samples: Sequence[Sample], overlaps: Sequence[OverlapsT]) -> list[str]:
        """Optional notes about the run (e.g. how many predictions were missing)."""
        return []

    def extras(
        self,
        samples: Sequence[Sample],
        overlaps: Sequence[OverlapsT],
        readouts: Sequence[Mapping[str, Any]],
        params: Mapping[str, float],
    ) -> dict[str, Any]:
        """Optional JSON-ready structured results (written under "extras"); none by default."""
        return {}


@runtime_checkable
class SharedGroundTruth(Protocol):
    """A kind whose samples share ground truths (CAFE: a positive image paired with several
    negatives): a correction of one holds in every sample that loads it
    (core/review/corrections.py)."""

    def ground_truth_home(self, sample: Sample, gt_key: str) -> Hashable | None:
        """What ``sample``'s ground truth ``gt_key`` is loaded from (equal for every sample
        that loads it), or None when no other sample loads it."""
        ...


@runtime_checkable
class InstanceMatches(Protocol):
    """A kind that can say which ground-truth instance each predicted instance of one sample
    is matched to (the readout card's GT / IoU columns)."""

    def instance_matches(
        self, sample: Sample, prediction: Prediction | None, params: Mapping[str, float], annotator: int
    ) -> list[dict[str, Any]]:
        """Per predicted instance (file order): ``instance``, ``score``, ``accepted``, the
        matched ground-truth instance ``gt`` of ``annotator`` (None when unmatched) and ``iou``."""
        ...


#: samples per run of a bulk stage 1 that reports progress after each run
OVERLAP_CHUNK = 512

#: a stage 1's progress: how many samples' overlaps are done
Progress = Callable[[int], None]


def overlap_chunks(n: int, size: int) -> list[tuple[int, int]]:
    """``[start, end)`` runs of ``size`` covering ``range(n)``; for ``size`` > 1 a one-sample
    tail joins the run before it (a kind's bulk stage gathers whole runs only of two or more)."""
    bounds = list(range(0, n, max(1, size))) + [n]
    if size > 1 and len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
        del bounds[-2]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def in_runs(
    bulk: Callable[[list[Sample]], list[OverlapsT]], samples: list[Sample], progress: Progress | None
) -> list[OverlapsT]:
    """A bulk stage 1 (``bulk(samples)``) over runs of :data:`OVERLAP_CHUNK` samples with
    ``progress`` after each; all samples in one run without it."""
    if progress is None:
        return bulk(samples)
    out: list[OverlapsT] = []
    for start, end in overlap_chunks(len(samples), OVERLAP_CHUNK):
        out.extend(bulk(samples[start:end]))
        progress(end)
    return out


def _progress_of(progress: Callable[[int, int], None], total: int, done: int) -> None:
    progress(done, total)


class Scorer(Generic[OverlapsT]):
    """Scores one benchmark against one prediction set, caching the overlaps.

    ``rescore(params)`` re-derives every readout and the summary from the cache.
    :attr:`overlaps` is an :class:`~masklens.core.scoring.overlaps.Overlaps`: what the kind
    derives from the whole list is memoised there, for this scorer only (a list assigned to
    it becomes one).
    """

    def __init__(
        self,
        kind: BenchmarkKind[OverlapsT],
        benchmark: Benchmark,
        predictions: PredictionSet,
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.kind = kind
        self.benchmark = benchmark
        self.predictions = predictions
        samples = benchmark.samples
        n = len(samples)
        done = None if progress is None else partial(_progress_of, progress, n)
        with gc_paused():  # many small acyclic objects (see masklens.core.runtime.gc_pause)
            overlaps = kind.all_overlaps(samples, predictions, done)
        self._overlaps = Overlaps(overlaps)

    def __repr__(self) -> str:
        """A short summary: the kind, the benchmark and the prediction set scored against it."""
        return "\n".join([
            f"Scorer({self.kind.name})",
            f"  benchmark:    {self.benchmark.name!r} ({len(self.benchmark.samples)} samples)",
            f"  predictions:  {self.predictions!r}",
            f"  parameters:   {', '.join(f'{k}={v:g}' for k, v in self.kind.default_params().items()) or '–'}"
            " (defaults; rescore(…) takes others)",
        ])

    @property
    def overlaps(self) -> Overlaps[OverlapsT]:
        """Every sample's threshold-free cache, in sample order."""
        return self._overlaps

    @overlaps.setter
    def overlaps(self, value: Iterable[OverlapsT]) -> None:
        self._overlaps = Overlaps(value)  # a memo of its own: never another scorer's

    def update_sample(self, index: int, predictions: PredictionSet) -> None:
        """Recompute one sample's cache after its predictions changed (e.g. a live prompt)."""
        self._overlaps[index] = self.kind.sample_overlaps(self.benchmark.samples[index], predictions)

    def readouts(self, params: Mapping[str, Any] | None = None) -> Records:
        """Every sample's record for ``params`` (as :attr:`ScoreResult.samples`)."""
        p = self.kind.resolve_params(params)
        with gc_paused():
            return Records.of(self.kind.sample_readouts(self.benchmark.samples, self._overlaps, p))

    def rescore(self, params: Mapping[str, Any] | None = None) -> ScoreResult:
        p = self.kind.resolve_params(params)
        samples, overlaps = self.benchmark.samples, self._overlaps
        with gc_paused():  # records: many small acyclic objects
            readouts = self.kind.sample_readouts(samples, overlaps, p)
        summary = self.kind.summarize(samples, overlaps, readouts, p)
        return ScoreResult(
            benchmark=self.kind.name,
            params=dict(p),
            summary=summary,
            samples=Records.of(readouts),
            notes=self.kind.notes(samples, overlaps),
            extras=self.kind.extras(samples, overlaps, readouts, p),
        )


def score(
    kind: BenchmarkKind[Any],
    benchmark: Benchmark,
    predictions: PredictionSet,
    params: Mapping[str, Any] | None = None,
) -> ScoreResult:
    """One-shot scoring (overlaps + readouts + summary)."""
    return Scorer(kind, benchmark, predictions).rescore(params)


# ------------------------------------------------------------------ registry
#: the installed kinds: entry points of the group ``masklens.kinds`` (masklens' own included,
#: see pyproject.toml), each naming a BenchmarkKind instance; imported on first use
# mypy rejects an abstract class for type[T] even where it is only an isinstance() target
# (python/mypy#4717); instance_of never instantiates it
KINDS: Plugins[BenchmarkKind[Any]] = Plugins(
    plugins.KINDS, "benchmark kind", plugins.instance_of(BenchmarkKind)  # type: ignore[type-abstract]
)


def register_kind(name: str, kind: str | BenchmarkKind[Any]) -> None:
    """Add a benchmark kind in this process (a notebook, a test): an instance, or
    ``"module:attribute"`` (``"module"`` alone: its ``KIND``), imported on first use. An installed
    package declares an entry point in ``masklens.kinds`` instead (docs/extending.md)."""
    if isinstance(kind, str) and ":" not in kind:
        kind = f"{kind}:KIND"
    KINDS.add(name, kind)


def kind_module(name: str) -> str | None:
    """The module a kind is defined in (``None`` for a kind added as an object)."""
    return KINDS.module(name)


def kind_names() -> list[str]:
    return KINDS.names()


def get_kind(name: str) -> BenchmarkKind[Any]:
    """The benchmark kind registered under ``name``; unknown names raise MasklensError."""
    try:
        return KINDS.get(name)
    except KeyError:
        raise MasklensError(
            f"unknown benchmark kind '{name}'", hint=f"known kinds: {', '.join(kind_names())}"
        ) from None


def available_kinds() -> list[BenchmarkKind[Any]]:
    """Every kind that imports. A kind whose module is missing or broken (a plug-in mid-edit)
    is skipped with one warning on stderr, so it cannot take the other commands down."""
    return list(KINDS.available().values())

"""The GUI's shared state, passed to panels and to the review/evaluate/report dialogs.

Attributes (read them; change them through the methods so that views follow):

* ``kind`` – the :class:`~masklens.core.scoring.contract.BenchmarkKind` of the open benchmark (or None)
* ``benchmark`` – the loaded :class:`~masklens.core.schema.Benchmark` (or None)
* ``namespace`` / ``argv`` – the parsed arguments / command-line words it was opened with
  (``masklens score <kind> <argv…>`` reproduces the scoring)
* ``prediction_sets`` – name → :class:`~masklens.core.schema.PredictionSet` (replay files, model runs)
* ``scorers`` – name → :class:`~masklens.core.scoring.contract.Scorer` (cached overlaps per prediction set)
* ``active`` – name of the prediction set shown on the canvas and in the browser (or None)
* ``params`` – current scoring parameters (slider values), e.g. ``{"score_threshold": 0.5}``
* ``readouts`` – name → per-sample readout records for ``params`` (same order as the samples);
  always holds the active set; a slider move re-derives only that one, the others are derived
  again when they become active (use ``scorers[name].readouts(params)`` for any set)
* ``index`` – index of the current sample in ``benchmark.samples``
* ``live`` – typed-prompt results (:class:`LiveResult`) of this session, newest last
* ``review_store`` – a ``masklens.core.review.store.ReviewStore`` when one is open, else None
* ``model`` – the model (backend name) selected in the prompt bar
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from PySide6.QtCore import QObject, Signal

from masklens.core.errors import MasklensError
from masklens.core.schema import Benchmark, Prediction, PredictionSet, Prompt, Sample
from masklens.core.scoring.contract import BenchmarkKind, Scorer
from masklens.core.scoring.records import Records


@dataclass
class LiveResult:
    """One typed prompt run on one model: the prediction and both readouts."""

    id: int
    sample_id: str
    prompt: Prompt
    model: str
    prediction: Prediction
    generic: dict[str, Any]
    benchmark: dict[str, Any] | None
    replaced: str | None = None  # id of the benchmark prompt it replaces (None: none)
    shown: bool = True
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        from masklens.gui.canvas.visual_prompts import describe

        lvl = f" p{self.prompt.level}" if self.prompt.level is not None else ""
        drawn = describe(self.prompt.meta)
        return (f"{self.model}: “{self.prompt.text}” ({self.prompt.role.value}{lvl})"
                + (f" + {drawn}" if drawn else ""))


class AppState(QObject):
    """Current benchmark, prediction sets, parameters and sample; emits when they change."""

    benchmarkChanged = Signal()
    sampleChanged = Signal(int)
    predictionsChanged = Signal()
    readoutsChanged = Signal()
    liveChanged = Signal()
    paramsShown = Signal()  # new parameters derived for the sample shown only (set_params_shown)
    #: a sample switch was refused by a leave check (the index kept): views put their selection back
    sampleKept = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.kind: BenchmarkKind | None = None
        self.benchmark: Benchmark | None = None
        self.namespace: argparse.Namespace | None = None
        self.argv: list[str] = []
        self.prediction_sets: dict[str, PredictionSet] = {}
        self.set_argv: dict[str, list[str]] = {}  # set name -> prediction arguments it was read from
        self.scorers: dict[str, Scorer] = {}
        self.active: str | None = None
        self.params: dict[str, float] = {}
        self.readouts: dict[str, Records] = {}
        #: counts the times the readouts' inputs changed (benchmark, ground truth, values, samples'
        #: measured figures): readouts derived elsewhere are taken only at the count they began at
        self.derivation = 0
        self.index = 0
        self.live: list[LiveResult] = []
        self.review_store: Any = None
        self.model = "demo"
        self._live_ids = 0
        self._leave_checks: list[Callable[[str], bool]] = []

    # ------------------------------------------------------------ leaving
    def add_leave_check(self, check: Callable[[str], bool]) -> None:
        """``check(what)`` is asked before the sample shown is left — for another sample, another
        benchmark or quitting (``what`` says which, in words) — and answers whether that may
        happen (e.g. an unaccepted edit the user chose to keep: False)."""
        self._leave_checks.append(check)

    def may_leave(self, what: str) -> bool:
        """Whether every leave check lets the sample shown go for ``what`` (see add_leave_check)."""
        return all(check(what) for check in self._leave_checks)

    # ------------------------------------------------------------ benchmark
    def set_benchmark(
        self, kind: BenchmarkKind, benchmark: Benchmark, namespace: argparse.Namespace | None,
        argv: list[str] | None = None, params: dict[str, float] | None = None,
    ) -> None:
        self.kind, self.benchmark = kind, benchmark
        self.derivation += 1
        self.namespace, self.argv = namespace, list(argv or [])
        self.prediction_sets, self.scorers, self.readouts, self.set_argv = {}, {}, {}, {}
        self.active, self.index, self.live = None, 0, []
        try:  # remembered values; out of range (e.g. from an older version) → the defaults
            self.params = kind.resolve_params({k: v for k, v in (params or {}).items()
                                               if k in kind.default_params()})
        except MasklensError:
            self.params = kind.default_params()
        self.benchmarkChanged.emit()
        self.sampleChanged.emit(0)

    def replace_ground_truth(self, benchmark: Benchmark, scorers: dict[str, Scorer]) -> None:
        """The same benchmark with other ground truth (e.g. the review store's corrections
        applied, or the original back): ``scorers`` replace those of their sets, the active set's
        readouts are derived again, and the sample shown is drawn again. The kind, sets, index,
        parameters and typed prompts stay; ``benchmarkChanged`` is not emitted."""
        self.benchmark = benchmark
        self.derivation += 1
        self.scorers.update(scorers)
        self.readouts = ({self.active: self.scorers[self.active].readouts(self.params)}
                         if self.active in self.scorers else {})
        self.readoutsChanged.emit()
        self.sampleChanged.emit(self.index)  # the canvas draws the (corrected) masks again

    def set_review_store(self, store: Any) -> None:
        """The review store open for this benchmark (None: none); the caller closes the previous one."""
        self.review_store = store

    def set_model(self, name: str) -> None:
        """The model (backend name) picked for typed prompts."""
        self.model = name

    def add_predictions(self, name: str, predictions: PredictionSet, scorer: Scorer, *,
                        argv: list[str] | None = None,
                        readouts: tuple[int, Records] | None = None) -> None:
        """Attach a scored prediction set (becomes active) and derive its readouts; ``argv``: the
        prediction arguments it was read from (remembered with the session); ``readouts``: its
        readouts already derived (in the worker pool) when :attr:`derivation` was this count,
        used only if nothing they depend on changed since (else derived again here)."""
        if argv:
            self.set_argv[name] = list(argv)
        self.prediction_sets[name] = predictions
        self.scorers[name] = scorer
        ready = readouts is not None and readouts[0] == self.derivation
        self.readouts[name] = readouts[1] if readouts is not None and ready else scorer.readouts(self.params)
        self.active = name
        for r in self.live:
            self._rescore_live(r)
        self.predictionsChanged.emit()
        self.readoutsChanged.emit()

    def set_order(self) -> list[str]:
        """Set names as the window letters them: A = the active set, then the others in the order
        they are listed (the toolbar's order, kept over restarts); reports use the same order."""
        names = list(self.prediction_sets)
        if self.active in names:
            names.remove(self.active)
            names.insert(0, self.active)
        return names

    def reorder_sets(self, order: list[str]) -> bool:
        """List the sets in ``order`` (names not in it keep their place after those in it), e.g. a
        restored session's order whatever order its files finished loading in. True if it moved."""
        rank = {n: i for i, n in enumerate(order)}
        names = sorted(self.prediction_sets, key=lambda n: (rank.get(n, len(rank)), 0))
        if names == list(self.prediction_sets):
            return False
        self.prediction_sets = {n: self.prediction_sets[n] for n in names}
        self.scorers = {n: self.scorers[n] for n in names if n in self.scorers}
        return True

    def set_active(self, name: str | None) -> None:
        if name != self.active and (name is None or name in self.prediction_sets):
            self.active = name
            if name is not None and name not in self.readouts:  # dropped by set_params
                self.readouts[name] = self.scorers[name].readouts(self.params)
            for r in self.live:  # their other prompts are answered from the active set
                self._rescore_live(r)
            self.predictionsChanged.emit()
            self.readoutsChanged.emit()

    def set_params(self, params: dict[str, float]) -> None:
        """New slider values: the active set's readouts re-derived from cached overlaps (no mask
        touched); the other sets' are dropped and re-derived when one becomes active."""
        if self.kind is None:
            return
        self.params = self.kind.resolve_params(params)
        self.derivation += 1
        self.readouts = ({self.active: self.scorers[self.active].readouts(self.params)}
                         if self.active in self.scorers else {})
        for r in self.live:
            self._rescore_live(r)
        self.readoutsChanged.emit()

    def set_params_shown(self, params: dict[str, float]) -> None:
        """New slider values, derived at once for the sample shown only (one readout, no scan):
        the other samples keep their previous readouts until :meth:`install_readouts` brings
        the ones a worker derived for these values. Emits ``paramsShown`` (a redraw)."""
        if self.kind is None:
            return
        self.params = self.kind.resolve_params(params)
        name, sample = self.active, self.sample
        rows = self.readouts.get(name or "")
        if rows is not None and sample is not None and name in self.scorers:
            scorer, i = self.scorers[name], self.index
            rec = self.kind.sample_readouts([sample], [scorer.overlaps[i]], self.params)[0]
            self.readouts = {name: Records.of(rows).replaced(i, cast(dict[str, Any], rec))}
        for r in self.live:
            self._rescore_live(r)
        self.paramsShown.emit()

    def install_readouts(self, name: str, params: dict[str, float], readouts: Records) -> bool:
        """Readouts of set ``name`` derived elsewhere for ``params``; taken only while they are
        still the values shown (a later slider move wins). Emits ``readoutsChanged``."""
        if name != self.active or dict(params) != dict(self.params):
            return False
        from masklens.gui.window.disposal import release_later

        release_later(*self.readouts.values())  # 100,000 records freed off the GUI thread
        self.readouts = {name: readouts}
        self.readoutsChanged.emit()
        return True

    @property
    def images_dir(self) -> str | None:
        """The benchmark's images folder (its kind's ``--images`` argument; None when it takes none)."""
        return getattr(self.namespace, "images", None)  # an argparse namespace: the kind's own arguments

    @property
    def score_threshold(self) -> float:
        """t of the kind (0 when the kind has none, e.g. OVS: every instance counts)."""
        return float(self.params.get("score_threshold", 0.0))

    # ------------------------------------------------------------ samples
    @property
    def sample(self) -> Sample | None:
        if self.benchmark is None or not self.benchmark.samples:
            return None
        return self.benchmark.samples[self.index]

    def set_index(self, index: int) -> None:
        if self.benchmark is None or not self.benchmark.samples:
            return
        index = max(0, min(index, len(self.benchmark.samples) - 1))
        if index == self.index:
            return
        if not self.may_leave("moving to another sample"):
            self.sampleKept.emit(self.index)
            return
        self.index = index
        self.sampleChanged.emit(index)

    def predictions(self) -> PredictionSet | None:
        return self.prediction_sets.get(self.active) if self.active else None

    def readout(self, index: int | None = None) -> dict[str, Any] | None:
        rows = self.readouts.get(self.active or "")
        i = self.index if index is None else index
        return rows[i] if rows is not None and i < len(rows) else None

    # ------------------------------------------------------------ live prompts
    def add_live(self, result: LiveResult) -> None:
        self._live_ids += 1
        result.id = self._live_ids
        self.live.append(result)
        self.liveChanged.emit()

    def set_live_shown(self, result_id: int, shown: bool) -> None:
        """Show or hide typed-prompt result ``result_id`` in the Compare tab."""
        for r in self.live:
            if r.id == result_id:
                r.shown = shown
        self.liveChanged.emit()

    def live_for_sample(self, sample_id: str | None = None) -> list[LiveResult]:
        sid = sample_id or (self.sample.id if self.sample else None)
        return [r for r in self.live if r.sample_id == sid]

    def _rescore_live(self, r: LiveResult) -> None:
        """New parameters (or a new active prediction set) for a typed-prompt result: the benchmark
        readout is re-derived from its cached overlaps unless the other prompts' predictions changed;
        the generic readout (which touches masks) only when t moved."""
        from masklens.core.scoring.readout import (
            benchmark_overlaps,
            benchmark_readout,
            generic_readout,
        )

        sample = self.benchmark.sample(r.sample_id) if self.benchmark else None
        if sample is None or self.kind is None:
            return
        base = self.predictions()
        if r.extra.get("base") is not base or "staged" not in r.extra:
            r.extra["staged"] = benchmark_overlaps(self.kind, sample, r.prompt, r.prediction, base)
            r.extra["base"] = base
        if r.generic.get("score_threshold") != self.score_threshold:  # it depends on t only
            r.generic = generic_readout(sample, r.prompt, r.prediction, self.score_threshold)
        r.benchmark = benchmark_readout(self.kind, sample, r.prompt, r.prediction, self.params, base,
                                        cached=r.extra["staged"])

"""Readouts a worker derived while a prediction set was scored are installed only if nothing they
depend on changed meanwhile: the window's edit-leakage measure (HalluSegBench) annotates the
samples and re-derives the readouts while the scoring job may still be running; its readouts,
derived before, would lack the measured figures."""

from __future__ import annotations

import toykind

from masklens.core.scoring.contract import Scorer
from masklens.gui.state import AppState


def _opened(tmp_path, monkeypatch):
    toykind.install(monkeypatch)
    kind = toykind.KIND
    files = toykind.write_toy(tmp_path / "toy", n=6, images=False)
    bench = kind.load_benchmark(ann=str(files["ann"]))
    state = AppState()
    state.set_benchmark(kind, bench, None)
    preds = kind.load_predictions(bench, pred=str(files["pred"]))
    return state, preds, Scorer(kind, bench, preds)


def test_readouts_derived_before_a_change_are_derived_again(tmp_path, monkeypatch):
    state, preds, scorer = _opened(tmp_path, monkeypatch)
    began = state.derivation
    early = scorer.readouts(state.params)  # the worker's, at the job's start
    state.set_params(dict(state.params))  # meanwhile: e.g. the samples' measured figures arrived
    state.add_predictions("A", preds, scorer, readouts=(began, early))
    assert state.readouts["A"] is not early and list(state.readouts["A"]) == list(early)


def test_readouts_derived_for_the_inputs_of_now_are_taken_as_they_are(tmp_path, monkeypatch):
    state, preds, scorer = _opened(tmp_path, monkeypatch)
    ready = scorer.readouts(state.params)
    state.add_predictions("A", preds, scorer, readouts=(state.derivation, ready))
    assert state.readouts["A"] is ready
